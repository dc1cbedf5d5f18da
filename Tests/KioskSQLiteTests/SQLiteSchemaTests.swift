import Foundation
import GRDB
import KioskModels
@testable import KioskSQLite
import KioskTestSupport
import Testing

/// What only the SQLite store has: its records against its tables, migrations and triggers.
@Suite struct SQLiteSchemaTests {
    @Test func everyTableReadOrWrittenAsRowsHasARecordListingItsColumnsInOrder() async throws {
        let store = try TestStores.sqlite()
        try await store.pool.read { db in
            var covered: Set<String> = []
            func check<Record: ListedColumns & TableRecord>(_ record: Record.Type) throws {
                let table = try db.columns(in: Record.databaseTableName).map(\.name)
                #expect(Record.Columns.allCases.map(\.rawValue) == table, "\(Record.self)")
                covered.insert(Record.databaseTableName)
            }
            try check(PublicationRecord.self); try check(EditionRecord.self); try check(AppRecord.self)
            try check(TariffLineRecord.self); try check(IssueRecord.self); try check(PageRecord.self)
            try check(SectionRecord.self); try check(UserRecord.self); try check(SubscriptionRecord.self)
            try check(IdentityRecord.self); try check(DownloadLogRecord.self); try check(DemoGrantRecord.self)
            try check(SignInFailureRecord.self); try check(ActiveIdentityRecord.self); try check(WebKioskRecord.self)
            try check(StoreProductRecord.self)
            let tables = try String.fetchAll(db, sql: """
                SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'grdb_migrations'
                """)
            // Read and written only as counters or whole rows, by value; page texts only by value, into the
            // FTS5 index (its shadow tables are SQLite's).
            #expect(Set(tables).subtracting(covered) == [
                "demo_counters", "download_counts", "catalogue_version", "audit_log", "accounts", "bundle_builds", "page_texts", "withdrawn_page_texts", "page_text_index", "ended_sessions",
                "page_text_index_data", "page_text_index_idx", "page_text_index_docsize", "page_text_index_config",
                // Store purchases: whole rows by value (`PurchaseRow`), their devices, payments and notices.
                "store_purchases", "store_purchase_devices", "store_payments", "store_notices",
                // The outbox and the webhooks: rows by value (`EventRow`, `WebhookEndpointColumns`).
                "outbox_events", "outbox_cursor", "webhook_endpoints", "webhook_deliveries", "webhook_attempts",
                // Push registrations and the fan-out's progress: rows by value (`PushRegistrationColumns`).
                "push_registrations", "push_cursor", "push_fanouts",
            ])
        }
    }

    @Test func perDayCountsFollowEveryChangeAndAreBackfilledOnUpgrade() async throws {
        // A database from before the statistics migration, with downloads in it.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let pool = try DatabasePool(path: path + "/old.sqlite")
        try KioskSchema.migrator.migrate(pool, upTo: "v1: catalogue, issues, readers, demos, downloads")
        try await pool.write { db in
            for (edition, time) in [(1, KnownStatistics.at("2025-06-01", hour: 1)), (1, KnownStatistics.at("2025-06-01", hour: 2)),
                                    (2, KnownStatistics.at("2025-06-02", hour: 1))] {
                try db.execute(sql: """
                    INSERT INTO downloads (edition_id, date, app_key, identity_key, user_id, claimed_user_id, device_key, os, time)
                    VALUES (?, '2025-06-01', 'quiosc', '', 0, '', 'd', 'iOS', ?)
                    """, arguments: [edition, time])
            }
        }
        try pool.close()
        let store = try SQLiteKioskStore(path: path + "/old.sqlite")   // migrates: v3 fills the counts
        func counts() async throws -> [[Int]] {
            try await store.pool.read { db in
                try Row.fetchAll(db, sql: "SELECT day, edition_id, count FROM download_counts ORDER BY day, edition_id")
                    .map { [$0["day"], $0["edition_id"], $0["count"]] }
            }
        }
        let june1 = IssueDate("2025-06-01")!.daysSinceEpoch
        #expect(try await counts() == [[june1, 1, 2], [june1 + 1, 2, 1]])
        #expect(try await store.statistics(StatisticsQuery()).totalDownloads == 3)

        // Inserts, deletes (a retention purge) and updates keep the counts exact; empty groups disappear.
        try await store.recordDownload(DownloadRecord(editionID: 2, date: IssueDate("2025-06-01")!, appKey: "quiosc", identityKey: "",
                                                      userID: 0, claimedUserID: "", deviceKey: "d", os: "iOS",
                                                      time: KnownStatistics.at("2025-06-02", hour: 5)))
        #expect(try await counts() == [[june1, 1, 2], [june1 + 1, 2, 2]])
        try await store.pool.write { db in
            try db.execute(sql: "DELETE FROM downloads WHERE edition_id = 1 AND time = ?", arguments: [KnownStatistics.at("2025-06-01", hour: 1)])
            try db.execute(sql: "UPDATE downloads SET edition_id = 8 WHERE edition_id = 1")
        }
        #expect(try await counts() == [[june1, 8, 1], [june1 + 1, 2, 2]])
        try await store.pool.write { db in try db.execute(sql: "DELETE FROM downloads") }
        #expect(try await counts() == [])
    }
}
