import Foundation
import KioskTestSupport
import Testing
@testable import KioskHTTP
@testable import KioskPasswords

/// The real binary under `Tests/Clients/http_fuzz.py`: every route (XML-RPC, the web kiosk signed in and
/// not, the console with an operator's session and its forms, publishing with a publisher's credentials,
/// file links, SSO, health) with boundary and random values, for `KIOSK_HTTP_FUZZ_SECONDS` (default 45).
/// Fails if the process dies, or any answer is a 5xx or never comes.
@Suite struct HTTPFuzzTests {
    @Test func noRequestStopsTheServerOrAnswersA5xx() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let hash = try await PasswordHashing().hash(ConsoleTests.password, cost: 4)
        let config = try writeTestConfiguration(in: directory) {
            $0 + "\ncatalogue_source: console\noperators:\n  - { username: marta, password_hash: \"\(hash)\", role: operator }\n"
        }
        let environment = EndToEndTests.environment
        let add = try await ServerProcess.run(["user", "add", "--config", config, "--username", "laia", "--password-stdin"],
                                              stdin: "reader-password\n", environment: environment)
        #expect(add.status == 0, "\(add.errors)")
        let subscribe = try await ServerProcess.run(["user", "subscribe", "--config", config, "--username", "laia",
                                                     "--edition", "8", "--until", "2099-01-31"], environment: environment)
        #expect(subscribe.status == 0, "\(subscribe.errors)")
        for (seed, date) in [(UInt8(1), "2031-01-01"), (UInt8(2), "2031-02-01")] {
            let folder = try await IssueFolders.writeIssue(directory.path + "/in\(seed)", pages: 2, seed: seed)
            let publish = try await ServerProcess.run(["publish", "--quiet", "--config", config, "--edition", "8", "--date", date, folder],
                                                      environment: environment)
            #expect(publish.status == 0, "\(publish.errors)")
        }

        let server = try await ServerProcess(["--config", config], environment: environment)
        defer { server.signal(SIGKILL) }
        let seconds = ProcessInfo.processInfo.environment["KIOSK_HTTP_FUZZ_SECONDS"] ?? "45"
        let (status, output, errors) = try await ChildProcess.run("/usr/bin/env", [
            "python3", TestKiosk.repositoryRoot + "/Tests/Clients/http_fuzz.py", "--port", "\(server.port)", "--pid", "\(server.pid)",
            "--seconds", seconds, "--api", "\(TestKiosk.apiUser):\(TestKiosk.apiPassword)",
            "--publisher", "publisher:\(DevelopmentAccounts.passwords["publisher"] ?? "")",
            "--console", "marta:\(ConsoleTests.password)", "--reader", "laia:reader-password",
        ])
        #expect(status == 0, "\(errors)\n\(output)\nserver log tail:\n\(server.log.suffix(3000))")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
        let requests = try #require(summary["requests"] as? [String: Int])
        for family in ["rpc", "web", "console", "publish", "other"] {
            #expect((requests[family] ?? 0) >= 20, "too few \(family) requests to mean anything: \(requests)")
        }
        let statuses = try #require(summary["statuses"] as? [String: Int])
        #expect(statuses["200"] ?? 0 > 0 && statuses["400"] ?? 0 > 0, "both accepted and refused requests: \(statuses)")
        #expect(server.process.isRunning)
    }
}
