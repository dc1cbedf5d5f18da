import GRDB
import KioskModels
import KioskStoreSupport

extension SQLiteKioskStore {
    public func catalogue() async throws -> Catalogue {
        try await longRead { db in try Self.catalogue(db) }
    }

    /// The stored catalogue: publications and editions by id, apps by key, lines by app then order,
    /// accounts by kind then username, web kiosks by app, products by app then position.
    static func catalogue(_ db: Database) throws -> Catalogue {
        Catalogue(
            publications: try PublicationRecord.order(PublicationRecord.Columns.id).fetchAll(db)
                .map { Publication(id: $0.id, name: $0.name) },
            editions: try EditionRecord.order(EditionRecord.Columns.id).fetchAll(db).map(\.edition),
            apps: try AppRecord.order(AppRecord.Columns.key).fetchAll(db).map(\.app),
            tariffLines: try TariffLineRecord.order(TariffLineRecord.Columns.appKey, TariffLineRecord.Columns.sortOrder)
                .fetchAll(db).map(\.line),
            accounts: try accounts(db),
            webKiosks: try WebKioskRecord.order(WebKioskRecord.Columns.appKey).fetchAll(db).map { try $0.webKiosk() },
            products: try StoreProductRecord.order(StoreProductRecord.Columns.appKey, StoreProductRecord.Columns.position)
                .fetchAll(db).map(\.product))
    }

    public func accounts() async throws -> [Account] {
        try await longRead { db in try Self.accounts(db) }
    }

    static func accounts(_ db: Database) throws -> [Account] {
        try AccountRecord.fetchAll(db, sql: """
            SELECT \(AccountRecord.columnList(as: "a")) FROM accounts a ORDER BY a.kind, a.username
            """).compactMap(\.account)
    }

    public func editionIssues(editionID: Int, limit: Int) async throws -> [StoredIssue] {
        try await longRead { db in
            try IssueRecord.fetchAll(db.cachedStatement(sql: """
                SELECT \(IssueRecord.columnList(as: "i")) FROM issues i WHERE i.edition_id = ? ORDER BY i.date DESC LIMIT ?
                """), arguments: [editionID, limit]).compactMap { issue in
                IssueDate(issue.date).map {
                    StoredIssue(date: $0, revision: issue.revision, pageCount: issue.pageCount, bundle: issue.bundle,
                                withdrawnAt: issue.withdrawnAt)
                }
            }
        }
    }

    public func findUsers(matching text: String, limit: Int) async throws -> [User] {
        let pattern = LikePattern.containing(text)
        return try await longRead { db in
            try UserRecord.fetchAll(db, sql: """
                SELECT * FROM users WHERE username LIKE ?1 ESCAPE '\\' OR name LIKE ?1 ESCAPE '\\' OR email LIKE ?1 ESCAPE '\\'
                ORDER BY username LIMIT ?2
                """, arguments: [pattern, limit]).map(\.user)
        }
    }

    public func setPasswordHash(username: String, to hash: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "UPDATE users SET password_hash = ? WHERE username = ?", arguments: [hash, username])
            return db.changesCount > 0
        }
    }

    public func clearSignInFailures(username: String) async throws -> Int {
        try await write { db in
            try db.execute(sql: "DELETE FROM sign_in_failures WHERE username = ?", arguments: [username])
            return db.changesCount
        }
    }

    public func recordAudit(_ entry: AuditEntry) async throws {
        try await write { db in
            try db.execute(sql: "INSERT INTO audit_log (time, actor, action, subject, before, after) VALUES (?, ?, ?, ?, ?, ?)",
                           arguments: [entry.time, entry.actor, entry.action, entry.subject, entry.before, entry.after])
        }
    }

    public func auditEntries(limit: Int) async throws -> [AuditEntry] {
        try await longRead { db in
            try AuditEntryRecord.fetchAll(db, sql: """
                SELECT \(AuditEntryRecord.columnList(as: "l")) FROM audit_log l ORDER BY l.id DESC LIMIT ?
                """, arguments: [limit]).map(\.entry)
        }
    }

    public func activity(in days: DayPeriod) async throws -> ConsoleActivity {
        let period = days.seconds
        return try await longRead { db in
            let failures = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sign_in_failures WHERE time >= ? AND time < ?",
                                            arguments: [period.lowerBound, period.upperBound]) ?? 0
            let builds = try BundleBuildTotalsRow.fetchOne(db, sql: """
                SELECT COUNT(*) AS builds, COALESCE(SUM(bytes), 0) AS bytes FROM bundle_builds WHERE time >= ? AND time < ?
                """, arguments: [period.lowerBound, period.upperBound])
            return ConsoleActivity(signInFailures: failures, bundleBuilds: builds?.builds ?? 0, bundleBytes: builds?.bytes ?? 0)
        }
    }
}
