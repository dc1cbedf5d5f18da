import Foundation
import KioskModels
import KioskSQLite
import KioskTestSupport
import Testing
@testable import KioskConfig

/// `--database` names a SQLite file or a PostgreSQL server, never mixing the two.
@Suite struct DatabaseLocationTests {
    @Test func aURLIsNeverTakenForAPath() throws {
        let environment = ["KIOSK_DATABASE_PASSWORD": "from-env"]
        guard case .postgres(let server) = try DatabaseLocation("postgres://kiosk@db.example:6543/kiosk?sslmode=verify-full&sslrootcert=/etc/ca.pem&pool_max=40&connect_timeout=9&application_name=k2",
                                                                 environment: environment) else {
            Issue.record("a postgres:// URL must name a server"); return
        }
        #expect(server.host == "db.example" && server.port == 6543 && server.username == "kiosk" && server.database == "kiosk")
        #expect(server.password == "from-env" && server.tls == .verifyFull && server.rootCertificate == "/etc/ca.pem")
        #expect(server.maxConnections == 40 && server.connectTimeoutSeconds == 9 && server.applicationName == "k2")
        #expect(!server.description.contains("from-env"), "the password never reaches a log line")

        guard case .postgres(let inline) = try DatabaseLocation("postgresql://u:s%40cret@127.0.0.1/k?host=/run/postgresql", environment: [:]) else {
            Issue.record("postgresql:// names a server too"); return
        }
        #expect(inline.password == "s@cret" && inline.socketDirectory == "/run/postgresql" && inline.port == 5432)

        #expect(try DatabaseLocation("data/kiosk.sqlite") == .sqlite(path: "data/kiosk.sqlite"))
        for (text, problem) in [("mysql://u@h/d", "is not a database this server knows"),
                                ("postgres://u@h", "names no database"),
                                ("postgres://h/d", "is not a PostgreSQL URL"),
                                ("postgres://u@h/d?sslmode=sometimes", "sslmode \"sometimes\""),
                                ("postgres://u@h/d?colour=blue", "unknown URL parameter \"colour\""),
                                ("postgres://u@h/d?connect_timeout=soon", "connect_timeout \"soon\""),
                                ("", "is empty")] {
            #expect(throws: ConfigurationError.self, "\(text)") { try DatabaseLocation(text) }
            do { _ = try DatabaseLocation(text, environment: [:]) } catch {
                #expect("\(error)".contains(problem), "\(text): \(error)")
            }
        }
        do { _ = try DatabaseLocation("postgres://u:hunter2@h/d?colour=blue") } catch {
            #expect(!"\(error)".contains("hunter2"), "an error never shows the password: \(error)")
        }
    }

    /// The binary with a URL to a server that does not answer: a clear error, and no SQLite file or
    /// `postgres:` folder created.
    @Test func aServerThatDoesNotAnswerIsAnErrorNotAFile() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory)
        let result = try await ChildProcess.run(ServerProcess.executable.path,
                                              ["stats", "--config", config, "--database", "postgres://kiosk@127.0.0.1:1/kiosk"],
                                              directory: directory.path)
        #expect(result.status != 0)
        #expect(result.errors.lowercased().contains("connect"), "\(result.errors)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!left.contains { $0.hasPrefix("postgres") }, "\(left)")
    }
}

/// `db copy`: an embedded install moved to PostgreSQL, checked, and safe to run again.
@Suite(.enabled(if: TestPostgresServer.configured, TestPostgresServer.skipReason))
struct DatabaseCopyTests {
    @Test func copyIsCheckedRepeatableAndRefusesToOverwriteOtherData() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory)
        let sqlite = directory.appendingPathComponent("kiosk.sqlite").path
        let add = try await ServerProcess.run(["user", "add", "--config", config, "--database", sqlite, "--username", "anna",
                                               "--password-stdin"], stdin: "pw-anna-long\n", environment: OperatorCommandTests.secret)
        #expect(add.status == 0, "\(add.errors)")
        let subscribe = try await ServerProcess.run(["user", "subscribe", "--config", config, "--database", sqlite, "--username", "anna",
                                                     "--edition", "1", "--until", "2030-01-01"])
        #expect(subscribe.status == 0, "\(subscribe.errors)")
        _ = try await runClient("python3", [TestKiosk.repositoryRoot + "/Benchmarks/stats_bench_data.py", sqlite, "3000"])
        try await Self.addPurchases(to: sqlite)
        try await Self.addPushRegistrations(to: sqlite)
        try await TestPostgresServer.withDatabase { target in
            let first = try await ServerProcess.run(["db", "copy", "--config", config, "--database", sqlite, "--to", target])
            #expect(first.status == 0, "\(first.errors)")
            #expect(first.output.contains("downloads: 3000 rows, checksum"), "\(first.output)")
            #expect(first.output.contains("every table checked"))
            #expect(try await TestPostgresServer.psql(target, "SELECT COUNT(*) FROM downloads") == "3000")
            // Purchases with their devices, payments (a price unknown, one revoked by an operator) and notices;
            // `store_notices.seq` is PostgreSQL's own, filled as the rows arrive.
            #expect(first.output.contains("store_purchases: 3 rows, checksum"), "\(first.output)")
            #expect(first.output.contains("store_purchase_devices: 2 rows, checksum"), "\(first.output)")
            #expect(first.output.contains("store_payments: 3 rows, checksum"), "\(first.output)")
            #expect(first.output.contains("store_notices: 4 rows, checksum"), "\(first.output)")
            #expect(try await TestPostgresServer.psql(target, """
                SELECT string_agg(concat_ws(':', user_id, device_key, revoked), ' ' ORDER BY original_id) FROM store_purchases
                """) == "0::t 1::f 0:d-1:f")
            #expect(try await TestPostgresServer.psql(target, """
                SELECT string_agg(concat_ws(':', id, coalesce(price::text, '-'), coalesce(currency, '-'), revoked), ' ' ORDER BY id)
                FROM store_payments
                """) == "t-1:4990:EUR:t t-2:-:-:f t-3:4990:EUR:f")
            #expect(try await TestPostgresServer.psql(target, "SELECT COUNT(DISTINCT seq) FROM store_notices") == "4")
            // Push registrations with the fan-out's cursor and progress: the copy goes on where the source stopped.
            #expect(first.output.contains("push_registrations: 2 rows, checksum"), "\(first.output)")
            #expect(first.output.contains("push_fanouts: 1 rows, checksum"), "\(first.output)")
            #expect(try await TestPostgresServer.psql(target, """
                SELECT string_agg(concat_ws(':', device_key, platform, editions), ' ' ORDER BY id) FROM push_registrations
                """) == "d-1:apns: d-2:fcm:1,8")
            #expect(try await TestPostgresServer.psql(target, "SELECT concat_ws(':', after_id, done) FROM push_fanouts") == "1:f")

            // The same statistics from both databases, byte for byte.
            let fromSQLite = try await ServerProcess.run(["stats", "--config", config, "--database", sqlite, "--format", "json"])
            let fromPostgres = try await ServerProcess.run(["stats", "--config", config, "--database", target, "--format", "json"])
            #expect(fromSQLite.status == 0 && fromPostgres.status == 0, "\(fromPostgres.errors)")
            #expect(fromSQLite.output == fromPostgres.output)

            // Again: nothing to do, nothing changed.
            let again = try await ServerProcess.run(["db", "copy", "--config", config, "--database", sqlite, "--to", target])
            #expect(again.status == 0, "\(again.errors)")
            let tables = { (text: String) in text.split(separator: "\n").filter { $0.contains(" rows, checksum ") } }
            #expect(tables(again.output) == tables(first.output) && tables(first.output).count == 35, "\(again.output)")
            #expect(try await TestPostgresServer.psql(target, "SELECT COUNT(*) FROM downloads") == "3000")

            // The target moves on (an instance on PostgreSQL took a user): a copy would lose it, so it is refused.
            let users = try #require(Int(try await TestPostgresServer.psql(target, "SELECT COUNT(*) FROM users")))
            let maxID = try #require(Int(try await TestPostgresServer.psql(target, "SELECT MAX(id) FROM users")))
            // Identity sequences continue after the copied ids: a new user gets the next one.
            #expect(try await TestPostgresServer.psql(target, """
                INSERT INTO users (username, name, email, password_hash, created_at) VALUES ('bernat', '', '', 'x', 0) RETURNING id
                """) == "\(maxID + 1)")
            // So does the purchases' (a store purchase stored here next is not given a copied id).
            let purchaseID = try #require(Int(try await TestPostgresServer.psql(target, "SELECT MAX(id) FROM store_purchases")))
            #expect(try await TestPostgresServer.psql(target, """
                INSERT INTO store_purchases (app_key, store, original_id, product_id, kind, created_at, updated_at, details)
                VALUES ('quiosc', 'apple', '9999', 'p', 'issue', 0, 0, '{}') RETURNING id
                """) == "\(purchaseID + 1)")
            // And the outbox's: the events the source recorded (its catalogue, the reader, the subscription, the purchases)
            // are copied, and an event appended here next comes after them.
            let events = try #require(Int(try await TestPostgresServer.psql(target, "SELECT COUNT(*) FROM outbox_events")))
            #expect(events > 0 && first.output.contains("outbox_events: \(events) rows, checksum"), "\(first.output)")
            #expect(try await TestPostgresServer.psql(target, "SELECT string_agg(type, ' ' ORDER BY id) FROM outbox_events WHERE type LIKE 'reader.%' OR type LIKE 'subscription.%'")
                    == "reader.added subscription.granted")
            let eventID = try #require(Int(try await TestPostgresServer.psql(target, "SELECT MAX(id) FROM outbox_events")))
            #expect(try await TestPostgresServer.psql(target, """
                INSERT INTO outbox_events (type, time, body) VALUES ('webhook.test', 0, '{}') RETURNING id
                """) == "\(eventID + 1)")
            let refused = try await ServerProcess.run(["db", "copy", "--config", config, "--database", sqlite, "--to", target])
            #expect(refused.status != 0)
            #expect(refused.errors.contains("already holds other data (users: \(users + 1) rows); give --replace"), "\(refused.errors)")
            #expect(try await TestPostgresServer.psql(target, "SELECT COUNT(*) FROM users WHERE username = 'bernat'") == "1")

            let replaced = try await ServerProcess.run(["db", "copy", "--config", config, "--database", sqlite, "--to", target, "--replace"])
            #expect(replaced.status == 0, "\(replaced.errors)")
            #expect(try await TestPostgresServer.psql(target, "SELECT COUNT(*) FROM users WHERE username = 'bernat'") == "0")
            #expect(try await TestPostgresServer.psql(target, "SELECT COUNT(*) FROM users") == "\(users)")
            #expect(try await TestPostgresServer.psql(target, "SELECT COUNT(*) FROM store_purchases") == "3")
        }
    }

    /// Three purchases in the SQLite database through its store: unclaimed (revoked by an operator), a reader's
    /// (its price unknown), a device's restored on a second device; each with a notice, and one notice alone.
    static func addPurchases(to path: String) async throws {
        let store = try SQLiteKioskStore(path: path)
        let t: Int64 = 1_748_779_200
        let product = StoreProduct(appKey: "quiosc", id: "cat.quiosc.mensual", kind: .subscription, scope: .all)
        for n in 1...3 {
            let facts = StoreFacts(store: .apple, originalID: "100\(n)", storeProductID: product.id, environment: "Production",
                                   payment: StorePayment(id: "t-\(n)", paidAt: t, period: PaidPeriod(start: t, end: t + 2_592_000),
                                                         price: n == 2 ? nil : 4_990, currency: n == 2 ? nil : "EUR",
                                                         signedAt: t * 1_000))
            let notice = StoreNoticeRecord(store: .apple, id: "n-\(n)", appKey: "quiosc", type: "SUBSCRIBED", subtype: "INITIAL_BUY",
                                           originalID: facts.originalID, receivedAt: t, outcome: "applied")
            let stored = try await store.changePurchase(appKey: "quiosc", store: .apple, originalID: facts.originalID,
                                                        recording: notice) { held in
                var new = HeldPurchase(appKey: "quiosc", facts: facts, product: product, at: t)
                switch n {
                case 1: new.setRevokedByOperator(true, at: t)
                case 2: try new.claim(by: PurchaseClaimant(userID: 1, deviceKey: "d-1", accountTokens: []), deviceLimit: 2, at: t)
                default:
                    try new.claim(by: PurchaseClaimant(userID: 0, deviceKey: "d-1", accountTokens: []), deviceLimit: 2, at: t)
                    try new.claim(by: PurchaseClaimant(userID: 0, deviceKey: "d-2", accountTokens: []), deviceLimit: 2, at: t)
                }
                held = new
                return true
            }
            #expect(stored == true)
        }
        #expect(try await store.recordNotice(StoreNoticeRecord(store: .google, id: "g-1", appKey: "quiosc", type: "TEST", subtype: "",
                                                               originalID: "", receivedAt: t, outcome: "recorded")))
    }

    /// Two push registrations (one naming editions) and a publish's fan-out begun: a first batch of one claimed.
    static func addPushRegistrations(to path: String) async throws {
        let store = try SQLiteKioskStore(path: path)
        let t: Int64 = 1_748_779_200
        for (n, editions) in [(1, [Int]()), (2, [1, 8])] {
            _ = try await store.savePushRegistration(PushRegistration(
                appKey: "quiosc", deviceKey: "d-\(n)", identityKey: "i-\(n)", userID: 0, platform: n == 1 ? .apns : .fcm,
                token: n == 1 ? String(repeating: "0f", count: 32) : "fcm-token", editions: editions, language: "ca",
                createdAt: t, updatedAt: t))
        }
        try await store.publishTestIssue(edition: 8, date: "2025-06-01", at: t)
        let batch = try await store.claimPushBatch(PushBatchRequest(types: PushAudience.types, notBefore: 0, limit: 1, now: t))
        #expect(batch?.targets.count == 1)
    }
}

/// The TLS options of a `postgres://` URL against a server that takes TLS connections only.
@Suite(.enabled(if: TestPostgresServer.configured, TestPostgresServer.skipReason))
struct PostgresTLSTests {
    @Test func sslModesAgainstATLSOnlyServer() async throws {
        let server = try await PrivatePostgres.start(tls: true)
        do {
            let directory = temporaryDirectory()
            let config = try writeTestConfiguration(in: directory)
            let base = "postgres://postgres@127.0.0.1:\(server.port)/postgres"
            func stats(_ query: String) async throws -> (status: Int32, output: String, errors: String) {
                try await ServerProcess.run(["stats", "--config", config, "--database", base + query, "--format", "json"])
            }
            let required = try await stats("?sslmode=require")
            #expect(required.status == 0, "sslmode=require: \(required.errors)")
            let verified = try await stats("?sslmode=verify-full&sslrootcert=\(server.certificate)")
            #expect(verified.status == 0, "sslmode=verify-full with the server's certificate: \(verified.errors)")
            let plain = try await stats("?sslmode=disable")
            #expect(plain.status != 0, "the server refuses plain connections")
            #expect(plain.errors.contains("gave no connection"), "\(plain.errors)")
            let untrusted = try await stats("?sslmode=verify-full")
            #expect(untrusted.status != 0, "a self-signed certificate is not trusted by the system's roots")
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}

