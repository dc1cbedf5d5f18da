import KioskStoreSupport
import PostgresNIO

extension PostgresKioskStore {
    /// The tables `db copy` moves, parents before children.
    static let copiedTables = [
        "publications", "editions", "sections", "apps", "tariff_lines", "app_web_kiosks", "store_products", "issues", "pages", "page_texts", "withdrawn_page_texts", "users", "subscriptions",
        "identities", "demo_counters", "demo_grants", "downloads", "download_counts", "sign_in_failures", "active_identities",
        "audit_log", "accounts", "bundle_builds", "store_purchases", "store_purchase_devices", "store_payments", "store_notices",
        "outbox_events", "outbox_cursor", "webhook_endpoints", "webhook_deliveries", "webhook_attempts",
        "push_registrations", "push_cursor", "push_fanouts",
    ]

    /// Stands for NULL in the text arrays of a copy (postgres-nio's arrays have no NULL elements).
    static let nullMarker = "\u{1}kiosk-null\u{1}"

    /// Copies every table of `source` here in one transaction, then compares row counts and checksums
    /// table by table and commits only if all match. An empty target is filled; a target that already
    /// matches the source is left as it is (running again is safe); any other target is refused unless
    /// `replace`, which empties it first. `progress` hears (table, rows copied). Columns PostgreSQL always
    /// computes itself (generated, or `GENERATED ALWAYS AS IDENTITY` as `store_notices.seq`, which SQLite
    /// lacks) are neither copied nor checked: PostgreSQL fills them as the rows arrive.
    package func copy(from source: any TableExport, replace: Bool,
                     progress: @escaping @Sendable (String, Int) -> Void = { _, _ in }) async throws -> [TableCopyReport] {
        try await changingCatalogue(bounded: false) { [self] c in
            try await c.run("SELECT pg_advisory_xact_lock(\(PostgresSchema.migrationLock))", logger: logger)
            var tables: [(name: String, columns: [(name: String, type: String)])] = []
            for table in Self.copiedTables {
                let columns = try await c.rows("""
                    SELECT column_name::text, data_type::text FROM information_schema.columns
                    WHERE table_schema = current_schema() AND table_name = \(table) AND is_generated = 'NEVER'
                        AND identity_generation IS DISTINCT FROM 'ALWAYS'
                    ORDER BY ordinal_position
                    """, (String, String).self, logger: logger).map { (name: $0.0, type: $0.1) }
                tables.append((table, columns))
            }
            var reports: [TableCopyReport] = []
            for (table, tableColumns) in tables {
                let target = try await checksum(table, columns: tableColumns, on: c)
                let source = try await Self.checksum(table, columns: tableColumns.map(\.name), of: source)
                reports.append(TableCopyReport(table: table, source: source, target: target))
            }
            if reports.allSatisfy({ $0.source == $0.target }) { return reports }
            if let occupied = reports.first(where: { $0.target.rows > 0 && $0.target != $0.source })
                ?? reports.first(where: { $0.target.rows > 0 }), !replace {
                throw TableCopyError.targetHoldsOtherData(table: occupied.table, rows: occupied.target.rows)
            }
            try await c.run(PostgresQuery(unsafeSQL: "TRUNCATE " + Self.copiedTables.joined(separator: ", ")), logger: logger)
            for (table, tableColumns) in tables {
                let insert = "INSERT INTO \(table) (" + tableColumns.map(\.name).joined(separator: ", ") + ") SELECT "
                    + tableColumns.map { "NULLIF(u.\($0.name), $\(tableColumns.count + 1))::\($0.type)" }.joined(separator: ", ")
                    + " FROM unnest(" + tableColumns.indices.map { "$\($0 + 1)::text[]" }.joined(separator: ", ")
                    + ") AS u(" + tableColumns.map(\.name).joined(separator: ", ") + ")"
                var copied = 0
                try await source.exportRows(table: table, columns: tableColumns.map(\.name), batchSize: 5_000) { rows in
                    var bindings = PostgresBindings(capacity: tableColumns.count)
                    for index in tableColumns.indices { bindings.append(rows.map { $0[index] ?? Self.nullMarker }) }
                    bindings.append(Self.nullMarker)
                    try await c.run(PostgresQuery(unsafeSQL: insert, binds: bindings), logger: logger)
                    copied += rows.count
                    progress(table, copied)
                }
                // An identity column's sequence continues after the copied ids (a product's text `id` has none).
                if tableColumns.contains(where: { $0.name == "id" && ["integer", "bigint"].contains($0.type) }) {
                    try await c.run(PostgresQuery(unsafeSQL: """
                        SELECT setval(pg_get_serial_sequence('\(table)', 'id'), GREATEST(COALESCE(MAX(id), 0), 1), MAX(id) IS NOT NULL)
                        FROM \(table)
                        """), logger: logger)
                }
            }
            // Event ids are never given twice, even those of events pruned at the source: the outbox's sequence
            // continues after the last offered one too.
            try await c.run("""
                SELECT setval(pg_get_serial_sequence('outbox_events', 'id'), GREATEST(s.last, 1), s.last > 0)
                FROM (SELECT GREATEST(COALESCE((SELECT MAX(id) FROM outbox_events), 0),
                                      COALESCE((SELECT position FROM outbox_cursor WHERE id = 1), 0)) AS last) s
                """, logger: logger)
            // Planner statistics now, not at autovacuum's next pass: the first calls plan on them.
            try await c.run(PostgresQuery(unsafeSQL: "ANALYZE " + Self.copiedTables.joined(separator: ", ")), logger: logger)
            for (index, (report, table)) in zip(reports, tables).enumerated() {
                let target = try await checksum(report.table, columns: table.columns, on: c)
                guard target == report.source else {
                    throw TableCopyError.mismatch(table: report.table, source: "\(report.source)", target: "\(target)")
                }
                reports[index].target = target
            }
            return reports
        }
    }

    /// The checksum of a table here, its values written as the SQLite side writes them.
    private func checksum(_ table: String, columns: [(name: String, type: String)], on c: PostgresConnection) async throws -> TableChecksum {
        let select = "SELECT " + columns.map { $0.type == "boolean" ? "(\($0.name)::int)::text" : "\($0.name)::text" }
            .joined(separator: ", ") + " FROM \(table)"
        var checksum = TableChecksum()
        for try await row in try await c.query(PostgresQuery(unsafeSQL: select), logger: logger) {
            var values: [String?] = []
            values.reserveCapacity(columns.count)
            for cell in row { values.append(try cell.decode(String?.self)) }
            checksum.add(values)
        }
        return checksum
    }

    private static func checksum(_ table: String, columns: [String], of source: any TableExport) async throws -> TableChecksum {
        var checksum = TableChecksum()
        try await source.exportRows(table: table, columns: columns, batchSize: 5_000) { rows in
            for row in rows { checksum.add(row) }
        }
        return checksum
    }
}
