import Foundation
import KioskModels
import KioskSQLite
import KioskTestSupport
import Testing
@testable import KioskHTTP
@testable import KioskPasswords

/// The operator console in a real browser (`Tests/Browser/operator_console.py`): two instances of the real
/// binary on one database; what an operator changes on one, a reader app gets from the other at once; a
/// store purchase found on the purchases page and revoked by hand; a webhook endpoint added, its secret shown once.
/// Skipped like `ReaderWebKioskBrowserTests` when the browser is missing, unless `KIOSK_REQUIRE_BROWSER=1`.
@Suite struct ConsoleBrowserTests {
    @Test(.enabled(if: ReaderWebKioskBrowserTests.browserAvailable || ReaderWebKioskBrowserTests.required,
                   "needs chromium, chromium-driver and python3-selenium"))
    func anOperatorsChangesReachTheAppsOfAnotherInstanceAtOnce() async throws {
        #expect(ReaderWebKioskBrowserTests.browserAvailable, "KIOSK_REQUIRE_BROWSER=1 but the browser is missing")
        let directory = temporaryDirectory()
        let hash = try await PasswordHashing().hash(ConsoleTests.password, cost: 4)
        let config = try writeTestConfiguration(in: directory) {
            $0.replacingOccurrences(of: "# samples: none", with: "samples: \(TestKiosk.repositoryRoot)/Samples")
                + "\ncatalogue_source: console\noperators:\n  - { username: marta, password_hash: \"\(hash)\", role: operator }\n"
        }
        let environment = EndToEndTests.environment
        let first = try await ServerProcess(["--config", config], environment: environment)
        let second = try await ServerProcess(["--config", config], environment: environment)
        // Some downloads over the last days, for the dashboard.
        try await Self.recordDownloads(database: directory.appendingPathComponent("kiosk.sqlite").path)
        // A store purchase that opens on two anonymous devices, for the purchases page.
        let store = try SQLiteKioskStore(path: directory.appendingPathComponent("kiosk.sqlite").path)
        let purchase = HeldPurchase(
            appKey: "quiosc", purchase: StorePurchase(store: .google, originalID: "browser.token",
                                                     product: StoreProduct(appKey: "quiosc", id: "cat.quiosc.pack5", kind: .credits, credits: 5)),
            holder: .device(deviceKey: "browser-owner"), devices: ["browser-owner", "browser-buyer"], environment: "Production",
            payments: [StorePayment(id: "GPA.1", paidAt: 1_748_779_200, price: 4990, currency: "EUR", signedAt: 1)],
            createdAt: 1_748_779_200, updatedAt: 1_748_779_200)
        _ = try await store.changePurchase(appKey: "quiosc", store: .google, originalID: "browser.token", recording: nil) { $0 = purchase }

        // The issue as one PDF, so the console shows the server rendering its pages.
        let archive = directory.appendingPathComponent("issue.pdf").path
        #expect(FileManager.default.createFile(atPath: archive, contents: Data(TestPDFs.make(texts: ["Portada", "Política", "Esports"]))))

        let shots = try ReaderWebKioskBrowserTests.screenshotFolder()
        let (status, output, errors) = try await ChildProcess.run(
            ReaderWebKioskBrowserTests.python,
            [TestKiosk.repositoryRoot + "/Tests/Browser/operator_console.py", "http://127.0.0.1:\(first.port)",
             "http://kiosk:secret@127.0.0.1:\(second.port)/RPC2", archive, shots.path])
        for server in [first, second] {
            server.signal(SIGTERM)
            _ = try await server.waitForExit()
        }
        #expect(status == 0, "\(errors)\n\(first.log)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)\n\(errors)")

        #expect((report["sign_in_url"] as? String)?.hasSuffix("/admin/sign-in") == true)
        #expect(report["dashboard_heading"] as? String == "Tauler")
        #expect(report["dashboard_total"] as? String == String(Self.downloadsWritten))
        #expect(report["chart_bars"] as? Int == 30)
        #expect(report["quota_after"] as? String == "1")
        #expect(report["demos_granted"] as? [String] == ["1", "0"], "quota 1, as lowered on the other instance")
        #expect(report["forged_status"] as? Int == 403)
        #expect(report["upload_status"] as? String == "201")
        #expect(report["progress"] as? String == "100")
        let phases = (report["phases"] as? String ?? "").split(separator: " ").map(String.init)
        #expect(phases.first == "rendering" && phases.contains("bundling"), "the server's progress reached the page: \(phases)")
        #expect(report["newest_after_upload"] as? String == "2025-07-01")
        #expect(report["listed_after_withdraw"] as? String == "withdrawn", "still listed, as withdrawn")
        #expect(report["newest_after_withdraw"] as? String == "2025-05-31")
        #expect(report["class_after_restore"] as? String == "", "restored: no longer marked withdrawn")
        #expect(report["newest_after_restore"] as? String == "2025-07-01", "the other instance sees it again")
        #expect(report["reader_row"] as? String == "1 → 2030-12-31")
        #expect(report["registrar"] as? [String] == ["Núria Pons", "2030-12-31"])
        #expect(report["purchases_found"] as? [String] == ["browser.token"])
        #expect(report["purchase_devices"] as? String == "browser-owner, browser-buyer")
        #expect(report["purchase_state"] as? String == "Revocada")
        #expect(try await store.purchase(appKey: "quiosc", store: .google, originalID: "browser.token")?.revokedByOperator == true)
        let webhookSecret = try #require(report["webhook_secret"] as? String)
        #expect(webhookSecret.hasPrefix("whsec_") && report["webhook_secret_again"] as? Bool == false, "shown once")
        #expect(report["webhook_types"] as? String == "issue.published")
        #expect(try await store.webhookEndpoints(owner: "marta").map(\.secrets) == [[webhookSecret]])
        #expect(report["audit"] as? [String] == ["webhook.add", "purchase.revoke", "reader.subscribe", "reader.add", "issue.restore", "issue.withdraw",
                                                 "issue.publish", "app.quota"])
        #expect((report["page_bytes"] as? Int).map { $0 < 100_000 } == true)
    }

    /// Downloads on each of the 30 days up to today (1 + (7 × days ago) mod 9 of them), written as a reader app's would be.
    static let downloadsWritten = (0..<30).map { 1 + ($0 * 7) % 9 }.reduce(0, +)
    static func recordDownloads(database: String) async throws {
        let script = """
            import sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], timeout=10)
            now = int(time.time())
            for day in range(30):
                for n in range(1 + (day * 7) % 9):
                    db.execute("INSERT INTO downloads (edition_id, date, app_key, identity_key, user_id, claimed_user_id, device_key, os, time) "
                               "VALUES (8, '2025-05-31', 'quiosc', '', 0, '', ?, ?, ?)", ('d' + str(n), 'ios' if n else 'android', now - day * 86400))
            db.commit()
            """
        let result = try await ChildProcess.run("/usr/bin/python3", ["-c", script, database])
        #expect(result.status == 0, "\(result.errors)")
    }
}
