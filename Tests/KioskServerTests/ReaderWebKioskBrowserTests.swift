import Foundation
import KioskTestSupport
import Testing

/// The reader's web kiosk in a real browser: headless Chromium from Debian driven by Selenium
/// (`Tests/Browser/reader_web_kiosk.py`) against the real binary. Skipped when Chromium, its driver or
/// Selenium is missing, unless `KIOSK_REQUIRE_BROWSER=1` (CI) makes that a failure.
@Suite struct ReaderWebKioskBrowserTests {
    static let python = "/usr/bin/python3"

    static var browserAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
            && FileManager.default.isExecutableFile(atPath: python)
    }

    static var required: Bool { ProcessInfo.processInfo.environment["KIOSK_REQUIRE_BROWSER"] == "1" }

    /// Where the screenshots go: `KIOSK_SCREENSHOTS` (the README's come from `docs/screenshots`), else a temporary folder.
    static func screenshotFolder() throws -> URL {
        let folder = ProcessInfo.processInfo.environment["KIOSK_SCREENSHOTS"].map { URL(fileURLWithPath: $0) }
            ?? temporaryDirectory().appendingPathComponent("screenshots")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test(.enabled(if: browserAvailable || required, "needs chromium, chromium-driver and python3-selenium"))
    func aReaderFollowsHashQuioscIntoTheWebKioskAndIsRefusedOnceTheSubscriptionEnds() async throws {
        #expect(Self.browserAvailable, "KIOSK_REQUIRE_BROWSER=1 but chromium, chromedriver or python3 is missing")
        let directory = temporaryDirectory()
        // The multi-title app's web kiosk becomes Kiosk's own (no base_url).
        let config = try writeTestConfiguration(in: directory) {
            $0.replacingOccurrences(of: "# samples: none", with: "samples: \(TestKiosk.repositoryRoot)/Samples")
              .replacingOccurrences(of: "      base_url: https://quiosc.example.cat\n", with: "")
        }
        let environment = EndToEndTests.environment
        let add = try await ServerProcess.run(["user", "add", "--config", config, "--username", "anna", "--name", "Anna Puig",
                                               "--password-stdin"], stdin: "anna-password\n", environment: environment)
        #expect(add.status == 0, "\(add.errors)")
        let subscribe = try await ServerProcess.run(["user", "subscribe", "--config", config, "--username", "anna",
                                                     "--edition", "1", "--until", "2025-12-31"], environment: environment)
        #expect(subscribe.status == 0, "\(subscribe.errors)")
        let server = try await ServerProcess(["--config", config], environment: environment)
        let base = "http://127.0.0.1:\(server.port)"
        let endSubscription = [ServerProcess.executable.path, "user", "subscribe", "--config", config, "--username", "anna",
                               "--edition", "1", "--until", "2025-01-01"]
        let shots = try Self.screenshotFolder()
        let (status, output, errors) = try await ChildProcess.run(
            Self.python,
            [TestKiosk.repositoryRoot + "/Tests/Browser/reader_web_kiosk.py", base, "http://kiosk:secret@127.0.0.1:\(server.port)/RPC2",
             shots.path, String(decoding: try JSONSerialization.data(withJSONObject: endSubscription), as: UTF8.self)],
            environment: environment)
        server.signal(SIGTERM)
        _ = try await server.waitForExit()
        #expect(status == 0, "\(errors)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)\n\(errors)")

        #expect(report["hash_url"] as? String == base + "/web/quiosc/compte")
        #expect(report["account_url"] as? String == base + "/web/quiosc/compte", "signed in, the hash gone from the address")
        #expect(report["account_heading"] as? String == "El meu compte")
        #expect(report["signed_in_as"] as? String == "Anna Puig")
        #expect(report["subscriptions"] as? [String] == ["El Punt Avui · Nacional 2025-12-31"])
        #expect(report["cookie_http_only"] as? [Bool] == [true])
        #expect(report["first_focus"] as? String == "Salta al contingut")
        #expect(report["after_skip"] as? String == "main")
        #expect(report["shelf_editions"] as? [String] == ["El Punt Avui · Nacional", "El Punt Avui · Comarques Gironines", "Presència · Presència"])
        #expect((report["shelf_covers_loaded"] as? [Bool]).map { $0.count == 3 && !$0.contains(false) } == true)
        #expect(report["archive_heading"] as? String == "Hemeroteca de El Punt Avui · Nacional")
        #expect(report["archive_month"] as? String == "juny 2025")
        #expect(report["issue_heading"] as? String == "El Punt Avui · Nacional · 2025-06-02")
        #expect(report["issue_pages"] as? Int == 4)
        #expect((report["issue_images_loaded"] as? [Bool]).map { $0.count == 4 && !$0.contains(false) } == true)
        #expect((report["page_bytes"] as? Int).map { $0 < 100_000 } == true)
        #expect(report["pdf"] as? [AnyHashable] == [200, "application/pdf", "%PDF-"])
        #expect(report["phone_overflow"] as? Bool == false)
        #expect(report["end_subscription_status"] as? Int == 0)
        #expect(report["after_end_heading"] as? String == "Aquest número és per a subscriptors.")
        #expect(report["after_end_pdf_links"] as? Int == 0)
        #expect(report["english_lang"] as? String == "en")
        #expect((report["english_intro"] as? String)?.hasPrefix("You are not signed in") == true)
        #expect(FileManager.default.fileExists(atPath: shots.appendingPathComponent("reader-issue.png").path))
    }
}
