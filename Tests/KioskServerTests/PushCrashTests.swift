import Crypto
import Foundation
import KioskModels
import KioskPushStandIn
import KioskSQLite
import KioskTestSupport
import Testing

/// The fan-out in the real binary, killed with SIGKILL while it sends and started again: no device hears of the
/// issue twice, and at most the batch that was being sent is lost (at most once, as `docs/events.md` says).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PushCrashTests {
    static let devices = 40
    static let batchSize = 4

    @Test func killedWhileSendingNoDeviceHearsTwice() async throws {
        let key = P256.Signing.PrivateKey()
        let topic = "com.example.kiosk"
        var standInConfiguration = APNsStandIn.Configuration(
            teamID: "TEAM123456", keyID: "KEY1234567", publicKey: key.publicKey, topics: [topic])
        let tokens = (1...Self.devices).map { String(format: "%064x", $0) }
        // Each device is throttled once: its push takes a retry (half a second or more), so a batch is in flight long enough to be cut.
        standInConfiguration.throttled = Dictionary(uniqueKeysWithValues: tokens.map { ($0, 1) })
        standInConfiguration.minimumTokenRenewalSeconds = 0   // the restarted process makes its own provider token
        let standIn = try await APNsStandIn.start(standInConfiguration)
        let directory = temporaryDirectory()
        let (keyFile, caFile) = try PushWiringTests.writeKeyFiles(key, standIn, in: directory)
        let config = try writeTestConfiguration(in: directory) { text in
            text.replacingOccurrences(of: "    demo_quota: 3\n", with: """
                    demo_quota: 3
                    push: { apns_topic: \(topic), alert: { ca: { title: "{edition}", body: "{iso_date}" } }, background: true }

                """) + """

                push:
                  apns: { team_id: TEAM123456, key_id: KEY1234567, key_file: \(keyFile), production_url: "\(standIn.baseURL)", ca_certificates: \(caFile) }
                  batch_size: \(Self.batchSize)

                """
        }
        let environment = ["KIOSK_SECRET": String(repeating: "a", count: 40)]
        // The database made and the devices registered before the server starts; the issue published while it runs.
        let check = try await ServerProcess.run(["config", "check", "--config", config], environment: environment)
        #expect(check.status == 0, "\(check.errors)")
        let store = try SQLiteKioskStore(path: directory.path + "/kiosk.sqlite")
        try await store.syncCatalogue(SampleCatalogue.catalogue, dryRun: false)
        for (n, token) in tokens.enumerated() {
            _ = try await store.savePushRegistration(PushRegistration(
                appKey: "quiosc", deviceKey: "device-\(n)", identityKey: "iden-\(n)", userID: 0, platform: .apns, token: token,
                editions: [8], createdAt: 0, updatedAt: 0))
        }
        let first = try await ServerProcess(["--config", config], environment: environment)
        try await store.publishTestIssue(edition: 8, date: "2025-06-01", at: Int64(Date().timeIntervalSince1970))
        let deadline = ContinuousClock.now + .seconds(60)
        while standIn.snapshot().delivered.count < Self.batchSize * 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        first.signal(SIGKILL)
        _ = try await first.waitForExit()
        let atKill = standIn.snapshot().delivered.count
        #expect(atKill < Self.devices, "the fan-out was cut before its end (\(atKill) devices told)")

        let second = try await ServerProcess(["--config", config], environment: environment)
        var settled = -1
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .seconds(2))
            let now = standIn.snapshot().requests
            if now == settled { break }
            settled = now
        }
        let secondLog = second.log
        second.signal(SIGTERM)
        _ = try await second.waitForExit()
        try await standIn.stop()

        let delivered = standIn.snapshot().delivered
        print("push crash: \(atKill) devices told at the kill, \(delivered.count) of \(Self.devices) in the end")
        #expect(delivered.values.allSatisfy { $0 == 1 }, "a device told twice: \(delivered.filter { $0.value > 1 })")
        #expect(delivered.count >= Self.devices - Self.batchSize && delivered.count <= Self.devices,
                "at most the batch in flight at the kill is lost: \(delivered.count) of \(Self.devices) told, \(atKill) at the kill; \(secondLog.suffix(3000))")
        #expect(Set(delivered.keys).isSubset(of: Set(tokens)))
    }
}
