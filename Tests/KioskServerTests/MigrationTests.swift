import CSystemCalls
import Foundation
import KioskModels
import KioskSQLite
import KioskTestSupport
import Testing
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles
@testable import KioskPasswords

/// Moving from El Quiosc: the old Joomla accounts and USERS_MOBILS devices imported with the real binary,
/// then used by the 2012 app's own requests (`Tests/Clients/old_app.py`) against the real server.
@Suite struct MigrationTests {
    static let environment = ["KIOSK_SECRET": String(repeating: "m", count: 40)]

    /// Python writes the legacy hashes (hashlib and its own phpass), so they are not made by the code under test.
    static let legacyHashes = #"""
        import hashlib, sys
        itoa64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
        def encode64(data, count):
            out, i = "", 0
            while True:
                value = data[i]; i += 1
                out += itoa64[value & 0x3f]
                if i < count: value |= data[i] << 8
                out += itoa64[(value >> 6) & 0x3f]
                if i >= count: break
                i += 1
                if i < count: value |= data[i] << 16
                out += itoa64[(value >> 12) & 0x3f]
                if i >= count: break
                i += 1
                out += itoa64[(value >> 18) & 0x3f]
                if i >= count: break
            return out
        def phpass(password, salt, log2, prefix):
            digest = hashlib.md5((salt + password).encode()).digest()
            for _ in range(1 << log2):
                digest = hashlib.md5(digest + password.encode()).digest()
            return prefix + itoa64[log2] + salt + encode64(digest, 16)
        salt = "Xq3LZcVb0u9RkT2wNfEa4sJh6yGd1Mpo"
        print("username,name,email,password")
        print("md5user,Old MD5,md5@example.cat," + hashlib.md5(b"pw-md5").hexdigest())
        print("saltuser,Joomla 1.5,salt@example.cat," + hashlib.md5(("pw-salt" + salt).encode()).hexdigest() + ":" + salt)
        print("puser,Joomla 3,p@example.cat," + phpass("pw-p", "aB3dE6gH", 15, "$P$"))
        print("huser,phpBB,h@example.cat," + phpass("pw-h", "zY9xW8vU", 11, "$H$"))
        print("buser,Joomla bcrypt,b@example.cat," + sys.argv[1])
        """#

    static func stats(_ config: String) async throws -> [String: Any] {
        let result = try await ServerProcess.run(["stats", "--config", config, "--format", "json"])
        #expect(result.status == 0, "\(result.errors)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
    }

    @Test func legacyPasswordHashesSignInOnceThenBecomeBcrypt() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory)
        let bcrypt = "$2y$" + (try await PasswordHashing().hash("pw-b", cost: 4)).dropFirst(4)
        let csv = try await runClient("python3", ["-c", Self.legacyHashes, bcrypt])
        let file = directory.appendingPathComponent("users.csv")
        try csv.write(to: file, atomically: true, encoding: .utf8)
        let imported = try await ServerProcess.run(["user", "import", "--config", config, file.path])
        #expect(imported.status == 0, "\(imported.errors)")
        #expect(imported.output.contains("5 users added, 0 updated, 0 subscriptions set, 4 legacy password hashes kept until first sign-in"),
                "\(imported.output)")
        #expect(try await Self.stats(config)["legacy_password_hashes"] as? Int == 4)

        let store = try SQLiteKioskStore(path: directory.path + "/kiosk.sqlite")
        let before = try #require(try await store.user(username: "puser")).passwordHash
        #expect(before.hasPrefix("$P$D"))

        let server = try await ServerProcess(["--config", config], environment: Self.environment)
        let users = [("md5user", "pw-md5"), ("saltuser", "pw-salt"), ("puser", "pw-p"), ("huser", "pw-h"), ("buser", "pw-b")]
        let reports = try await OldAppTests.oldApp(server.port, users.flatMap { user, password in
            [
                OldAppTests.call("epusuaris.registrar", ["quiosc", "dev-\(user)", user, password + "x", [] as [Any], "iOS"]),
                OldAppTests.call("epusuaris.registrar", ["quiosc", "dev-\(user)", user, password, [] as [Any], "iOS"]),
                OldAppTests.call("epusuaris.hashQuiosc", ["quiosc", user, password, "compte"]),
            ]
        }).reports
        for (index, (user, _)) in users.enumerated() {
            let wrong = reports[index * 3], right = reports[index * 3 + 1], again = reports[index * 3 + 2]
            #expect((wrong["fault"] as? [String: Any])?["code"] as? Int == 6, "\(user): \(wrong)")
            #expect((right["result"] as? [String: Any])?["username"] as? String == user, "\(user): \(right)")
            #expect(((again["result"] as? [String: Any])?["hash"] as? String)?.isEmpty == false, "\(user): \(again)")
        }
        for (user, password) in users {
            let hash = try #require(try await store.user(username: user)).passwordHash
            #expect(StoredPasswordHash(hash)?.isLegacy == false, "\(user) still has \(hash)")
            #expect(try await PasswordHashing().verify(password, against: hash, username: ""), "\(user)")
        }
        // The bcrypt account keeps its own hash; the others were rewritten.
        #expect(try #require(try await store.user(username: "buser")).passwordHash == bcrypt)
        #expect(try await Self.stats(config)["legacy_password_hashes"] as? Int == 0)
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
    }

    @Test func wrongPasswordsCostTheSameForLegacyAndBcryptAccounts() async throws {
        let bcrypt = StoredPasswordHash(try await PasswordHashing().hash("secret-1", cost: PasswordHashing.defaultCost))
        let legacy = StoredPasswordHash("5ebe2294ecd0e0f08eab7690d2a6ee69")   // MD5 of "secret"
        #expect(legacy?.isLegacy == true && PasswordHashing.check("secret", against: legacy))
        /// CPU time of this thread for three wrong checks: what the check costs, whatever else the machine runs.
        @Sendable func cost(_ stored: StoredPasswordHash?) -> Double {
            let start = FS.threadCPUTime()
            for _ in 0..<3 { _ = PasswordHashing.check("wrong", against: stored) }
            return FS.threadCPUTime() - start
        }
        // On a thread of its own: seconds of bcrypt must not hold one of the few threads other tests' tasks share.
        let (bcryptCost, legacyCost, unknownCost) = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                _ = cost(nil)   // makes the equalizing hash once
                continuation.resume(returning: (cost(bcrypt), cost(legacy), cost(nil)))
            }
        }
        // One bcrypt at the default cost each; MD5 alone would be thousands of times cheaper.
        #expect(legacyCost > bcryptCost * 0.7 && legacyCost < bcryptCost * 1.4, "legacy \(legacyCost) s vs bcrypt \(bcryptCost) s")
        #expect(unknownCost > bcryptCost * 0.7 && unknownCost < bcryptCost * 1.4, "unknown \(unknownCost) s vs bcrypt \(bcryptCost) s")
    }

    @Test func importedDevicesKeepTheirKeysAndDemosUntilTheirNextRegistrar() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory)
        let add = try await ServerProcess.run(
            ["user", "add", "--config", config, "--username", "marta", "--password-stdin"], stdin: "pw-marta-long\n")
        #expect(add.status == 0, "\(add.errors)")
        let subscribe = try await ServerProcess.run(
            ["user", "subscribe", "--config", config, "--username", "marta", "--edition", "1", "--until", "2025-12-31"])
        #expect(subscribe.status == 0, "\(subscribe.errors)")
        for edition in ["1", "2"] {
            let folder = try await IssueFolders.writeIssue(directory.path + "/in-\(edition)", pages: 2)
            let published = try await ServerProcess.run(
                ["publish", "--quiet", "--config", config, "--edition", edition, "--date", "2025-06-02", folder],
                environment: Self.environment)
            #expect(published.status == 0, "\(published.errors)")
        }
        let martaKey = "b1946ac92492d2347c6235b4d2611184", anonymousKey = "e59ff97941044f85df5297e1c302d260"
        let file = directory.appendingPathComponent("identities.csv")
        try """
            iden_key,app_key,disp_key,username_or_empty,demos
            \(martaKey),quiosc,ipad-marta,marta,0
            \(anonymousKey),quiosc,iphone-anna,,1
            """.write(to: file, atomically: true, encoding: .utf8)
        let imported = try await ServerProcess.run(["identity", "import", "--config", config, file.path])
        #expect(imported.status == 0, "\(imported.errors)")
        #expect(imported.output.contains("2 identities added, 0 updated"), "\(imported.output)")
        #expect(imported.errors.contains("identities: 2/2"))
        let again = try await ServerProcess.run(["identity", "import", "--config", config, file.path])
        #expect(again.output.contains("0 identities added, 2 updated"), "\(again.output)")

        // Bad rows: named by line, nothing written.
        for (text, message) in [
            ("\(martaKey)x,quiosc,d1,,0\nk2,nowhere,d2,,0", "line 3: app \"nowhere\" is not in the configuration"),
            ("k3,quiosc,d3,nobody,0", "line 2: no user named \"nobody\""),
            ("k4,quiosc,d4,,-1", "line 2: demos must be a whole number from 0"),
            ("\(martaKey),quiosc,another-device,,0", "line 2: identity key \"\(martaKey)\" already belongs to another app or device"),
        ] {
            try ("iden_key,app_key,disp_key,username,demos\n" + text).write(to: file, atomically: true, encoding: .utf8)
            let refused = try await ServerProcess.run(["identity", "import", "--config", config, file.path])
            #expect(refused.status != 0)
            #expect(refused.errors.contains(message) && refused.errors.contains("nothing was imported"), "\(refused.errors)")
        }
        let store = try SQLiteKioskStore(path: directory.path + "/kiosk.sqlite")
        #expect(try await store.identity(key: "\(martaKey)x") == nil)
        #expect(try await store.demosConsumed(appKey: "quiosc", deviceKey: "iphone-anna") == 1)

        let server = try await ServerProcess(["--config", config], environment: Self.environment)
        let reports = try await OldAppTests.oldApp(server.port, [
            OldAppTests.call("epquiosc.getEdicio", ["quiosc", martaKey, "1", "2025-06-02", "", "iOS"]),
            OldAppTests.call("epquiosc.getEdicio", ["quiosc", anonymousKey, "2", "2025-06-02", "", "iOS"]),
            OldAppTests.call("epusuaris.consumirDemo", ["quiosc", "iphone-anna", anonymousKey, ["iPhone"], "iOS", 0]),
            OldAppTests.call("epquiosc.getEdicio", ["quiosc", anonymousKey, "2", "2025-06-02", "", "iOS"]),
            OldAppTests.call("epusuaris.consumirDemo", ["quiosc", "someone-else", anonymousKey, [] as [Any], "iOS", 0]),
            OldAppTests.call("epusuaris.registrar", ["quiosc", "iphone-anna", "", "", ["iPhone", "6.1"], "iOS"]),
            OldAppTests.call("epusuaris.consumirDemo", ["quiosc", "iphone-anna", anonymousKey, [] as [Any], "iOS", 0]),
            OldAppTests.call("epquiosc.getEdicio", ["quiosc", anonymousKey, "2", "2025-06-02", "", "iOS"]),
        ]).reports
        func result(_ index: Int) -> [String: Any]? { reports[index]["result"] as? [String: Any] }
        func fault(_ index: Int) -> Int? { (reports[index]["fault"] as? [String: Any])?["code"] as? Int }
        #expect((result(0)?["pagines"] as? [Any])?.count == 2, "the subscriber's old key downloads: \(reports[0])")
        #expect(fault(1) == 5, "no demo granted yet: \(reports[1])")
        #expect(result(2)?["servir_demo"] as? String == "1")
        #expect(result(2)?["demos"] as? String == "2", "the imported count is kept: \(reports[2])")
        #expect(result(2)?["iden_key"] as? String == anonymousKey)
        #expect((result(3)?["pagines"] as? [Any])?.count == 2, "the grant opens the issue: \(reports[3])")
        #expect(fault(4) == 2, "an old key is good for its own device only: \(reports[4])")
        let newKey = try #require(result(5)?["iden_key"] as? String)
        #expect(newKey != anonymousKey && newKey.count == 43)
        #expect(result(5)?["demos"] as? String == "2")
        #expect(fault(6) == 2, "registrar retired the old key: \(reports[6])")
        #expect(fault(7) == 2, "\(reports[7])")
        let withNewKey = try await OldAppTests.oldApp(server.port, [
            OldAppTests.call("epquiosc.getEdicio", ["quiosc", newKey, "2", "2025-06-02", "", "iOS"]),
        ]).reports
        #expect(((withNewKey[0]["result"] as? [String: Any])?["pagines"] as? [Any])?.count == 2, "\(withNewKey)")
        #expect(try await store.identity(key: martaKey)?.imported == true, "marta's device has not called registrar yet")
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
    }
}
