import Foundation
import KioskModels
import KioskStoreSupport
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The store for more than one machine: PostgreSQL through postgres-nio's `PostgresClient` pool.
///
/// Every instance of Kiosk may share one database. Checks that must hold across instances (the demo
/// quota, demo grants, catalogue syncs) take a transaction-scoped advisory lock on what they check,
/// so two instances serialize exactly where SQLite's single writer would. Downloads are
/// group-committed like SQLite's; a failed connection fails the call (`-32603`) and the pool
/// reconnects by itself when the server is back.
///
/// The store works while its `services` run (the pool, and `CatalogueVersionListener`, which knows the
/// catalogue version at once): the server runs them in its service group and then calls `migrate()`;
/// a tool without a service group uses `connect`, which runs them until `close()`.
public final class PostgresKioskStore: KioskDatabase {
    let client: PostgresClient
    let logger: Logger
    let connections: ConnectionLeaser
    private let listener: CatalogueVersionListener
    private let connectionWait: Duration
    /// The services' task when `connect` started them.
    private let running = Mutex<Task<Void, Never>?>(nil)
    private let downloads: GroupCommit<DownloadRecord>
    private let activity: ActivityLog
    /// Hears each operation's time, taken where it leases a connection (`withConnection`, `withTransaction`).
    let observer: any StoreObserver

    /// A store whose services are not running yet.
    /// `connectionWait` bounds how long each call waits for a connection (at start, three times that).
    public init(_ configuration: PostgresClient.Configuration, name: String? = nil, connectionWait: Duration = .seconds(5),
                observer: any StoreObserver = UnobservedStore(), logger: Logger) {
        let name = name ?? "postgres://\(configuration.username)@\(configuration.host ?? configuration.unixSocketPath ?? "")"
            + (configuration.port.map { ":\($0)" } ?? "") + "/\(configuration.database ?? "")"
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        self.logger = logger
        self.connectionWait = connectionWait
        self.observer = observer
        let connections = ConnectionLeaser(client: client, name: name, wait: connectionWait, serverDown: LockedFlag(), logger: logger)
        self.connections = connections
        self.listener = CatalogueVersionListener(client: client, observer: observer, logger: logger)
        self.downloads = GroupCommit { downloads in
            try await connections.transaction(limit: connections.callLimit) { try await Self.insert(downloads, on: $0, logger: logger) }
        }
        self.activity = ActivityLog { sightings in
            _ = try await connections.leased { connection in
                try await connection.run("""
                    INSERT INTO active_identities (day, app_key, identity_key)
                    SELECT * FROM unnest(\(sightings.map(\.day)), \(sightings.map(\.appKey)), \(sightings.map(\.identityKey)))
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
            }
        }
    }

    /// What must run while the store is used, in this order (a service group stops them in reverse).
    public var services: [any Service] { [Pool(client: client, started: poolStarted), listener] }

    /// The pool as a service that says when it started: leasing a connection before then works but warns.
    private struct Pool: Service, CustomStringConvertible {
        let client: PostgresClient
        let started: OneTimeSignal
        /// What the service group logs: the name alone, never the client's configuration (its password).
        var description: String { "PostgreSQL pool" }
        func run() async {
            started.signal()
            await client.run()
        }
    }
    private let poolStarted = OneTimeSignal()

    /// Applies missing migrations (waiting for another instance doing the same), once `services` run.
    public func migrate() async throws {
        await poolStarted.wait()
        try Task.checkCancellation()
        let client = self.client, logger = self.logger
        let applied = try await connections.leased(waiting: connectionWait * 3) { _ in
            try await PostgresSchema.migrate(client, logger: logger)
        }
        if !applied.isEmpty { logger.info("database migrated", metadata: ["versions": "\(applied)"]) }
        listener.migrated()
    }

    /// For tools and tests without a service group: a store whose pool runs in a task it owns until
    /// `close()`, migrated. Without the listener: the catalogue version is read per call.
    public static func connect(_ configuration: PostgresClient.Configuration, name: String? = nil,
                               connectionWait: Duration = .seconds(5), logger: Logger) async throws -> PostgresKioskStore {
        let store = PostgresKioskStore(configuration, name: name, connectionWait: connectionWait, logger: logger)
        let pool = Pool(client: store.client, started: store.poolStarted)
        store.running.withLock { $0 = Task { await pool.run() } }
        do {
            try await store.migrate()
        } catch {
            await store.close()
            throw error
        }
        return store
    }

    /// Stops the services `connect` started (a service group stops its own).
    public func close() async {
        guard let task = running.withLock({ $0 }) else { return }
        task.cancel()
        await task.value
    }

    /// Runs `body` on a pooled connection. A wire call's work (`bounded`) fails after the connection
    /// wait plus `ConnectionLeaser.queryAllowance`; the operator's (statistics, imports, copies) takes
    /// the time it needs.
    func withConnection<Result: Sendable>(_ operation: StaticString = #function, bounded: Bool = true,
                                          _ body: @escaping @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        try await observer.timing(operation) { try await connections.leased(limit: bounded ? connections.callLimit : nil, body) }
    }

    /// Runs `body` in one transaction, bounded as `withConnection` is.
    func withTransaction<Result: Sendable>(_ operation: StaticString = #function, bounded: Bool = true,
                                           _ body: @escaping @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        try await observer.timing(operation) { try await connections.transaction(limit: bounded ? connections.callLimit : nil, body) }
    }

    /// `write` for a change to what the catalogue shows: once committed, the version is read again, so
    /// that this instance's next call sees the change even before its notification arrives.
    func changingCatalogue<Result: Sendable>(_ operation: StaticString = #function, bounded: Bool = true,
                                             _ body: @escaping @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        let result = try await withTransaction(operation, bounded: bounded, body)
        // Only a listening store keeps the version (`connect`'s tools do not): nothing to catch up otherwise.
        if listener.versionAtOnce != nil, let version = try? await catalogueVersion() { listener.committedHere(version) }
        return result
    }

    // MARK: Catalogue

    /// Known while `CatalogueVersionListener` listens; nil while it does not (each call then reads it).
    public func catalogueVersionAtOnce() -> Int64? { listener.versionAtOnce }

    public func catalogueVersion() async throws -> Int64 {
        try await withConnection { [self] c in try await c.rows(Statements.CatalogueVersion(), logger: logger).first ?? 0 }
    }

    public func app(key: String) async throws -> App? {
        try await withConnection { [self] c in
            try await c.rows(Statements.App(key: key), logger: logger).first.map { App(key: $0.0, name: $0.1, demoQuota: $0.2) }
        }
    }

    public func webKiosk(appKey: String) async throws -> AppWebKiosk? {
        try await withConnection { [self] c in try await Self.webKiosks(c, appKey: appKey, logger: logger).first }
    }

    /// The columns of an offered edition (tariff line `t`, edition `e`, publication `p`).
    static let offeredColumns = "t.app_key, t.edition_id, t.sort_order, t.access, e.publication_id, e.name, e.created_on, p.name"
    typealias OfferedRow = (String, Int, Int, String, Int, String, String, String)

    static func offered(_ row: OfferedRow) -> OfferedEdition {
        OfferedEdition(line: TariffLine(appKey: row.0, editionID: row.1, order: row.2, storedAccess: row.3),
                       edition: Edition(id: row.1, publicationID: row.4, name: row.5, storedCreatedOn: row.6),
                       publicationName: row.7)
    }

    /// The first page's JPEG of issue `i`.
    static let coverColumn = """
        (SELECT pg.jpg_path FROM pages pg WHERE pg.edition_id = i.edition_id AND pg.date = i.date
         ORDER BY pg.number LIMIT 1)
        """

    public func editionListings(appKey: String) async throws -> [EditionListing] {
        try await withConnection { [self] c in
            try await c.rows(Statements.EditionListings(appKey: appKey), logger: logger)
            .compactMap { row in
                IssueDate(row.8).map { date in
                    EditionListing(offered: Self.offered((row.0, row.1, row.2, row.3, row.4, row.5, row.6, row.7)),
                                   newest: IssueSummary(date: date, coverPath: row.9))
                }
            }
        }
    }

    public func offeredEdition(appKey: String, editionID: Int) async throws -> OfferedEdition? {
        try await withConnection { [self] c in
            try await c.rows(Statements.OfferedEdition(appKey: appKey, editionID: editionID), logger: logger).first.map(Self.offered)
        }
    }

    public func issues(editionID: Int, from date: IssueDate?, direction: ListingDirection,
                       limit: Int) async throws -> [IssueSummary] {
        try await withConnection { [self] c in
            let rows: [(String, String?)]
            switch IssueWindow(from: date, direction: direction) {
            case .newest: rows = try await c.rows(Statements.NewestIssues(editionID: editionID, limit: limit), logger: logger)
            case .upTo(let date):
                rows = try await c.rows(Statements.IssuesUpTo(editionID: editionID, date: date.description, limit: limit), logger: logger)
            case .from(let date):
                rows = try await c.rows(Statements.IssuesFrom(editionID: editionID, date: date.description, limit: limit), logger: logger)
            }
            return rows.compactMap { row in IssueDate(row.0).map { IssueSummary(date: $0, coverPath: row.1) } }
        }
    }

    public func issueContents(editionID: Int, date: IssueDate) async throws -> IssueContents? {
        let day = date.description
        return try await withConnection { [self] c in
            guard let issue = try await c.rows(Statements.VisibleIssue(editionID: editionID, date: day), logger: logger).first
            else { return nil }
            let pages = try await c.rows(Statements.Pages(editionID: editionID, date: day), logger: logger).map { row in
                Page(id: row.0, number: row.1, section: Section(id: row.2, name: row.3),
                     files: PageFiles(pdf: row.4, jpg: row.5, jpgA: row.6))
            }
            return IssueContents(editionID: editionID, date: date, revision: issue.0, pages: pages,
                                 bundle: BundleInfo(storedPath: issue.1, size: issue.2, sha256: issue.3))
        }
    }

    @discardableResult
    public func syncCatalogue(_ catalogue: Catalogue, dryRun: Bool) async throws -> [String] {
        if dryRun {
            return try await withConnection(bounded: false) { [self] c in
                try await c.rolledBack(logger: logger) { try await PostgresCatalogueSync(connection: $0, logger: logger).apply(catalogue).lines }
            }
        }
        return try await changingCatalogue(bounded: false) { [self] c in
            let diff = try await PostgresCatalogueSync(connection: c, logger: logger).apply(catalogue)
            try await appendEvents(diff.events, at: EventRow.now(), on: c)
            return diff.lines
        }
    }

    // MARK: Readers

    static let userColumns = "id, username, name, email, password_hash"

    static func user(_ row: (Int, String, String, String, String)) -> User {
        User(id: row.0, username: row.1, name: row.2, email: row.3, passwordHash: row.4)
    }

    public func user(username: String) async throws -> User? {
        try await withConnection { [self] c in
            try await c.rows("SELECT \(unescaped: Self.userColumns) FROM users WHERE lower(username) = lower(\(username))",
                             (Int, String, String, String, String).self, logger: logger).first.map(Self.user)
        }
    }

    public func user(id: Int) async throws -> User? {
        try await withConnection { [self] c in
            try await c.rows("SELECT \(unescaped: Self.userColumns) FROM users WHERE id = \(id)",
                             (Int, String, String, String, String).self, logger: logger).first.map(Self.user)
        }
    }

    public func replacePasswordHash(userID: Int, from old: String, to new: String) async throws {
        try await withConnection { [self] c in
            try await c.run("UPDATE users SET password_hash = \(new) WHERE id = \(userID) AND password_hash = \(old)", logger: logger)
        }
    }

    public func subscriptions(userID: Int) async throws -> [Subscription] {
        try await withConnection { [self] c in
            try await c.rows(Statements.Subscriptions(userID: userID), logger: logger).compactMap { row in
                IssueDate(row.2).map { Subscription(userID: row.0, editionID: row.1, until: $0) }
            }
        }
    }

    public func identity(key: String) async throws -> DeviceIdentity? {
        try await withConnection { [self] c in
            try await c.rows(Statements.Identity(key: key), logger: logger).first.map { row in
                DeviceIdentity(key: row.0, appKey: row.1, deviceKey: row.2, userID: row.3,
                               deviceInfo: DeviceInfoCoding.decode(row.4), os: row.5, imported: row.6)
            }
        }
    }

    public func saveIdentity(_ identity: DeviceIdentity, at time: Int64, retiringImported: Bool) async throws {
        let info = DeviceInfoCoding.encode(identity.deviceInfo)
        try await withTransaction { [self] c in
            try await c.run("""
                INSERT INTO identities (key, app_key, device_key, user_id, device_info, os, first_seen, last_seen, imported)
                VALUES (\(identity.key), \(identity.appKey), \(identity.deviceKey), \(identity.userID), \(info),
                        \(identity.os), \(time), \(time), \(identity.imported))
                ON CONFLICT (key) DO UPDATE SET device_info = excluded.device_info, os = excluded.os,
                                                last_seen = excluded.last_seen
                """, logger: logger)
            if retiringImported {
                try await c.run("""
                    DELETE FROM identities
                    WHERE app_key = \(identity.appKey) AND device_key = \(identity.deviceKey) AND imported AND key <> \(identity.key)
                    """, logger: logger)
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

    /// Inserts downloads and adds them to `download_counts`, whose rows are updated in key order so
    /// that two instances committing at once never deadlock.
    static func insert(_ downloads: [DownloadRecord], on c: PostgresConnection, logger: Logger) async throws {
        try await c.run("""
            INSERT INTO downloads (edition_id, date, app_key, identity_key, user_id, claimed_user_id, device_key, os, time)
            SELECT * FROM unnest(\(downloads.map(\.editionID)), \(downloads.map(\.date.description)), \(downloads.map(\.appKey)),
                                 \(downloads.map(\.identityKey)), \(downloads.map(\.userID)), \(downloads.map(\.claimedUserID)),
                                 \(downloads.map(\.deviceKey)), \(downloads.map(\.os)), \(downloads.map(\.time)))
            """, logger: logger)
        struct Key: Hashable, Comparable {
            var day: Int64, editionID: Int, date: String, appKey: String, os: String
            static func < (a: Key, b: Key) -> Bool {
                (a.day, a.editionID, a.date, a.appKey, a.os) < (b.day, b.editionID, b.date, b.appKey, b.os)
            }
        }
        var counts: [Key: Int64] = [:]
        for d in downloads {
            counts[Key(day: d.time / 86_400, editionID: d.editionID, date: d.date.description, appKey: d.appKey, os: d.os), default: 0] += 1
        }
        let sorted = counts.sorted { $0.key < $1.key }
        let keys = sorted.map(\.key)
        try await c.run("""
            INSERT INTO download_counts (day, edition_id, date, app_key, os, count)
            SELECT * FROM unnest(\(keys.map(\.day)), \(keys.map(\.editionID)), \(keys.map(\.date)), \(keys.map(\.appKey)),
                                 \(keys.map(\.os)), \(sorted.map(\.value)))
            ON CONFLICT (day, edition_id, date, app_key, os) DO UPDATE SET count = download_counts.count + excluded.count
            """, logger: logger)
    }

    // MARK: Demos

    /// Serializes, across instances, the transactions that check and change one device's demos.
    private func lockDevice(appKey: String, deviceKey: String, on c: PostgresConnection) async throws {
        try await c.run("SELECT pg_advisory_xact_lock(hashtextextended(\(appKey + "\u{1F}" + deviceKey), 1))", logger: logger)
    }

    public func demosConsumed(appKey: String, deviceKey: String) async throws -> Int {
        try await withConnection { [self] c in
            try await c.value("SELECT consumed FROM demo_counters WHERE app_key = \(appKey) AND device_key = \(deviceKey)",
                              Int.self, logger: logger) ?? 0
        }
    }

    public func consumeDemo(appKey: String, deviceKey: String, quota: Int, at time: Int64) async throws -> DemoOutcome {
        try await withTransaction { [self] c in
            try await lockDevice(appKey: appKey, deviceKey: deviceKey, on: c)
            let consumed = try await c.value("""
                SELECT consumed FROM demo_counters WHERE app_key = \(appKey) AND device_key = \(deviceKey)
                """, Int.self, logger: logger) ?? 0
            let outcome = DemoOutcome(asking: consumed, quota: quota)
            guard outcome.granted else { return outcome }
            try await c.run("""
                INSERT INTO demo_counters (app_key, device_key, consumed) VALUES (\(appKey), \(deviceKey), 1)
                ON CONFLICT (app_key, device_key) DO UPDATE SET consumed = demo_counters.consumed + 1
                """, logger: logger)
            try await c.run("""
                INSERT INTO demo_grants (app_key, device_key, granted_at) VALUES (\(appKey), \(deviceKey), \(time))
                """, logger: logger)
            return outcome
        }
    }

    public func useDemoGrant(appKey: String, deviceKey: String, editionID: Int, date: IssueDate,
                             at time: Int64) async throws -> Bool {
        let day = date.description
        return try await withTransaction { [self] c in
            try await lockDevice(appKey: appKey, deviceKey: deviceKey, on: c)
            let bound = try await c.run("""
                SELECT 1 FROM demo_grants
                WHERE app_key = \(appKey) AND device_key = \(deviceKey) AND edition_id = \(editionID) AND date = \(day)
                LIMIT 1
                """, logger: logger)
            if bound > 0 { return true }
            return try await c.run("""
                UPDATE demo_grants SET edition_id = \(editionID), date = \(day), used_at = \(time)
                WHERE id = (SELECT id FROM demo_grants
                            WHERE app_key = \(appKey) AND device_key = \(deviceKey) AND edition_id IS NULL
                            ORDER BY id LIMIT 1)
                RETURNING 1
                """, logger: logger) == 1
        }
    }

    // MARK: Sign-in throttling

    public func signInFailures(username: String, deviceKey: String?, since: Int64) async throws -> (username: Int, device: Int) {
        try await withConnection { [self] c in try await signInFailures(username: username, deviceKey: deviceKey, since: since, on: c) }
    }

    private func signInFailures(username: String, deviceKey: String?, since: Int64,
                                on c: PostgresConnection) async throws -> (username: Int, device: Int) {
        let byUser = try await c.value("""
            SELECT COUNT(*) FROM sign_in_failures WHERE lower(username) = lower(\(username)) AND time >= \(since)
            """, Int.self, logger: logger) ?? 0
        guard let deviceKey else { return (byUser, 0) }
        let byDevice = try await c.value("""
            SELECT COUNT(*) FROM sign_in_failures WHERE device_key = \(deviceKey) AND time >= \(since)
            """, Int.self, logger: logger) ?? 0
        return (byUser, byDevice)
    }

    /// Takes the username's lock, then the device's (always in that order, so two attempts never deadlock).
    public func beginSignInAttempt(username: String, deviceKey: String?, since: Int64, maxFailures: Int,
                                   at time: Int64) async throws -> Int64? {
        try await withTransaction { [self] c in
            try await c.run("SELECT pg_advisory_xact_lock(hashtextextended(\("u\u{1F}" + username.lowercased()), 2))", logger: logger)
            if let deviceKey {
                try await c.run("SELECT pg_advisory_xact_lock(hashtextextended(\("d\u{1F}" + deviceKey), 2))", logger: logger)
            }
            let counts = try await signInFailures(username: username, deviceKey: deviceKey, since: since, on: c)
            guard !SignInPolicy(maxFailures: maxFailures).isLockedOut(failures: counts) else { return nil }
            return try await c.value("""
                INSERT INTO sign_in_failures (username, device_key, time) VALUES (\(username), \(deviceKey), \(time)) RETURNING id
                """, Int64.self, logger: logger)
        }
    }

    public func forgetSignInAttempt(_ attempt: Int64) async throws {
        try await withConnection { [self] c in try await c.run("DELETE FROM sign_in_failures WHERE id = \(attempt)", logger: logger) }
    }

    // MARK: Readiness

    public func ping() async throws {
        try await withConnection { [self] c in _ = try await c.value("SELECT COUNT(*) FROM apps", Int.self, logger: logger) }
    }
}
