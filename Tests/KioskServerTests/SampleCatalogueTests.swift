import KioskModels
import KioskTestSupport
import Testing
@testable import KioskServer
@testable import KioskConfig

/// The tests below the server use `SampleCatalogue` for the repository's configuration: it must stay so.
@Suite struct SampleCatalogueTests {
    @Test func theSampleCatalogueIsTheConfigurations() throws {
        let configuration = try KioskConfiguration.load(from: TestKiosk.repositoryRoot + "/Config/kiosk.yaml")
        var catalogue = configuration.catalogue
        #expect(catalogue.accounts.map(\.label) == ["api_client:kiosk", "publisher:publisher"])
        catalogue.accounts = []
        #expect(catalogue == SampleCatalogue.catalogue, "the accounts apart")
        #expect(configuration.webKiosks == SampleCatalogue.webKiosks)
        #expect(configuration.signIn.maxFailures == SignInPolicy().maxFailures
                && configuration.signIn.windowSeconds == SignInPolicy().windowSeconds)
    }
}
