import Foundation
import GRDB
import KioskModels

/// The embedded store: one SQLite file in WAL mode through a GRDB `DatabasePool`.
///
/// Readers never block the writer; every write is one immediate transaction, so
/// check-and-increment operations are atomic across connections and processes.
public final class SQLiteKioskStore: KioskStore {
    public let pool: DatabasePool
    public let path: String
    /// Download rows share transactions under load (`getEdicio` records one per call).
    private let downloads: GroupCommit<DownloadRecord>
    /// Identity keys seen per app and day: written once per key and day, in the background.
    private let activity: ActivityLog

    /// Opens (creating if needed) and migrates the database at `path`.
    /// `busyTimeout` bounds how long a request waits for a lock before failing.
    public init(path: String, busyTimeout: Double = 5, readers: Int = 8) throws {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(busyTimeout)
        configuration.maximumReaderCount = readers
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        self.path = path
        self.pool = try DatabasePool(path: path, configuration: configuration)
        try KioskSchema.migrator.migrate(pool)
        self.downloads = GroupCommit(writer: pool) { db, download in
            try db.cachedStatement(sql: """
                INSERT INTO downloads (edition_id, date, app_key, identity_key, user_id, claimed_user_id,
                                       device_key, os, time)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [download.editionID, download.date.description, download.appKey,
                                         download.identityKey, download.userID, download.claimedUserID,
                                         download.deviceKey, download.os, download.time])
        }
        self.activity = ActivityLog(writer: pool)
    }

    /// Reads on the calling task's thread. A read of hot pages takes microseconds and never waits for
    /// the writer (WAL), which is less than the thread hops of GRDB's async `read`; writes stay async.
    func read<T>(_ block: (Database) throws -> T) throws -> T {
        try pool.read(block)
    }

    // MARK: Catalogue

    public func app(key: String) async throws -> App? {
        try read { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT key, name, demo_quota FROM apps WHERE key = ?"),
                             arguments: [key])
                .map { App(key: $0[0], name: $0[1], demoQuota: $0[2]) }
        }
    }

    private static let offeredColumns = """
        t.app_key, t.edition_id, t.sort_order, t.access, e.publication_id, e.name, e.created_on, p.name
        """

    private static func offered(_ row: Row) -> OfferedEdition {
        let access = LineAccess(rawValue: row[3]) ?? .subscribers
        let editionID: Int = row[1]
        return OfferedEdition(
            line: TariffLine(appKey: row[0], editionID: editionID, order: row[2], access: access),
            edition: Edition(id: editionID, publicationID: row[4], name: row[5],
                             createdOn: IssueDate(row[6] as String) ?? IssueDate(daysSinceEpoch: 0)),
            publicationName: row[7])
    }

    public func editionListings(appKey: String) async throws -> [EditionListing] {
        try read { db in
            let sql = """
                SELECT \(Self.offeredColumns), i.date,
                       (SELECT pg.jpg_path FROM pages pg
                        WHERE pg.edition_id = i.edition_id AND pg.date = i.date ORDER BY pg.number LIMIT 1)
                FROM tariff_lines t
                JOIN editions e ON e.id = t.edition_id
                JOIN publications p ON p.id = e.publication_id
                JOIN issues i ON i.edition_id = t.edition_id AND i.date = (
                    SELECT MAX(date) FROM issues WHERE edition_id = t.edition_id AND withdrawn_at IS NULL)
                WHERE t.app_key = ?
                ORDER BY t.sort_order, t.edition_id
                """
            return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: [appKey]).compactMap { row in
                guard let date = IssueDate(row[8] as String) else { return nil }
                return EditionListing(offered: Self.offered(row), newest: IssueSummary(date: date, coverPath: row[9]))
            }
        }
    }

    public func offeredEdition(appKey: String, editionID: Int) async throws -> OfferedEdition? {
        try read { db in
            let sql = """
                SELECT \(Self.offeredColumns) FROM tariff_lines t
                JOIN editions e ON e.id = t.edition_id
                JOIN publications p ON p.id = e.publication_id
                WHERE t.app_key = ? AND t.edition_id = ?
                """
            return try Row.fetchOne(db.cachedStatement(sql: sql), arguments: [appKey, editionID]).map(Self.offered)
        }
    }

    public func issues(editionID: Int, from date: IssueDate?, direction: ListingDirection,
                       limit: Int) async throws -> [IssueSummary] {
        try read { db in
            let comparison = direction == .descending ? "<=" : ">="
            let order = direction == .descending ? "DESC" : "ASC"
            let bound = date == nil ? "" : "AND i.date \(comparison) ?"
            let sql = """
                SELECT i.date, (SELECT pg.jpg_path FROM pages pg
                                WHERE pg.edition_id = i.edition_id AND pg.date = i.date ORDER BY pg.number LIMIT 1)
                FROM issues i
                WHERE i.edition_id = ? AND i.withdrawn_at IS NULL \(bound)
                ORDER BY i.date \(date == nil ? "DESC" : order) LIMIT ?
                """
            var arguments: StatementArguments = [editionID]
            if let date { arguments += [date.description] }
            arguments += [limit]
            return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).compactMap { row in
                IssueDate(row[0] as String).map { IssueSummary(date: $0, coverPath: row[1]) }
            }
        }
    }

    public func issueContents(editionID: Int, date: IssueDate) async throws -> IssueContents? {
        try read { db in
            guard let issue = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT revision, bundle_path, bundle_size, bundle_sha256 FROM issues
                WHERE edition_id = ? AND date = ? AND withdrawn_at IS NULL
                """), arguments: [editionID, date.description])
            else { return nil }
            let pages = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT pg.id, pg.number, pg.section_id, s.name, pg.pdf_path, pg.jpg_path, pg.jpga_path
                FROM pages pg JOIN sections s ON s.id = pg.section_id
                WHERE pg.edition_id = ? AND pg.date = ? ORDER BY pg.number
                """), arguments: [editionID, date.description]).map { row in
                Page(id: row[0], number: row[1], section: Section(id: row[2], name: row[3]),
                     files: PageFiles(pdf: row[4], jpg: row[5], jpgA: row[6]))
            }
            let bundle: BundleInfo? = (issue[1] as String?).map {
                BundleInfo(path: $0, size: issue[2] ?? 0, sha256: issue[3] ?? "")
            }
            return IssueContents(editionID: editionID, date: date, revision: issue[0], pages: pages, bundle: bundle)
        }
    }

    @discardableResult
    public func syncCatalogue(_ catalogue: Catalogue, dryRun: Bool) async throws -> [String] {
        let work: @Sendable (Database) throws -> [String] = { db in try CatalogueSync(db: db).apply(catalogue) }
        if dryRun {
            // Apply inside a transaction that is always rolled back: the report is exact, nothing changes.
            return try await pool.write { db in
                var changes: [String] = []
                try db.inSavepoint {
                    changes = try work(db)
                    return .rollback
                }
                return changes
            }
        }
        return try await pool.write(work)
    }

    // MARK: Readers

    private static func user(_ row: Row) -> User {
        User(id: row[0], username: row[1], name: row[2], email: row[3], passwordHash: row[4])
    }

    public func user(username: String) async throws -> User? {
        try read { db in
            try Row.fetchOne(db.cachedStatement(sql: """
                SELECT id, username, name, email, password_hash FROM users WHERE username = ?
                """), arguments: [username]).map(Self.user)
        }
    }

    public func user(id: Int) async throws -> User? {
        try read { db in
            try Row.fetchOne(db.cachedStatement(sql: """
                SELECT id, username, name, email, password_hash FROM users WHERE id = ?
                """), arguments: [id]).map(Self.user)
        }
    }

    public func replacePasswordHash(userID: Int, from old: String, to new: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?",
                           arguments: [new, userID, old])
        }
    }

    public func subscriptions(userID: Int) async throws -> [Subscription] {
        try read { db in
            try Row.fetchAll(db.cachedStatement(sql: """
                SELECT user_id, edition_id, until FROM subscriptions WHERE user_id = ? ORDER BY edition_id
                """), arguments: [userID]).compactMap { row in
                IssueDate(row[2] as String).map { Subscription(userID: row[0], editionID: row[1], until: $0) }
            }
        }
    }

    public func identity(key: String) async throws -> DeviceIdentity? {
        try read { db in
            try Row.fetchOne(db.cachedStatement(sql: """
                SELECT key, app_key, device_key, user_id, device_info, os, imported FROM identities WHERE key = ?
                """), arguments: [key]).map { row in
                DeviceIdentity(key: row[0], appKey: row[1], deviceKey: row[2], userID: row[3],
                               deviceInfo: DeviceInfoCoding.decode(row[4]), os: row[5], imported: row[6])
            }
        }
    }

    public func saveIdentity(_ identity: DeviceIdentity, at time: Int64, retiringImported: Bool) async throws {
        try await pool.write { db in
            try db.cachedStatement(sql: """
                INSERT INTO identities (key, app_key, device_key, user_id, device_info, os, first_seen, last_seen, imported)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET device_info = excluded.device_info, os = excluded.os,
                                                last_seen = excluded.last_seen
                """).execute(arguments: [identity.key, identity.appKey, identity.deviceKey, identity.userID,
                                         DeviceInfoCoding.encode(identity.deviceInfo), identity.os, time, time,
                                         identity.imported])
            if retiringImported {
                try db.cachedStatement(sql: """
                    DELETE FROM identities WHERE app_key = ? AND device_key = ? AND imported AND key != ?
                    """).execute(arguments: [identity.appKey, identity.deviceKey, identity.key])
            }
        }
    }

    public func recordActivity(appKey: String, identityKey: String, at time: Int64) {
        activity.record(ActivityLog.Entry(day: time / 86_400, appKey: appKey, identityKey: identityKey))
    }

    public func recordDownload(_ download: DownloadRecord) async throws {
        try await downloads.submit(download)
    }

    // MARK: Demos

    public func demosConsumed(appKey: String, deviceKey: String) async throws -> Int {
        try read { db in
            try Int.fetchOne(db.cachedStatement(sql: """
                SELECT consumed FROM demo_counters WHERE app_key = ? AND device_key = ?
                """), arguments: [appKey, deviceKey]) ?? 0
        }
    }

    public func consumeDemo(appKey: String, deviceKey: String, quota: Int, at time: Int64) async throws -> DemoOutcome {
        try await pool.write { db in
            let consumed = try Int.fetchOne(db.cachedStatement(sql: """
                SELECT consumed FROM demo_counters WHERE app_key = ? AND device_key = ?
                """), arguments: [appKey, deviceKey]) ?? 0
            guard consumed < quota else { return DemoOutcome(granted: false, consumed: consumed) }
            try db.cachedStatement(sql: """
                INSERT INTO demo_counters (app_key, device_key, consumed) VALUES (?, ?, 1)
                ON CONFLICT (app_key, device_key) DO UPDATE SET consumed = consumed + 1
                """).execute(arguments: [appKey, deviceKey])
            try db.cachedStatement(sql: """
                INSERT INTO demo_grants (app_key, device_key, granted_at) VALUES (?, ?, ?)
                """).execute(arguments: [appKey, deviceKey, time])
            return DemoOutcome(granted: true, consumed: consumed + 1)
        }
    }

    public func useDemoGrant(appKey: String, deviceKey: String, editionID: Int, date: IssueDate,
                             at time: Int64) async throws -> Bool {
        try await pool.write { db in
            let bound = try Bool.fetchOne(db.cachedStatement(sql: """
                SELECT 1 FROM demo_grants WHERE app_key = ? AND device_key = ? AND edition_id = ? AND date = ?
                """), arguments: [appKey, deviceKey, editionID, date.description]) ?? false
            if bound { return true }
            try db.cachedStatement(sql: """
                UPDATE demo_grants SET edition_id = ?, date = ?, used_at = ?
                WHERE id = (SELECT id FROM demo_grants WHERE app_key = ? AND device_key = ? AND edition_id IS NULL
                            ORDER BY id LIMIT 1)
                """).execute(arguments: [editionID, date.description, time, appKey, deviceKey])
            return db.changesCount == 1
        }
    }

    // MARK: Sign-in throttling

    public func signInFailures(username: String, deviceKey: String?, since: Int64) async throws -> (username: Int, device: Int) {
        try read { db in
            let byUser = try Int.fetchOne(db.cachedStatement(sql: """
                SELECT COUNT(*) FROM sign_in_failures WHERE username = ? AND time >= ?
                """), arguments: [username, since]) ?? 0
            guard let deviceKey else { return (byUser, 0) }
            let byDevice = try Int.fetchOne(db.cachedStatement(sql: """
                SELECT COUNT(*) FROM sign_in_failures WHERE device_key = ? AND time >= ?
                """), arguments: [deviceKey, since]) ?? 0
            return (byUser, byDevice)
        }
    }

    public func recordSignInFailure(username: String, deviceKey: String?, at time: Int64) async throws {
        try await pool.write { db in
            try db.cachedStatement(sql: """
                INSERT INTO sign_in_failures (username, device_key, time) VALUES (?, ?, ?)
                """).execute(arguments: [username, deviceKey, time])
        }
    }
}

/// Device facts are stored as a JSON object of strings.
enum DeviceInfoCoding {
    static func encode(_ info: [String: String]) -> String {
        guard !info.isEmpty, let data = try? JSONEncoder.sorted.encode(info) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    static func decode(_ text: String) -> [String: String] {
        (try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))) ?? [:]
    }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
