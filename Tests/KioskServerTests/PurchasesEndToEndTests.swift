import Foundation
import KioskTestSupport
import Testing

/// A reader app buying through the App Store and Google Play against the real binary, two instances on one
/// database, with real HTTP on loopback (`Tests/Clients/purchases.py`): StoreKit 2 transactions and App Store
/// Server Notifications V2 signed by a test Apple certificate authority (and checked once with Apple's own
/// `appstoreserverlibrary`), Google Play through `Tests/Clients/google_standin.py`. Scenarios: the products
/// and account tokens, an issue, a pack of 2, a subscription's renewals, grace, lapse, refund and reversal,
/// duplicate and reordered notifications, what is refused (fault 8, HTTP 400) with nothing changed, whose a
/// purchase is (fault 9, the anonymous device limit, signing in), a Google subscription through Pub/Sub,
/// two devices registering one transaction at the same moment on two instances, and `kill -9` of one instance
/// three times under a load of notifications and registrations (nothing answered lost, every notification
/// answered `200` a duplicate when sent again, those cut off applied once sent again).
///
/// On one SQLite file, and on PostgreSQL when `KIOSK_TEST_POSTGRES` names a server (a fresh database;
/// failing, not skipped, under `KIOSK_REQUIRE_POSTGRES=1`).
@Suite(.serialized, .timeLimit(.minutes(6)))
struct PurchasesEndToEndTests {
    @Test func onOneSQLiteFile() async throws {
        let directory = temporaryDirectory()
        try await Self.purchases(directory: directory, database: directory.path + "/kiosk.sqlite")
    }

    @Test(.enabled(if: TestPostgresServer.configured, TestPostgresServer.skipReason))
    func onPostgreSQL() async throws {
        try await TestPostgresServer.withDatabase { database in
            try await Self.purchases(directory: temporaryDirectory(), database: database)
        }
    }

    /// Runs `purchases.py BINARY DIRECTORY DATABASE --instances 2`; every violated expectation it reports is a
    /// failure here. The directory (the instances' logs, the stand-in's folder) is kept when something failed.
    static func purchases(directory: URL, database: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let check = try await ChildProcess.run("/usr/bin/env", ["python3", "-c", "import appstoreserverlibrary, jwt, cryptography"])
        try #require(check.status == 0,
                     "purchases.py needs PyPI app-store-server-library (with PyJWT and cryptography): \(check.errors.suffix(500))",
                     sourceLocation: sourceLocation)
        let script = TestKiosk.repositoryRoot + "/Tests/Clients/purchases.py"
        // A bound on the whole run (it takes well under two minutes); purchases.py stops what it started on SIGTERM.
        let result = try await HeavyRuns.shared.exclusive {
            try await ChildProcess.run("/usr/bin/env",
                                       ["timeout", "-k", "10", "300", "python3", script, ServerProcess.executable.path,
                                        directory.path, database, "--instances", "2"])
        }
        let report = (try? JSONSerialization.jsonObject(with: Data(result.output.utf8))) as? [String: Any]
        let violations = report?["violations"] as? [String] ?? []
        let store = database.hasPrefix("postgres") ? "PostgreSQL" : "SQLite"
        if let scenarios = report?["scenarios"] as? [String: Any] {
            for (name, details) in scenarios.sorted(by: { $0.key < $1.key }) {
                let seconds = (details as? [String: Any])?["seconds"].map { "\($0)" } ?? "?"
                let failed = ((details as? [String: Any])?["violations"] as? [Any])?.count ?? 0
                print("purchases \(name) on \(store): \(seconds) s, \(failed) violated")
            }
        }
        let failed = result.status != 0 || !violations.isEmpty
        if failed || ProcessInfo.processInfo.environment["KEEP_PURCHASES_DIR"] != nil {
            print("kept \(directory.path)")
        } else {
            try? FileManager.default.removeItem(at: directory)
        }
        let timedOut = result.status == 124 ? ", timed out" : ""
        #expect(report != nil, "purchases.py on \(store) printed no report (exit \(result.status)\(timedOut)): \(result.errors.suffix(3000))",
                sourceLocation: sourceLocation)
        #expect(violations.isEmpty,
                "purchases.py on \(store), \(violations.count) violated:\n\(violations.joined(separator: "\n"))\n(logs in \(directory.path))",
                sourceLocation: sourceLocation)
        #expect(result.status == 0 || !violations.isEmpty,
                "purchases.py on \(store) exited \(result.status): \(result.errors.suffix(3000))", sourceLocation: sourceLocation)
    }
}
