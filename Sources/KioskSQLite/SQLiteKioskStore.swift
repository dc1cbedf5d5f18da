import Foundation
import GRDB
import KioskModels
import KioskStoreSupport

/// The embedded store: one SQLite file in WAL mode through a GRDB `DatabasePool`.
///
/// Readers never block the writer; every write is one immediate transaction, so
/// check-and-increment operations are atomic across connections and processes.
public final class SQLiteKioskStore: KioskDatabase {
    public let pool: DatabasePool
    public let path: String
    /// Download rows share transactions under load (`getEdicio` records one per call).
    private let downloads: GroupCommit<DownloadRecord>
    /// Identity keys seen per app and day: written once per key and day, in the background.
    private let activity: ActivityLog
    private let versionReader: CatalogueVersionReader
    private let pointReaders: PointReaders
    /// Hears each operation's time, taken where it enters the database (`read`, `snapshotRead`, `longRead`, `write`).
    let observer: any StoreObserver

    /// Opens (creating if needed) and migrates the database at `path`.
    /// `busyTimeout` bounds how long a request waits for a lock before failing.
    public init(path: String, busyTimeout: Double = 5, readers: Int = 8, observer: any StoreObserver = UnobservedStore()) throws {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(busyTimeout)
        configuration.maximumReaderCount = readers
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        self.path = path
        self.observer = observer
        let pool = try Self.retryingWhileLocked(for: busyTimeout) { try DatabasePool(path: path, configuration: configuration) }
        let changes = try CatalogueChanges(databasePath: path)
        try changes.whileMigrating { try KioskSchema.migrator.migrate(pool) }
        self.pool = pool
        pool.add(transactionObserver: CatalogueChangeObserver(changes), extent: .databaseLifetime)
        self.versionReader = try CatalogueVersionReader(path: path, busyTimeout: busyTimeout, changes: changes)
        self.pointReaders = try PointReaders(path: path, count: 2, busyTimeout: busyTimeout)
        self.downloads = GroupCommit { downloads in
            try await pool.write { db in
                for download in downloads { try DownloadLogRecord(download).insertCached(db) }
            }
        }
        self.activity = ActivityLog { sightings in
            try await pool.write { db in
                for sighting in sightings { try ActiveIdentityRecord(sighting).insert(db, onConflict: .ignore) }
            }
        }
    }

    /// Opening a new file turns on WAL, which needs the file to itself for a moment; instances starting
    /// together on it (and their readers) can make that fail at once with "database is locked" rather
    /// than wait, so the opening is tried again until `seconds` have passed.
    private static func retryingWhileLocked<T>(for seconds: Double, _ open: () throws -> T) throws -> T {
        let deadline = ContinuousClock.now + .milliseconds(Int(exactly: (seconds * 1000).rounded()) ?? 0)
        while true {
            do {
                return try open()
            } catch let error as DatabaseError where [.SQLITE_BUSY, .SQLITE_LOCKED].contains(error.resultCode) && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
    }

    /// A read of one statement, on the calling task's thread, on a point reader: a statement is its own
    /// snapshot (WAL), takes microseconds and never waits for the writer, which is less than the thread
    /// hops of GRDB's async `read` and the transaction of a pool read. Writes stay async.
    func read<T>(_ operation: StaticString = #function, _ block: (Database) throws -> T) throws -> T {
        try observer.timing(operation) { try pointReaders.read(block) }
    }

    /// A read of several statements that must see one snapshot: a pool read, in a transaction.
    func snapshotRead<T>(_ operation: StaticString = #function, _ block: (Database) throws -> T) throws -> T {
        try observer.timing(operation) { try pool.read(block) }
    }

    /// A read that may take long (statistics, the console's lists, exports): GRDB's pool read, off the calling thread.
    func longRead<T: Sendable>(_ operation: StaticString = #function,
                               _ block: @Sendable (Database) throws -> T) async throws -> T {
        try await observer.timing(operation) { try await pool.read(block) }
    }

    /// One write transaction, through GRDB's writer.
    func write<T: Sendable>(_ operation: StaticString = #function,
                            _ block: @Sendable (Database) throws -> T) async throws -> T {
        try await observer.timing(operation) { try await pool.write(block) }
    }

    /// Nothing to close: SQLite's connections close with the pool.
    public func close() async {}

    // MARK: Catalogue

    public func catalogueVersion() async throws -> Int64 { try observer.timing(#function) { try versionReader.read() } }

    public func catalogueVersionAtOnce() -> Int64? { versionReader.readWithoutWaiting() }

    public func app(key: String) async throws -> App? {
        try read { db in
            try AppRecord.fetchOne(db.cachedStatement(sql: "SELECT key, name, demo_quota FROM apps WHERE key = ?"),
                                   arguments: [key])?.app
        }
    }

    public func webKiosk(appKey: String) async throws -> AppWebKiosk? {
        try read { db in
            try WebKioskRecord.fetchOne(db.cachedStatement(sql: """
                SELECT \(WebKioskRecord.columnList(as: "w")) FROM app_web_kiosks w WHERE w.app_key = ?
                """), arguments: [appKey])?.webKiosk()
        }
    }

    private static let listingSQL = """
        SELECT \(EditionListingRow.columns)
        FROM tariff_lines t
        JOIN editions e ON e.id = t.edition_id
        JOIN publications p ON p.id = e.publication_id
        JOIN issues i ON i.edition_id = t.edition_id AND i.date = (
            SELECT MAX(date) FROM issues WHERE edition_id = t.edition_id AND withdrawn_at IS NULL)
        WHERE t.app_key = ?
        ORDER BY t.sort_order, t.edition_id
        """

    public func editionListings(appKey: String) async throws -> [EditionListing] {
        try read { db in
            try EditionListingRow.fetchAll(db.cachedStatement(sql: Self.listingSQL), arguments: [appKey]).compactMap(\.listing)
        }
    }

    private static let offeredEditionSQL = """
        SELECT \(OfferedEditionRow.columns) FROM tariff_lines t
        JOIN editions e ON e.id = t.edition_id
        JOIN publications p ON p.id = e.publication_id
        WHERE t.app_key = ? AND t.edition_id = ?
        """

    public func offeredEdition(appKey: String, editionID: Int) async throws -> OfferedEdition? {
        try read { db in
            try OfferedEditionRow.fetchOne(db.cachedStatement(sql: Self.offeredEditionSQL),
                                           arguments: [appKey, editionID])?.offered
        }
    }

    public func issues(editionID: Int, from date: IssueDate?, direction: ListingDirection,
                       limit: Int) async throws -> [IssueSummary] {
        try read { db in
            let bound: String, order: String, arguments: StatementArguments
            switch IssueWindow(from: date, direction: direction) {
            case .newest: (bound, order, arguments) = ("", "DESC", [editionID, limit])
            case .upTo(let date): (bound, order, arguments) = ("AND i.date <= ?", "DESC", [editionID, date.description, limit])
            case .from(let date): (bound, order, arguments) = ("AND i.date >= ?", "ASC", [editionID, date.description, limit])
            }
            let sql = """
                SELECT i.date, \(IssueRecord.Summary.coverColumn)
                FROM issues i
                WHERE i.edition_id = ? AND i.withdrawn_at IS NULL \(bound)
                ORDER BY i.date \(order) LIMIT ?
                """
            return try IssueRecord.Summary.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).compactMap(\.summary)
        }
    }

    private static let visibleIssueSQL = """
        SELECT \(IssueRecord.columnList(as: "i")) FROM issues i
        WHERE i.edition_id = ? AND i.date = ? AND i.withdrawn_at IS NULL
        """
    private static let pagesSQL = """
        SELECT \(PageWithSectionRow.columns)
        FROM pages pg JOIN sections s ON s.id = pg.section_id
        WHERE pg.edition_id = ? AND pg.date = ? ORDER BY pg.number
        """

    public func issueContents(editionID: Int, date: IssueDate) async throws -> IssueContents? {
        try snapshotRead { db in
            guard let issue = try IssueRecord.fetchOne(db.cachedStatement(sql: Self.visibleIssueSQL),
                                                       arguments: [editionID, date.description])
            else { return nil }
            let pages = try PageWithSectionRow.fetchAll(db.cachedStatement(sql: Self.pagesSQL),
                                                        arguments: [editionID, date.description]).map(\.issuePage)
            return IssueContents(editionID: editionID, date: date, revision: issue.revision, pages: pages, bundle: issue.bundle)
        }
    }

    @discardableResult
    public func syncCatalogue(_ catalogue: Catalogue, dryRun: Bool) async throws -> [String] {
        let work: @Sendable (Database) throws -> [String] = { db in try CatalogueSync(db: db).apply(catalogue, dryRun: dryRun) }
        if dryRun {
            // Apply inside a transaction that is always rolled back: the report is exact, nothing changes.
            return try await write { db in
                var changes: [String] = []
                try db.inSavepoint {
                    changes = try work(db)
                    return .rollback
                }
                return changes
            }
        }
        return try await write(#function, work)
    }

    // MARK: Readers

    public func user(username: String) async throws -> User? {
        try read { db in
            try UserRecord.fetchOne(db.cachedStatement(sql: """
                SELECT id, username, name, email, password_hash, created_at FROM users WHERE username = ?
                """), arguments: [username])?.user
        }
    }

    public func user(id: Int) async throws -> User? {
        try read { db in
            try UserRecord.fetchOne(db.cachedStatement(sql: """
                SELECT id, username, name, email, password_hash, created_at FROM users WHERE id = ?
                """), arguments: [id])?.user
        }
    }

    public func replacePasswordHash(userID: Int, from old: String, to new: String) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?",
                           arguments: [new, userID, old])
        }
    }

    public func subscriptions(userID: Int) async throws -> [Subscription] {
        try read { db in
            try SubscriptionRecord.fetchAll(db.cachedStatement(sql: """
                SELECT user_id, edition_id, until FROM subscriptions WHERE user_id = ? ORDER BY edition_id
                """), arguments: [userID]).compactMap(\.subscription)
        }
    }

    public func identity(key: String) async throws -> DeviceIdentity? {
        try read { db in
            try IdentityRecord.fetchOne(db.cachedStatement(sql: """
                SELECT key, app_key, device_key, user_id, device_info, os, first_seen, last_seen, imported
                FROM identities WHERE key = ?
                """), arguments: [key])?.identity
        }
    }

    public func saveIdentity(_ identity: DeviceIdentity, at time: Int64, retiringImported: Bool) async throws {
        let record = IdentityRecord(identity, seenAt: time)
        try await write { db in
            try db.cachedStatement(sql: """
                INSERT INTO identities (key, app_key, device_key, user_id, device_info, os, first_seen, last_seen, imported)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET device_info = excluded.device_info, os = excluded.os,
                                                last_seen = excluded.last_seen
                """).execute(arguments: [record.key, record.appKey, record.deviceKey, record.userID, record.deviceInfo,
                                         record.os, record.firstSeen, record.lastSeen, record.imported])
            if retiringImported {
                try db.cachedStatement(sql: """
                    DELETE FROM identities WHERE app_key = ? AND device_key = ? AND imported AND key != ?
                    """).execute(arguments: [identity.appKey, identity.deviceKey, identity.key])
            }
        }
    }

    @discardableResult
    public func recordActivity(appKey: String, identityKey: String, at time: Int64) -> SightingOutcome {
        activity.record(appKey: appKey, identityKey: identityKey, at: time)
    }

    public func recordDownload(_ download: DownloadRecord) async throws {
        try await observer.timing(#function) { try await downloads.submit(download) }
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
        try await write { db in
            let consumed = try Int.fetchOne(db.cachedStatement(sql: """
                SELECT consumed FROM demo_counters WHERE app_key = ? AND device_key = ?
                """), arguments: [appKey, deviceKey]) ?? 0
            let outcome = DemoOutcome(asking: consumed, quota: quota)
            guard outcome.granted else { return outcome }
            try db.cachedStatement(sql: """
                INSERT INTO demo_counters (app_key, device_key, consumed) VALUES (?, ?, 1)
                ON CONFLICT (app_key, device_key) DO UPDATE SET consumed = consumed + 1
                """).execute(arguments: [appKey, deviceKey])
            var grant = DemoGrantRecord(appKey: appKey, deviceKey: deviceKey, grantedAt: time)
            try grant.insert(db)
            return outcome
        }
    }

    public func useDemoGrant(appKey: String, deviceKey: String, editionID: Int, date: IssueDate,
                             at time: Int64) async throws -> Bool {
        try await write { db in
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
        try read { db in try Self.signInFailures(db, username: username, deviceKey: deviceKey, since: since) }
    }

    private static func signInFailures(_ db: Database, username: String, deviceKey: String?,
                                       since: Int64) throws -> (username: Int, device: Int) {
        let byUser = try Int.fetchOne(db.cachedStatement(sql: """
            SELECT COUNT(*) FROM sign_in_failures WHERE username = ? AND time >= ?
            """), arguments: [username, since]) ?? 0
        guard let deviceKey else { return (byUser, 0) }
        let byDevice = try Int.fetchOne(db.cachedStatement(sql: """
            SELECT COUNT(*) FROM sign_in_failures WHERE device_key = ? AND time >= ?
            """), arguments: [deviceKey, since]) ?? 0
        return (byUser, byDevice)
    }

    public func beginSignInAttempt(username: String, deviceKey: String?, since: Int64, maxFailures: Int,
                                   at time: Int64) async throws -> Int64? {
        try await write { db in
            let counts = try Self.signInFailures(db, username: username, deviceKey: deviceKey, since: since)
            guard !SignInPolicy(maxFailures: maxFailures).isLockedOut(failures: counts) else { return nil }
            var failure = SignInFailureRecord(username: username, deviceKey: deviceKey, time: time)
            try failure.insert(db)
            return failure.id
        }
    }

    public func forgetSignInAttempt(_ attempt: Int64) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM sign_in_failures WHERE id = ?", arguments: [attempt])
        }
    }
}

extension SQLiteKioskStore: TableExport {
    /// Reads on a thread of its own, at most one batch ahead of `body`.
    public func exportRows(table: String, columns: [String], batchSize: Int,
                           into body: ([[String?]]) async throws -> Void) async throws {
        let pool = self.pool
        let sql = "SELECT " + columns.map { "CAST(\"\($0)\" AS TEXT)" }.joined(separator: ", ") + " FROM \"\(table)\""
        let (batches, continuation) = AsyncThrowingStream<[[String?]], any Error>.makeStream()
        // Starts at 0 and is signalled once (libdispatch traps when a semaphore is freed below its initial value).
        let handedOver = DispatchSemaphore(value: 0)
        handedOver.signal()
        let stopped = LockedFlag()
        Thread {
            do {
                try pool.read { db in
                    let cursor = try Row.fetchCursor(db, sql: sql)
                    var batch: [[String?]] = []
                    func hand() throws {
                        handedOver.wait()   // the batch before this one is done
                        if stopped.isSet { throw CancellationError() }
                        continuation.yield(batch)
                        batch.removeAll(keepingCapacity: true)
                    }
                    while let row = try cursor.next() {
                        batch.append((0..<columns.count).map { row[$0] as String? })
                        if batch.count == batchSize { try hand() }
                    }
                    if !batch.isEmpty { try hand() }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }.start()
        do {
            for try await batch in batches {
                try await body(batch)
                handedOver.signal()
            }
        } catch {
            stopped.set()
            handedOver.signal()
            throw error
        }
    }
}
