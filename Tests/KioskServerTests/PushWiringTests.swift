import Crypto
import Foundation
import KioskModels
import KioskPushStandIn
import KioskSQLite
import KioskTestSupport
import Logging
import Prometheus
import ServiceLifecycle
import Testing
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskWiring

/// The push service as the configuration makes it (`push.apns` with its `.p8` file, `apps[].push`), against the
/// APNs stand-in over loopback HTTP/2: a published issue reaches a registered device with the app's topic and
/// text, and `/metrics` counts it.
@Suite struct PushWiringTests {
    @Test func theConfiguredServiceTellsADeviceAndCountsIt() async throws {
        let key = P256.Signing.PrivateKey()
        let topic = "com.example.kiosk"
        let standIn = try await APNsStandIn.start(APNsStandIn.Configuration(
            teamID: "TEAM123456", keyID: "KEY1234567", publicKey: key.publicKey, topics: [topic]))
        let directory = temporaryDirectory()
        let (keyFile, caFile) = try PushWiringTests.writeKeyFiles(key, standIn, in: directory)

        let kiosk = try await TestKiosk { configuration in
            var apns = KioskConfiguration.Push.APNs(teamID: "TEAM123456", keyID: "KEY1234567", keyFile: keyFile)
            apns.productionURL = standIn.baseURL
            apns.caCertificates = caFile
            configuration.push.apns = apns
            configuration.apps[0].push = KioskConfiguration.AppPushEntry(
                apnsTopic: topic, alert: ["ca": .init(title: "{publication}", body: "{edition} del {iso_date}")], background: true)
        }
        try kiosk.configuration.validate(file: "test")
        try PushWiring.checkFiles(kiosk.configuration)
        let token = String(repeating: "0a", count: 32)
        _ = try await kiosk.store.savePushRegistration(PushRegistration(
            appKey: "quiosc", deviceKey: "d1", identityKey: "i1", userID: 0, platform: .apns, token: token, editions: [],
            createdAt: kiosk.clock.now, updatedAt: kiosk.clock.now))
        let metrics = KioskMetrics()
        let service = try #require(try PushWiring.service(kiosk.configuration, database: kiosk.store, links: nil, metrics: metrics,
                                                          logger: .init(label: "test")))
        // The fan-out starts after the events its first claim finds: make that claim before publishing, as a
        // server's worker does at start, so that a slow start of the task below cannot pass the publish over.
        #expect(try await kiosk.store.claimPushBatch(PushBatchRequest(
            types: PushAudience.types, notBefore: 0, limit: 1, now: kiosk.clock.now)) == nil)
        let running = Task { try await service.run() }
        try await kiosk.addIssue(edition: 8, date: "2025-06-01")   // a free line of quiosc: every device may read it
        let deadline = ContinuousClock.now + .seconds(20)
        // Told, and the fan-out's end counted (after the answer the stand-in records).
        while standIn.snapshot().delivered[token] == nil || !metrics.registry.emitToString().contains("kiosk_push_fanout_duration_seconds_count 1"),
              ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        running.cancel()
        try? await running.value
        try await standIn.stop()

        let snapshot = standIn.snapshot()
        #expect(snapshot.delivered == [token: 1])
        let request = try #require(snapshot.recorded.first)
        #expect(request.headers["apns-topic"] == topic && request.headers["apns-collapse-id"] == "edition-8")
        let payload = try JSONSerialization.jsonObject(with: Data(request.payload)) as? [String: Any]
        let alert = (payload?["aps"] as? [String: Any])?["alert"] as? [String: String]
        #expect(alert == ["title": "Presència", "body": "Presència del 2025-06-01"])
        let scraped = metrics.registry.emitToString()
        #expect(scraped.contains(#"kiosk_push_sent_total{service="apns",outcome="sent"} 1"#), "\(scraped.split(separator: "\n").filter { $0.contains("push") })")
        #expect(scraped.contains("kiosk_push_fanout_duration_seconds_count 1"))
    }

    /// The APNs key's `.p8` file and the stand-in's authority as a PEM file, in `directory` (made): what
    /// `push.apns.key_file` and `push.apns.ca_certificates` name.
    static func writeKeyFiles(_ key: P256.Signing.PrivateKey, _ standIn: APNsStandIn, in directory: URL) throws -> (key: String, ca: String) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keyFile = directory.appendingPathComponent("apns.p8").path
        let caFile = directory.appendingPathComponent("ca.pem").path
        try key.pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
        try standIn.authority.caPEM.write(toFile: caFile, atomically: true, encoding: .utf8)
        return (keyFile, caFile)
    }

    @Test func withoutCredentialsThereIsNoService() async throws {
        let kiosk = try await TestKiosk { configuration in
            configuration.apps[0].push = KioskConfiguration.AppPushEntry(background: true)
        }
        #expect(try PushWiring.service(kiosk.configuration, database: kiosk.store, links: nil, metrics: nil, logger: .init(label: "test")) == nil)
    }

    @Test func anUnreadableKeyFileIsNamedWithItsKey() throws {
        var configuration = KioskConfiguration()
        configuration.push.apns = KioskConfiguration.Push.APNs(teamID: "TEAM123456", keyID: "KEY1234567", keyFile: "/nonexistent/apns.p8")
        #expect(throws: (any Error).self) { try PushWiring.checkFiles(configuration) }
        do { try PushWiring.checkFiles(configuration) } catch {
            #expect("\(error)".hasPrefix("push.apns.key_file: /nonexistent/apns.p8: "))
        }
    }
}
