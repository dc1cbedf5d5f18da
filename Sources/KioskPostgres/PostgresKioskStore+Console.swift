import KioskModels
import KioskStoreSupport
import Logging
import PostgresNIO

extension PostgresKioskStore {
    public func catalogue() async throws -> Catalogue {
        try await withConnection { [self] c in try await Self.catalogue(c, logger: logger) }
    }

    /// The stored catalogue: publications and editions by id, apps by key, lines by app then order,
    /// accounts by kind then username, web kiosks by app, products by app then position.
    static func catalogue(_ c: PostgresConnection, logger: Logger) async throws -> Catalogue {
        let publications = try await c.rows("SELECT id, name FROM publications ORDER BY id", (Int, String).self, logger: logger)
        let editions = try await c.rows("SELECT id, publication_id, name, created_on FROM editions ORDER BY id",
                                        (Int, Int, String, String).self, logger: logger)
        let apps = try await c.rows("SELECT key, name, demo_quota FROM apps ORDER BY key", (String, String, Int).self, logger: logger)
        let lines = try await c.rows("SELECT app_key, edition_id, sort_order, access FROM tariff_lines ORDER BY app_key, sort_order",
                                     (String, Int, Int, String).self, logger: logger)
        let accounts = try await Self.accounts(c, logger: logger)
        let webKiosks = try await Self.webKiosks(c, appKey: nil, logger: logger)
        let products = try await c.rows("""
            SELECT app_key, id, apple_id, google_id, kind, editions, credits, scope FROM store_products
            ORDER BY app_key COLLATE "C", position
            """, (String, String, String?, String?, String, String, Int, String).self, logger: logger)
        return Catalogue(
            publications: publications.map { Publication(id: $0.0, name: $0.1) },
            editions: editions.map { Edition(id: $0.0, publicationID: $0.1, name: $0.2, storedCreatedOn: $0.3) },
            apps: apps.map { App(key: $0.0, name: $0.1, demoQuota: $0.2) },
            tariffLines: lines.map { TariffLine(appKey: $0.0, editionID: $0.1, order: $0.2, storedAccess: $0.3) },
            accounts: accounts, webKiosks: webKiosks,
            products: products.map {
                StoreProduct(appKey: $0.0, id: $0.1, appleID: $0.2, googleID: $0.3, storedKind: $0.4, storedEditions: $0.5,
                             credits: $0.6, storedScope: $0.7)
            })
    }

    /// The stored web kiosks by app key (`C` order, as SQLite's); only `appKey`'s when given.
    static func webKiosks(_ c: PostgresConnection, appKey: String?, logger: Logger) async throws -> [AppWebKiosk] {
        try await c.rows("""
            SELECT app_key, base_url, default_section, sections FROM app_web_kiosks
            WHERE \(appKey)::text IS NULL OR app_key = \(appKey) ORDER BY app_key COLLATE "C"
            """, (String, String?, String?, String).self, logger: logger).map { row in
            AppWebKiosk(appKey: row.0, baseURL: row.1, sections: try AppWebKiosk.sections(stored: row.3, appKey: row.0),
                        defaultSection: row.2)
        }
    }

    public func accounts() async throws -> [Account] {
        try await withConnection { [self] c in try await Self.accounts(c, logger: logger) }
    }

    static func accounts(_ c: PostgresConnection, logger: Logger) async throws -> [Account] {
        try await c.rows("SELECT kind, username, password_hash, role, scope FROM accounts ORDER BY kind COLLATE \"C\", username COLLATE \"C\"",
                         (String, String, String, String?, String?).self, logger: logger).compactMap {
            Account(storedKind: $0.0, username: $0.1, passwordHash: $0.2, role: $0.3, scope: $0.4)
        }
    }

    public func editionIssues(editionID: Int, limit: Int) async throws -> [StoredIssue] {
        try await withConnection { [self] c in
            try await c.rows("""
                SELECT date, revision, page_count, bundle_path, bundle_size, bundle_sha256, withdrawn_at FROM issues
                WHERE edition_id = \(editionID) ORDER BY date DESC LIMIT \(limit)
                """, (String, Int, Int, String?, Int64?, String?, Int64?).self, logger: logger).compactMap { row in
                IssueDate(row.0).map {
                    StoredIssue(date: $0, revision: row.1, pageCount: row.2,
                                bundle: BundleInfo(storedPath: row.3, size: row.4, sha256: row.5), withdrawnAt: row.6)
                }
            }
        }
    }

    public func findUsers(matching text: String, limit: Int) async throws -> [User] {
        let pattern = LikePattern.containing(text)
        return try await withConnection { [self] c in
            try await c.rows("""
                SELECT \(unescaped: Self.userColumns) FROM users
                WHERE username ILIKE \(pattern) OR name ILIKE \(pattern) OR email ILIKE \(pattern)
                ORDER BY lower(username) LIMIT \(limit)
                """, (Int, String, String, String, String).self, logger: logger).map(Self.user)
        }
    }

    public func setPasswordHash(username: String, to hash: String) async throws -> Bool {
        try await withTransaction { [self] c in
            try await c.run("UPDATE users SET password_hash = \(hash) WHERE lower(username) = lower(\(username)) RETURNING id", logger: logger) > 0
        }
    }

    public func clearSignInFailures(username: String) async throws -> Int {
        try await withTransaction { [self] c in
            try await c.run("DELETE FROM sign_in_failures WHERE lower(username) = lower(\(username)) RETURNING id", logger: logger)
        }
    }

    public func recordAudit(_ entry: AuditEntry) async throws {
        try await withTransaction { [self] c in
            try await c.run("""
                INSERT INTO audit_log (time, actor, action, subject, before, after)
                VALUES (\(entry.time), \(entry.actor), \(entry.action), \(entry.subject), \(entry.before), \(entry.after))
                """, logger: logger)
        }
    }

    public func auditEntries(limit: Int) async throws -> [AuditEntry] {
        try await withConnection { [self] c in
            try await c.rows("SELECT time, actor, action, subject, before, after FROM audit_log ORDER BY id DESC LIMIT \(limit)",
                             (Int64, String, String, String, String, String).self, logger: logger)
                .map { AuditEntry(time: $0.0, actor: $0.1, action: $0.2, subject: $0.3, before: $0.4, after: $0.5) }
        }
    }

    public func activity(in days: DayPeriod) async throws -> ConsoleActivity {
        let period = days.seconds
        return try await withConnection { [self] c in
            let failures = try await c.value("""
                SELECT COUNT(*)::bigint FROM sign_in_failures WHERE time >= \(period.lowerBound) AND time < \(period.upperBound)
                """, Int.self, logger: logger) ?? 0
            let builds = try await c.rows("""
                SELECT COUNT(*)::bigint, COALESCE(SUM(bytes), 0)::bigint FROM bundle_builds
                WHERE time >= \(period.lowerBound) AND time < \(period.upperBound)
                """, (Int, Int64).self, logger: logger).first
            return ConsoleActivity(signInFailures: failures, bundleBuilds: builds?.0 ?? 0, bundleBytes: builds?.1 ?? 0)
        }
    }
}
