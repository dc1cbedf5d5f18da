import GRDB
import Foundation
import KioskTestSupport
import KioskModels
import KioskSQLite
import Testing
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles
@testable import KioskPasswords

/// The operator's CLI commands, run as the real binary on a real database.
@Suite struct OperatorCommandTests {
    static let secret = ["KIOSK_SECRET": String(repeating: "k", count: 40)]

    @Test func configCheckReportsChangesAndNamesTheKeyOfAnError() async throws {
        let directory = temporaryDirectory()
        let good = try writeTestConfiguration(in: directory)
        let first = try await ServerProcess.run(["config", "check", "--config", good])
        #expect(first.status == 0, "\(first.errors)")
        #expect(first.output.contains("valid (2 publications, 3 editions, 2 apps, 1 API clients, 1 publishers)"))
        #expect(first.output.contains("add app quiosc (demo quota 3)"))
        #expect(first.output.contains("set tariff lines of app quiosc: 1:10:subscribers, 2:20:subscribers, 8:30:free"))

        let bad = try writeTestConfiguration(in: directory.appendingPathComponent("bad")) {
            $0.replacingOccurrences(of: "{ edition: 2, order: 20, access: subscribers }", with: "{ edition: 9, order: 20, access: subscribers }")
        }
        let refused = try await ServerProcess.run(["config", "check", "--config", bad])
        #expect(refused.status != 0)
        #expect(refused.errors.contains("\(bad): apps[0].lines[1].edition: edition 9 is not defined under publications"))

        let typo = try writeTestConfiguration(in: directory.appendingPathComponent("typo")) {
            $0.replacingOccurrences(of: "access: free", with: "access: gratis")
        }
        let typoResult = try await ServerProcess.run(["config", "check", "--config", typo])
        #expect(typoResult.status != 0)
        #expect(typoResult.errors.contains("apps[0].lines[2].access"))

        let misspelt = try writeTestConfiguration(in: directory.appendingPathComponent("misspelt")) {
            $0.replacingOccurrences(of: "demo_quota: 3", with: "demo_qouta: 3")
        }
        let misspeltResult = try await ServerProcess.run(["config", "check", "--config", misspelt])
        #expect(misspeltResult.status != 0)
        #expect(misspeltResult.errors.contains("apps[0].demo_qouta: is not a known key (misspelt?)"))
    }

    @Test func accountCommandsChangeTheStoredAccountsAsTheConsoleDoes() async throws {
        let directory = temporaryDirectory()
        let fileOwned = try writeTestConfiguration(in: directory.appendingPathComponent("file"))
        let refused = try await ServerProcess.run(["account", "add", "--config", fileOwned, "--kind", "operator",
                                                   "--username", "marta", "--generate"])
        #expect(refused.status != 0 && refused.errors.contains("the configuration file owns the accounts"), "\(refused.errors)")

        let config = try writeTestConfiguration(in: directory) { $0 + "\ncatalogue_source: console\n" }
        func account(_ arguments: [String], stdin: String? = nil) async throws -> (status: Int32, output: String, errors: String) {
            try await ServerProcess.run(["account"] + arguments + ["--config", config], stdin: stdin)
        }
        let before = try await account(["list"])
        #expect(before.status == 0 && before.output.contains("api_client:kiosk") && before.output.contains("publisher:publisher (every edition)"),
                "\(before.output)")
        #expect(before.errors.contains("no operator"), "a fresh database says how to get into the console: \(before.errors)")

        let short = try await account(["add", "--kind", "operator", "--username", "marta", "--role", "operator", "--password-stdin"],
                                      stdin: "short\n")
        #expect(short.status != 0 && short.errors.contains(PasswordRule.problem(with: "short") ?? "-"), "\(short.errors)")
        let added = try await account(["add", "--kind", "operator", "--username", "marta", "--role", "operator", "--password-stdin"],
                                      stdin: "marta-password\n")
        #expect(added.status == 0, "\(added.errors)")
        let again = try await account(["add", "--kind", "operator", "--username", "marta", "--generate"])
        #expect(again.status != 0 && again.errors.contains("operator:marta: already exists"), "\(again.errors)")
        let generated = try await account(["password", "--kind", "publisher", "--username", "publisher", "--generate"])
        #expect(generated.status == 0, "\(generated.errors)")
        let password = try #require(generated.output.split(separator: "\n").last { $0.hasPrefix("password of publisher:publisher: ") }
            .map { String($0.dropFirst("password of publisher:publisher: ".count)) }, "\(generated.output)")
        #expect(password.count == 24)
        let missing = try await account(["role", "--username", "nobody", "--role", "editor"])
        #expect(missing.status != 0 && missing.errors.contains("operator:nobody: no such account"), "\(missing.errors)")
        #expect(try await account(["remove", "--kind", "api_client", "--username", "kiosk"]).status == 0)
        let scope = try await ServerProcess.run(["publisher", "scope", "publisher", "--edition", "8", "--config", config])
        #expect(scope.status == 0, "\(scope.errors)")

        let after = try await account(["list"])
        #expect(!after.output.contains("api_client:kiosk"), "\(after.output)")
        #expect(after.output.contains("operator:marta (operator)") && after.output.contains("publisher:publisher (publications ; editions 8)"),
                "\(after.output)")
        #expect(!after.errors.contains("no operator"))
        // The database holds what the console would have written: hashes that verify, and the audit log.
        let store = try SQLiteKioskStore(path: directory.path + "/kiosk.sqlite")
        let accounts = try await store.accounts()
        let publisher = try #require(accounts.first { $0.kind == .publisher })
        #expect(try await PasswordHashing().verify(password, against: publisher.passwordHash, username: ""))
        let marta = try #require(accounts.first { $0.kind == .operator })
        #expect(try await PasswordHashing().verify("marta-password", against: marta.passwordHash, username: ""))
        let audit = try await store.auditEntries(limit: 10).map { "\($0.actor) \($0.action) \($0.subject) \($0.after)" }
        #expect(audit.contains("command line account.add operator:marta operator:marta (operator)"), "\(audit)")
        #expect(audit.contains("command line account.password publisher:publisher new password"), "\(audit)")
        #expect(audit.contains("command line account.remove api_client:kiosk "), "\(audit)")
        #expect(audit.allSatisfy { !$0.contains("$2b$") && !$0.contains(password) }, "no hash or password in the log")
        await store.close()
    }

    @Test func userPasswordAndUnlockFollowTheConsolesRules() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory)
        func user(_ arguments: [String], stdin: String? = nil) async throws -> (status: Int32, output: String, errors: String) {
            try await ServerProcess.run(["user"] + arguments + ["--config", config], stdin: stdin)
        }
        let short = try await user(["add", "--username", "laia", "--password-stdin"], stdin: "short\n")
        #expect(short.status != 0)
        #expect(short.errors.contains(PasswordRule.problem(with: "short") ?? "-"), "the console's words: \(short.errors)")
        #expect(try await user(["add", "--username", "laia", "--password-stdin"], stdin: "first-password\n").status == 0)
        let tooLong = try await user(["password", "--username", "laia", "--password-stdin"],
                                     stdin: String(repeating: "é", count: 600) + "\n")
        #expect(tooLong.status != 0 && tooLong.errors.contains("longer than 1024 bytes"), "read no further: \(tooLong.errors)")
        // bcrypt reads 72 bytes and stops at a NUL: a password it would not read whole is refused.
        for refused in [String(repeating: "a", count: 73), "\u{0}abcdefgh", "longenough\u{0}pass"] {
            let answer = try await user(["password", "--username", "laia", "--password-stdin"], stdin: refused + "\n")
            #expect(answer.status != 0 && answer.errors.contains("at most 72 bytes and no NUL character"), "\(answer.errors)")
        }
        let nobody = try await user(["password", "--username", "nobody", "--password-stdin"], stdin: "second-password\n")
        #expect(nobody.status != 0 && nobody.errors.contains("no user named \"nobody\""), "\(nobody.errors)")
        let reset = try await user(["password", "--username", "laia", "--password-stdin"], stdin: "second-password\n")
        #expect(reset.status == 0, "\(reset.errors)")

        // The new password signs in, the old one is wrong; five failures lock the account until `unlock`.
        let server = try await ServerProcess(["--config", config], environment: EndToEndTests.environment)
        let signIn = """
            import json, sys, xmlrpc.client
            p = xmlrpc.client.ServerProxy("http://kiosk:secret@127.0.0.1:\(server.port)/RPC2")
            def code(password):
                try:
                    p.epusuaris.registrar("quiosc", "device-1", "laia", password, {}, "iOS")
                    return 0
                except xmlrpc.client.Fault as f:
                    return f.faultCode
            print(json.dumps([code(password) for password in sys.argv[1:]]))
            """
        let first = try await runClient("python3", ["-c", signIn, "second-password", "first-password", "x1", "x2", "x3", "x4",
                                                    "second-password"])
        #expect(first.trimmingCharacters(in: .whitespacesAndNewlines) == "[0, 6, 6, 6, 6, 6, 7]", "locked after five: \(first)")
        let unlock = try await user(["unlock", "--username", "laia"])
        #expect(unlock.status == 0 && unlock.output.contains("forgot 5 failed sign-ins of laia"), "\(unlock.output)\(unlock.errors)")
        let after = try await runClient("python3", ["-c", signIn, "second-password"])
        #expect(after.trimmingCharacters(in: .whitespacesAndNewlines) == "[0]")
        server.signal(SIGTERM)
        _ = try await server.waitForExit()
    }

    @Test func userCommandsAddSubscribeAndImportAllOrNothing() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory)
        let add = try await ServerProcess.run(
            ["user", "add", "--config", config, "--username", "laia", "--name", "Laia", "--email", "laia@example.cat",
             "--password-stdin"], stdin: "pw-laia-long\n")
        #expect(add.status == 0, "\(add.errors)")
        let again = try await ServerProcess.run(
            ["user", "add", "--config", config, "--username", "laia", "--password-stdin"], stdin: "another-password\n")
        #expect(again.status != 0)
        #expect(again.errors.contains("a user named \"laia\" already exists"))
        let subscribe = try await ServerProcess.run(
            ["user", "subscribe", "--config", config, "--username", "laia", "--edition", "1", "--until", "2026-03-31"])
        #expect(subscribe.status == 0, "\(subscribe.errors)")

        // A Joomla-style $2y$ hash is kept as is and still verifies.
        let joomlaHash = "$2y$" + (try await PasswordHashing().hash("pw-jordi", cost: 4)).dropFirst(4)
        let csv = """
            username,name,email,password,subscriptions
            jordi,Jordi,"jordi@example.cat",\(joomlaHash),1:2026-01-31;8:2025-12-31
            "núria","Núria, la de Girona",nuria@example.cat,plain-pw,
            laia,Laia Vidal,laia@example.cat,new-pw,2:2026-06-30
            """
        let file = directory.appendingPathComponent("users.csv")
        try csv.write(to: file, atomically: true, encoding: .utf8)
        let imported = try await ServerProcess.run(["user", "import", "--config", config, file.path])
        #expect(imported.status == 0, "\(imported.errors)")
        #expect(imported.output.contains("2 users added, 1 updated, 3 subscriptions set"))
        #expect(imported.errors.contains("hashing passwords: 2/2"))

        let store = try SQLiteKioskStore(path: directory.path + "/kiosk.sqlite")
        let jordi = try #require(try await store.user(username: "jordi"))
        #expect(jordi.passwordHash == joomlaHash)
        #expect(try await PasswordHashing().verify("pw-jordi", against: jordi.passwordHash, username: ""))
        let nuria = try #require(try await store.user(username: "núria"))
        #expect(nuria.name == "Núria, la de Girona")
        #expect(nuria.passwordHash.hasPrefix("$2b$"))
        #expect(try await PasswordHashing().verify("plain-pw", against: nuria.passwordHash, username: ""))
        let laia = try #require(try await store.user(username: "laia"))
        #expect(laia.name == "Laia Vidal")
        #expect(try await store.subscriptions(userID: laia.id).map(\.editionID) == [1, 2])

        // One bad row: reported with its line, nothing of the file applied.
        let broken = """
            username,name,email,password
            pau,Pau,pau@example.cat,pw1
            marc,Marc,marc@example.cat,
            """
        try broken.write(to: file, atomically: true, encoding: .utf8)
        let refused = try await ServerProcess.run(["user", "import", "--config", config, file.path])
        #expect(refused.status != 0)
        #expect(refused.errors.contains("line 3: empty password; nothing was imported"))
        #expect(try await store.user(username: "pau") == nil)
    }

    @Test func killDuringImportLeavesTheDatabaseAsBeforeOrFullyImported() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory)
        // 50 000 users with existing hashes: the one write transaction is the long part.
        let hash = try await PasswordHashing().hash("pw", cost: 4)
        var csv = "username,name,email,password,subscriptions\n"
        for index in 0..<50_000 { csv += "user\(index),User \(index),u\(index)@example.cat,\(hash),1:2026-01-01\n" }
        let file = directory.appendingPathComponent("users.csv")
        try csv.write(to: file, atomically: true, encoding: .utf8)
        var interruptedWrites = 0
        for delay in [0, 10, 50, 150, 300, 600] {
            // A fresh database each time, so every attempt can be interrupted.
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: directory.path + "/kiosk.sqlite" + suffix) }
            let errorLog = directory.appendingPathComponent("import-\(delay).err")
            _ = FileManager.default.createFile(atPath: errorLog.path, contents: nil)
            let process = try ChildProcess(ServerProcess.executable.path, ["user", "import", "--config", config, file.path],
                                           errors: .file(errorLog.path))
            // Kill only once the write transaction has begun.
            while process.isRunning, !((try? String(contentsOf: errorLog, encoding: .utf8)) ?? "").contains("in one transaction") {
                try await Task.sleep(for: .milliseconds(2))
            }
            try await Task.sleep(for: .milliseconds(delay))
            process.signal(SIGKILL)
            try await process.exited()
            let store = try SQLiteKioskStore(path: directory.path + "/kiosk.sqlite")
            let (users, subscriptions, integrity) = try await store.pool.read { db in
                (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM users") ?? -1,
                 try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM subscriptions") ?? -1,
                 try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "")
            }
            #expect(integrity == "ok")
            #expect(users == 0 || users == 50_000, "a killed import left \(users) users")
            #expect(subscriptions == users)
            if users == 0 && process.wasSignaled { interruptedWrites += 1 }
        }
        #expect(interruptedWrites > 0, "no kill landed inside the write transaction")
    }
}
