import Foundation
import KioskEditions
import Testing
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles

/// `links.expiry_bucket_seconds`: its default, its bounds, and that the signer gets it.
@Suite struct LinkConfigurationTests {
    func load(_ links: String) throws -> KioskConfiguration {
        let directory = temporaryDirectory()
        let path = try writeTestConfiguration(in: directory) {
            $0.replacingOccurrences(of: "  lifetime_seconds: 3600\n", with: links)
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        return try KioskConfiguration.load(from: path)
    }

    @Test func theExpiryBucketDefaultsTo300AndStaysWithinTheLifetime() throws {
        #expect(try load("  lifetime_seconds: 3600\n").links.expiryBucketSeconds == 300)
        #expect(try load("  lifetime_seconds: 3600\n  expiry_bucket_seconds: 0\n").links.expiryBucketSeconds == 0)
        #expect(try load("  lifetime_seconds: 600\n  expiry_bucket_seconds: 600\n").links.expiryBucketSeconds == 600)
        for (links, value) in [("  lifetime_seconds: 600\n  expiry_bucket_seconds: 601\n", "601"),
                               ("  lifetime_seconds: 3600\n  expiry_bucket_seconds: -1\n", "-1")] {
            #expect {
                try load(links)
            } throws: { error in
                let description = "\(error)"
                return description.contains("links.expiry_bucket_seconds") && description.contains("got \(value)")
            }
        }
    }

    @Test func theConfiguredBucketReachesTheSigner() async throws {
        let kiosk = try await TestKiosk { $0.links.expiryBucketSeconds = 900 }
        let links = kiosk.runtime.runtime.delivery.links
        #expect(links.expiryBucketSeconds == 900)
        #expect(links.path(to: "a.pdf", now: 1_800_000_001) == links.path(to: "a.pdf", now: 1_800_000_900))
        #expect(try await TestKiosk().runtime.runtime.delivery.links.expiryBucketSeconds == 300)
    }
}
