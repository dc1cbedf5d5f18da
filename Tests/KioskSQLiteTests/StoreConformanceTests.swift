import KioskSQLite
import KioskTestSupport
import Testing

/// The store conformance suite on `SQLiteKioskStore`, each check on a new SQLite file.
@Suite struct StoreConformanceTests {
    static let conformance = StoreConformance { try TestStores.sqlite() }

    @Test(arguments: StoreConformance.Check.allCases)
    func sqliteStoreConforms(_ check: StoreConformance.Check) async throws {
        try await Self.conformance.run(check)
    }
}
