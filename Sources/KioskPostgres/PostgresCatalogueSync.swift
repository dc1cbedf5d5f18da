import KioskModels
import KioskStoreSupport
import Logging
import PostgresNIO

/// Makes the database's catalogue match the configuration, idempotently: the changes `CatalogueDiff`
/// finds from the stored catalogue, made in SQL, reported in its lines. Syncs from several instances take
/// turns on an advisory lock, so each sees the catalogue the previous one left.
struct PostgresCatalogueSync {
    let connection: PostgresConnection
    let logger: Logger

    /// `pg_advisory_xact_lock` key of catalogue syncs: "CATALOG" in ASCII.
    static let lock: Int64 = 0x43_4154_414C_4F47

    /// Applies the changes; returns what changed, whose events the caller appends (a dry run does not).
    func apply(_ catalogue: Catalogue) async throws -> CatalogueDiff {
        let c = connection
        try await c.run("SELECT pg_advisory_xact_lock(\(Self.lock))", logger: logger)
        let diff = CatalogueDiff(from: try await PostgresKioskStore.catalogue(c, logger: logger), to: catalogue)
        for change in diff.changes {
            switch change {
            case .savePublication(let publication):
                try await c.run("""
                    INSERT INTO publications (id, name) VALUES (\(publication.id), \(publication.name))
                    ON CONFLICT (id) DO UPDATE SET name = excluded.name
                    """, logger: logger)
            case .saveEdition(let edition):
                try await c.run("""
                    INSERT INTO editions (id, publication_id, name, created_on)
                    VALUES (\(edition.id), \(edition.publicationID), \(edition.name), \(edition.createdOn.description))
                    ON CONFLICT (id) DO UPDATE SET publication_id = excluded.publication_id, name = excluded.name,
                                                   created_on = excluded.created_on
                    """, logger: logger)
            case .removeApp(let key):
                try await c.run("DELETE FROM apps WHERE key = \(key)", logger: logger)
            case .saveApp(let app):
                try await c.run("""
                    INSERT INTO apps (key, name, demo_quota) VALUES (\(app.key), \(app.name), \(app.demoQuota))
                    ON CONFLICT (key) DO UPDATE SET name = excluded.name, demo_quota = excluded.demo_quota
                    """, logger: logger)
            case .setTariffLines(let appKey, let lines):
                try await c.run("DELETE FROM tariff_lines WHERE app_key = \(appKey)", logger: logger)
                let lines = lines.sorted(by: TariffLine.byEdition)
                if !lines.isEmpty {
                    try await c.run("""
                        INSERT INTO tariff_lines (app_key, edition_id, sort_order, access)
                        SELECT \(appKey), * FROM unnest(\(lines.map(\.editionID)), \(lines.map(\.order)),
                                                        \(lines.map(\.access.rawValue)))
                        """, logger: logger)
                }
            case .saveWebKiosk(let kiosk):
                try await c.run("""
                    INSERT INTO app_web_kiosks (app_key, base_url, default_section, sections)
                    VALUES (\(kiosk.appKey), \(kiosk.baseURL), \(kiosk.defaultSection), \(kiosk.storedSections))
                    ON CONFLICT (app_key) DO UPDATE SET base_url = excluded.base_url,
                        default_section = excluded.default_section, sections = excluded.sections
                    """, logger: logger)
            case .removeWebKiosk(let appKey):
                try await c.run("DELETE FROM app_web_kiosks WHERE app_key = \(appKey)", logger: logger)
            case .setProducts(let appKey, let products):
                try await c.run("DELETE FROM store_products WHERE app_key = \(appKey)", logger: logger)
                for (position, product) in products.enumerated() {
                    try await c.run("""
                        INSERT INTO store_products (app_key, id, position, apple_id, google_id, kind, editions, credits, scope)
                        VALUES (\(appKey), \(product.id), \(position), \(product.storeIDs[.apple]), \(product.storeIDs[.google]),
                                \(product.kind.rawValue), \(product.storedEditions), \(product.credits), \(product.scope.rawValue))
                        """, logger: logger)
                }
            case .removeAccount(let account):
                try await c.run("DELETE FROM accounts WHERE kind = \(account.kind.rawValue) AND username = \(account.username)",
                                logger: logger)
            case .saveAccount(let account):
                try await c.run("""
                    INSERT INTO accounts (kind, username, password_hash, role, scope)
                    VALUES (\(account.kind.rawValue), \(account.username), \(account.passwordHash), \(account.role?.rawValue),
                            \(account.scope?.description))
                    ON CONFLICT (kind, username) DO UPDATE
                    SET password_hash = excluded.password_hash, role = excluded.role, scope = excluded.scope
                    """, logger: logger)
            }
        }
        return diff
    }
}
