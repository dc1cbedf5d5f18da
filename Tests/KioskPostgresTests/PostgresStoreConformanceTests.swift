import Foundation
import KioskModels
@testable import KioskPostgres
import KioskTestSupport
import Logging
import PostgresNIO
import Testing

/// The store conformance suite on PostgreSQL: every check on a new database of the server named by
/// `KIOSK_TEST_POSTGRES` (`.ci/run` starts one). Without it the suite is skipped, unless
/// `KIOSK_REQUIRE_POSTGRES=1` (CI), where a missing or unreachable server fails.
@Suite(.enabled(if: TestPostgres.configured, TestPostgres.skipReason))
struct PostgresStoreConformanceTests {
    @Test(arguments: StoreConformance.Check.allCases)
    func conformance(_ check: StoreConformance.Check) async throws {
        try await TestPostgres.withDatabase { configuration in
            let opened = OpenedStores()
            let conformance = StoreConformance {
                // The races (200 calls on one advisory lock) check outcomes, not latency: on a loaded machine
                // the last caller may wait longer than the server's default 5 s for a connection.
                let store = try await PostgresKioskStore.connect(configuration, connectionWait: .seconds(60),
                                                                 logger: Logger(label: "test"))
                await opened.add(store)
                return store
            }
            do { try await conformance.run(check) } catch {
                await opened.closeAll()
                throw error
            }
            await opened.closeAll()
        }
    }

    /// Instances starting together migrate once: the advisory lock makes the second wait and find the work done.
    @Test func concurrentStartsMigrateOnce() async throws {
        try await TestPostgres.withDatabase { configuration in
            let stores = try await withThrowingTaskGroup(of: PostgresKioskStore.self) { group in
                for _ in 0..<4 {
                    group.addTask { try await PostgresKioskStore.connect(configuration, connectionWait: .seconds(60), logger: Logger(label: "test")) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            try await stores[0].syncCatalogue(SampleCatalogue.catalogue, dryRun: false)
            for store in stores { try await store.ping() }
            let applied = try await TestPostgres.query(configuration, "SELECT COUNT(*) FROM kiosk_migrations")
            #expect(applied == PostgresSchema.migrations.count, "each migration recorded once")
            for store in stores { await store.close() }
        }
    }

    /// Several stores (instances) on one database: the demo quota holds across them.
    @Test func demoQuotaHoldsAcrossInstances() async throws {
        try await TestPostgres.withDatabase { configuration in
            var stores: [PostgresKioskStore] = []
            // Outcomes, not latency: as in `conformance`, a loaded machine may keep a caller waiting past 5 s.
            for _ in 0..<3 {
                stores.append(try await PostgresKioskStore.connect(configuration, connectionWait: .seconds(60), logger: Logger(label: "test")))
            }
            try await stores[0].syncCatalogue(SampleCatalogue.catalogue, dryRun: false)
            let instances = stores
            let granted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for n in 0..<90 {
                    group.addTask {
                        try await instances[n % 3].consumeDemo(appKey: "quiosc", deviceKey: "d1", quota: 3, at: 1_000).granted
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(granted == 3)
            #expect(try await stores[1].demosConsumed(appKey: "quiosc", deviceKey: "d1") == 3)
            for store in stores { await store.close() }
        }
    }
}

/// The stores a check opened, closed when it ends.
actor OpenedStores {
    private var stores: [PostgresKioskStore] = []
    func add(_ store: PostgresKioskStore) { stores.append(store) }
    func closeAll() async {
        for store in stores { await store.close() }
        stores = []
    }
}

/// The PostgreSQL server the tests use, from the environment.
enum TestPostgres {
    static let environment = ProcessInfo.processInfo.environment
    /// A superuser URL, e.g. `postgres://postgres@127.0.0.1:55432/postgres`.
    static let url = environment["KIOSK_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
    static let required = environment["KIOSK_REQUIRE_POSTGRES"] == "1"
    static var configured: Bool { url != nil || required }
    static let skipReason: Comment = "no PostgreSQL server: set KIOSK_TEST_POSTGRES=postgres://postgres@127.0.0.1:PORT/postgres (.ci/run starts one)"

    /// postgres-nio's configuration for `database` on the test server.
    static func configuration(database: String) throws -> PostgresClient.Configuration {
        let text = try #require(url, "KIOSK_REQUIRE_POSTGRES=1 but KIOSK_TEST_POSTGRES is not set")
        let components = try #require(URLComponents(string: text), "KIOSK_TEST_POSTGRES is not a URL: \(text)")
        var configuration = PostgresClient.Configuration(
            host: components.host ?? "127.0.0.1", port: components.port ?? 5432, username: components.user ?? "postgres",
            password: components.password, database: database, tls: .disable)
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    /// Runs `body` with a new, empty database, dropped afterwards.
    static func withDatabase(_ body: (PostgresClient.Configuration) async throws -> Void) async throws {
        let name = "kiosk_t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await admin("CREATE DATABASE \(name)")
        do {
            try await body(try configuration(database: name))
        } catch {
            try? await admin("DROP DATABASE \(name) WITH (FORCE)")
            throw error
        }
        try await admin("DROP DATABASE \(name) WITH (FORCE)")
    }

    /// A statement on the server's `postgres` database.
    static func admin(_ sql: String) async throws {
        _ = try await query(try configuration(database: "postgres"), sql)
    }

    /// The first column of the first row of `sql`, as an integer (nil without one).
    @discardableResult
    static func query(_ configuration: PostgresClient.Configuration, _ sql: String) async throws -> Int? {
        let client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "test"))
        return try await withThrowingTaskGroup(of: Int?.self) { group in
            group.addTask { await client.run(); return nil }
            defer { group.cancelAll() }
            let rows = try await client.query(PostgresQuery(unsafeSQL: sql)).collect()
            return try rows.first.map { try $0.decode(Int.self) }
        }
    }
}
