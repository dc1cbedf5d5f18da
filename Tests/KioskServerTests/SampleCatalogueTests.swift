import KioskModels
import KioskTestSupport
import Testing
@testable import KioskServer
@testable import KioskConfig

/// The tests below the server use `SampleCatalogue` for the repository's configuration: it must stay so.
@Suite struct SampleCatalogueTests {
    @Test func theSampleCatalogueIsTheConfigurations() throws {
        let configuration = try KioskConfiguration.load(from: TestKiosk.repositoryRoot + "/Config/kiosk.yaml")
        #expect(configuration.catalogue == SampleCatalogue.catalogue)
        #expect(configuration.webKiosks == SampleCatalogue.webKiosks)
        #expect(configuration.signIn.maxFailures == SignInPolicy().maxFailures
                && configuration.signIn.windowSeconds == SignInPolicy().windowSeconds)
    }
}
