import Foundation
import KioskTestSupport
import Testing
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles
@testable import KioskPasswords

/// `kill -9` at random points of publishes, first-demand bundle builds, `consumirDemo` under load and
/// `user import`, with the invariants checked by `Tests/Clients/crash_check.py` after every kill and,
/// after a clean restart, once more with nothing left behind.
@Suite struct CrashInjectionTests {
    static let environment = ["KIOSK_SECRET": String(repeating: "c", count: 40)]
    static let importSize = 4_000
    static let dates = (1...3).map { "2025-07-0\($0)" }

    /// What a round did, for the failure messages.
    enum Round: CustomStringConvertible {
        case publish(date: String), bundles, demos, userImport
        var isBundles: Bool { if case .bundles = self { true } else { false } }
        var description: String {
            switch self {
            case .publish(let date): "publish \(date)"
            case .bundles: "bundle builds"
            case .demos: "consumirDemo load"
            case .userImport: "user import"
            }
        }
    }

    @Test func invariantsHoldAfterFiftySixKills() async throws {
        let directory = temporaryDirectory()
        defer { if ProcessInfo.processInfo.environment["KEEP_CRASH_DIR"] == nil { try? FileManager.default.removeItem(at: directory) } else { print("kept \(directory.path)") } }
        let config = try writeTestConfiguration(in: directory)
        let editions = directory.path + "/Editions", database = directory.path + "/kiosk.sqlite"
        let log = directory.path + "/answers.log"
        let root = TestKiosk.repositoryRoot
        let issue = try await IssueFolders.writeIssue(directory.path + "/issue", pages: 120)
        let small = try await IssueFolders.writeIssue(directory.path + "/small", pages: 3)
        let hash = try await PasswordHashing().hash("pw", cost: 4)

        // Edition 1 (subscribers only: demos are spent on it) and a first issue of edition 8, whole.
        for (edition, date, folder) in [("1", Self.dates[0], small), ("8", Self.dates[0], issue)] {
            let (status, _, errors) = try await ServerProcess.run(
                ["publish", "--quiet", "--config", config, "--edition", edition, "--date", date, folder],
                environment: Self.environment)
            try #require(status == 0, "publish failed: \(errors)")
        }
        func writeUsers(_ prefix: String) throws -> String {
            var csv = "username,name,email,password,subscriptions\n"
            for index in 0..<Self.importSize { csv += "\(prefix)-user\(index),U,u@example.cat,\(hash),1:2026-01-01\n" }
            let file = directory.path + "/users-\(prefix).csv"
            try csv.write(toFile: file, atomically: true, encoding: .utf8)
            return file
        }
        func check(clean: Bool = false) async throws -> [String: Any] {
            let output = try await runClient("python3", [root + "/Tests/Clients/crash_check.py", database, editions, log,
                                                         String(Self.importSize)] + (clean ? ["--clean"] : []))
            return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        }

        var kills = 0, interrupted = 0
        for number in 0..<56 {
            let round: Round
            switch number % 4 {
            case 0: round = .publish(date: Self.dates[(number / 4) % Self.dates.count])
            case 1: round = .bundles
            case 2: round = .demos
            default: round = .userImport
            }
            var delay = 0, marker = ""
            switch round {
            case .publish(let date):
                // Killed in a random phase (the CLI names each as it starts), a random moment into it.
                marker = ["checking", "copying", "bundling", "committing"].randomElement()!
                delay = Int.random(in: 0...40)
                let command = ["publish", "--config", config, "--edition", "8", "--date", date, issue]
                interrupted += try await Self.killed(command, after: marker, plus: delay, log: directory.path + "/cli.err") ? 1 : 0
            case .userImport:
                // Before or inside the one write transaction.
                marker = Bool.random() ? "in one transaction" : ""
                delay = Int.random(in: 0...80)
                let command = ["user", "import", "--config", config, try writeUsers("r\(number)")]
                interrupted += try await Self.killed(command, after: marker, plus: delay, log: directory.path + "/cli.err") ? 1 : 0
            case .bundles, .demos:
                if case .bundles = round { try Self.removeBundles(under: editions + "/8") }
                let server = try await ServerProcess(["--config", config], environment: Self.environment)
                let answered = (try? FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) ?? 0
                let arguments: [String]
                if case .bundles = round {
                    arguments = [String(server.port), log, "bundles"] + Self.dates
                } else {
                    arguments = [String(server.port), log, "demos", "r\(number)", Self.dates[0]]
                }
                let load = try ChildProcess("/usr/bin/env", ["python3", root + "/Tests/Clients/crash_load.py"] + arguments)
                // Work has begun: a bundle build (the server logs it) or the first answers to the load.
                let deadline = ContinuousClock.now + .seconds(20)
                while load.isRunning, ContinuousClock.now < deadline {
                    if case .bundles = round {
                        if server.log.contains("bundle missing: building it") { break }
                    } else if ((try? FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) ?? 0) > answered {
                        break
                    }
                    try await Task.sleep(for: .milliseconds(1))
                }
                delay = Int.random(in: 0...(round.isBundles ? 60 : 400))
                try await Task.sleep(for: .milliseconds(delay))
                let working = load.isRunning
                server.signal(SIGKILL)
                _ = try await server.waitForExit()
                interrupted += working ? 1 : 0
                try await load.exited()
            }
            kills += 1
            let report = try await check()
            #expect(report["problems"] as? [String] == [], "after kill \(kills) (\(round), \(marker) + \(delay) ms): \(report)")
        }
        #expect(interrupted >= 42, "only \(interrupted) of \(kills) kills landed while work was going on")

        // A clean start: leftovers removed; every issue's bundle served (missing ones rebuilt on demand).
        let server = try await ServerProcess(["--config", config], environment: Self.environment)
        try await runClient("python3", [root + "/Tests/Clients/crash_load.py", String(server.port), log, "bundles"] + Self.dates)
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
        let report = try await check(clean: true)
        print("crash injection: \(kills) kills, \(interrupted) during work; after a clean restart: \(report)")
        #expect(report["problems"] as? [String] == [], "after a clean restart: \(report)")
        #expect((report["issues"] as? Int ?? 0) >= 2)
        #expect((report["grants"] as? Int ?? 0) > 0)
        #expect((report["downloads"] as? Int ?? 0) > 0)
    }

    /// Runs `KioskServer arguments…` and kills it `milliseconds` after `marker` appears in its standard
    /// error (empty: after it starts); true when the kill found it running.
    static func killed(_ arguments: [String], after marker: String, plus milliseconds: Int, log: String) async throws -> Bool {
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = try ChildProcess(ServerProcess.executable.path, arguments, environment: environment,
                                       directory: TestKiosk.repositoryRoot, errors: .file(log))
        while !marker.isEmpty, process.isRunning,
              !((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains(marker) {
            try await Task.sleep(for: .milliseconds(1))
        }
        try await Task.sleep(for: .milliseconds(milliseconds))
        process.signal(SIGKILL)
        try await process.exited()
        return process.wasSignaled
    }

    static func removeBundles(under folder: String) throws {
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return }
        for case let path as String in walker where path.hasSuffix(".zip") {
            try FileManager.default.removeItem(atPath: folder + "/" + path)
        }
    }
}
