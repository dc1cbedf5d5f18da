import Foundation
import KioskModels
@testable import KioskPostgres
import KioskTestPostgres
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
