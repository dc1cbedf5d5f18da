import KioskModels
import Logging
import PostgresNIO

/// Makes the database's catalogue match the configuration, idempotently, reporting each change in
/// the words of the SQLite store's sync (the same lines for the same change).
///
/// Publications and editions are upserted and never deleted (issues refer to them); apps, their
/// tariff lines and web kiosks are made exactly as configured. Syncs from several instances take turns on an
/// advisory lock, so each sees the catalogue the previous one left.
struct PostgresCatalogueSync {
    let connection: PostgresConnection
    let logger: Logger

    /// `pg_advisory_xact_lock` key of catalogue syncs: "CATALOG" in ASCII.
    static let lock: Int64 = 0x43_4154_414C_4F47

    func apply(_ catalogue: Catalogue) async throws -> [String] {
        let c = connection
        try await c.run("SELECT pg_advisory_xact_lock(\(Self.lock))", logger: logger)
        var changes: [String] = []

        let publications = Dictionary(uniqueKeysWithValues: try await c.rows(
            "SELECT id, name FROM publications", (Int, String).self, logger: logger).map { ($0.0, $0.1) })
        for publication in catalogue.publications where publications[publication.id] != publication.name {
            try await c.run("""
                INSERT INTO publications (id, name) VALUES (\(publication.id), \(publication.name))
                ON CONFLICT (id) DO UPDATE SET name = excluded.name
                """, logger: logger)
            changes.append(publications[publication.id] == nil ? "add publication \(publication.id) \"\(publication.name)\""
                                                               : "rename publication \(publication.id) to \"\(publication.name)\"")
        }

        let editions = Dictionary(uniqueKeysWithValues: try await c.rows(
            "SELECT id, publication_id, name, created_on FROM editions", (Int, Int, String, String).self, logger: logger)
            .map { ($0.0, Edition(id: $0.0, publicationID: $0.1, name: $0.2, createdOn: IssueDate($0.3) ?? IssueDate(daysSinceEpoch: 0))) })
        for edition in catalogue.editions where editions[edition.id] != edition {
            try await c.run("""
                INSERT INTO editions (id, publication_id, name, created_on)
                VALUES (\(edition.id), \(edition.publicationID), \(edition.name), \(edition.createdOn.description))
                ON CONFLICT (id) DO UPDATE SET publication_id = excluded.publication_id, name = excluded.name,
                                               created_on = excluded.created_on
                """, logger: logger)
            changes.append("\(editions[edition.id] == nil ? "add" : "update") edition \(edition.id) \"\(edition.name)\"")
        }

        let configuredApps = Set(catalogue.apps.map(\.key))
        let apps = try await c.rows("SELECT key, name, demo_quota FROM apps ORDER BY key", (String, String, Int).self, logger: logger)
            .map { App(key: $0.0, name: $0.1, demoQuota: $0.2) }
        for stored in apps where !configuredApps.contains(stored.key) {
            try await c.run("DELETE FROM apps WHERE key = \(stored.key)", logger: logger)
            changes.append("remove app \(stored.key)")
        }
        let storedApps = Dictionary(uniqueKeysWithValues: apps.map { ($0.key, $0) })
        for app in catalogue.apps {
            if storedApps[app.key] != app {
                try await c.run("""
                    INSERT INTO apps (key, name, demo_quota) VALUES (\(app.key), \(app.name), \(app.demoQuota))
                    ON CONFLICT (key) DO UPDATE SET name = excluded.name, demo_quota = excluded.demo_quota
                    """, logger: logger)
                changes.append("\(storedApps[app.key] == nil ? "add" : "update") app \(app.key) (demo quota \(app.demoQuota))")
            }
            let wanted = catalogue.tariffLines.filter { $0.appKey == app.key }.sorted { $0.editionID < $1.editionID }
            let current = try await c.rows("""
                SELECT edition_id, sort_order, access FROM tariff_lines WHERE app_key = \(app.key) ORDER BY edition_id
                """, (Int, Int, String).self, logger: logger)
                .map { TariffLine(appKey: app.key, editionID: $0.0, order: $0.1, access: LineAccess(rawValue: $0.2) ?? .subscribers) }
            if current != wanted {
                try await c.run("DELETE FROM tariff_lines WHERE app_key = \(app.key)", logger: logger)
                if !wanted.isEmpty {
                    try await c.run("""
                        INSERT INTO tariff_lines (app_key, edition_id, sort_order, access)
                        SELECT \(app.key), * FROM unnest(\(wanted.map(\.editionID)), \(wanted.map(\.order)),
                                                         \(wanted.map(\.access.rawValue)))
                        """, logger: logger)
                }
                changes.append("set tariff lines of app \(app.key): "
                               + wanted.map { "\($0.editionID):\($0.order):\($0.access.rawValue)" }.joined(separator: ", "))
            }
            let kiosk = catalogue.webKiosk(of: app.key)
            if try await PostgresKioskStore.webKiosks(c, appKey: app.key, logger: logger).first != kiosk {
                if let kiosk {
                    try await c.run("""
                        INSERT INTO app_web_kiosks (app_key, base_url, default_section, sections)
                        VALUES (\(app.key), \(kiosk.baseURL), \(kiosk.defaultSection), \(kiosk.storedSections))
                        ON CONFLICT (app_key) DO UPDATE SET base_url = excluded.base_url,
                            default_section = excluded.default_section, sections = excluded.sections
                        """, logger: logger)
                    changes.append(WebKioskChange.set(kiosk))
                } else {
                    try await c.run("DELETE FROM app_web_kiosks WHERE app_key = \(app.key)", logger: logger)
                    changes.append(WebKioskChange.remove(appKey: app.key))
                }
            }
        }
        return changes + (try await applyAccounts(catalogue.sortedAccounts))
    }

    /// Makes the stored accounts exactly the catalogue's.
    private func applyAccounts(_ wanted: [Account]) async throws -> [String] {
        let current = try await PostgresKioskStore.accounts(connection, logger: logger)
        let changes = AccountChanges.describe(from: current, to: wanted)
        guard !changes.isEmpty else { return [] }
        let kept = Set(wanted.map(\.label))
        for account in current where !kept.contains(account.label) {
            try await connection.run("DELETE FROM accounts WHERE kind = \(account.kind.rawValue) AND username = \(account.username)",
                                     logger: logger)
        }
        let stored = Set(current)
        for account in wanted where !stored.contains(account) {
            try await connection.run("""
                INSERT INTO accounts (kind, username, password_hash, role, scope)
                VALUES (\(account.kind.rawValue), \(account.username), \(account.passwordHash), \(account.role?.rawValue),
                        \(account.scope?.description))
                ON CONFLICT (kind, username) DO UPDATE
                SET password_hash = excluded.password_hash, role = excluded.role, scope = excluded.scope
                """, logger: logger)
        }
        return changes
    }
}
