import KioskModels
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// What an instance knows of the catalogue version of its PostgreSQL database, fed by
/// `CatalogueVersionListener`: known at once while the listening connection is up, unknown (read per
/// call) from the moment it is lost until it listens again and has read the version.
struct CatalogueVersionWatch: Sendable, Equatable {
    enum Phase: Sendable, Equatable {
        /// Not listening: every call reads the version.
        case down
        /// `LISTEN` acknowledged; the version is being read. The highest version notified meanwhile.
        case joining(notified: Int64?)
        /// Listening, with the highest version read or notified since.
        case up(Int64)
    }

    private(set) var phase = Phase.down

    /// The version, when known without a round trip.
    var versionAtOnce: Int64? {
        if case .up(let version) = phase { return version }
        return nil
    }

    /// The listening connection acknowledged `LISTEN`: every change committed from now on is notified.
    mutating func listening() {
        phase = .joining(notified: nil)
    }

    /// A notification: the version a change committed.
    mutating func notified(_ version: Int64) {
        switch phase {
        case .down: break
        case .joining(let notified): phase = .joining(notified: max(notified ?? version, version))
        case .up(let known): phase = .up(max(known, version))
        }
    }

    /// The version read on the listening connection (after `LISTEN`, or a periodic check). Versions only
    /// grow, so the highest of what was read and what was notified is the newest.
    mutating func read(_ version: Int64) {
        switch phase {
        case .down: break
        case .joining(let notified): phase = .up(max(notified ?? version, version))
        case .up(let known): phase = .up(max(known, version))
        }
    }

    /// The version read after a change this process committed: newer than what was known, unless the
    /// change's notification came first. Only while up: a read that may have begun before `LISTEN` proves nothing.
    mutating func committedHere(_ version: Int64) {
        if case .up(let known) = phase { phase = .up(max(known, version)) }
    }

    /// The listening connection failed, closed or did not answer a check in time.
    mutating func lost() {
        phase = .down
    }
}

/// Keeps a pooled connection listening on `channel` for the versions the catalogue triggers notify
/// (migration 13), so that `PostgresKioskStore.catalogueVersionAtOnce` knows the version without a round
/// trip and kept answers serve PostgreSQL deployments as they serve SQLite ones.
///
/// While the connection is down (the server restarted, the backend terminated, the network failed) the
/// version is unknown and every call reads it: never stale, only slower; the log and the observer say so,
/// and listening resumes with backoff. A check every `checkInterval` on the listening connection finds a
/// connection that went silent.
final class CatalogueVersionListener: Service, Sendable, CustomStringConvertible {
    /// What the service group logs: the name alone.
    var description: String { "CatalogueVersionListener" }

    static let channel = "kiosk_catalogue"
    /// Tagged, so that an operator (and a test) finds the listening connection in `pg_stat_activity`.
    static let versionQuery: PostgresQuery = "SELECT version FROM catalogue_version WHERE id = 1 /* kiosk catalogue listener */"
    static let checkInterval = Duration.seconds(1)
    /// How long a check may take before the connection counts as lost.
    static let checkAllowance = Duration.seconds(2)
    static let retryDelays: [Duration] = [.milliseconds(50), .milliseconds(250), .seconds(1), .seconds(2), .seconds(5)]

    private let client: PostgresClient
    private let logger: Logger
    private let observer: any StoreObserver
    private let watch = Mutex(CatalogueVersionWatch())

    init(client: PostgresClient, observer: any StoreObserver, logger: Logger) {
        self.client = client
        self.observer = observer
        self.logger = logger
    }

    var versionAtOnce: Int64? { watch.withLock { $0.versionAtOnce } }

    /// After a change this process committed: the version read then (see `CatalogueVersionWatch.committedHere`).
    func committedHere(_ version: Int64) {
        watch.withLock { $0.committedHere(version) }
    }

    /// Lets `run` begin listening: the schema it reads is there (`PostgresKioskStore.migrate`).
    func migrated() {
        schema.signal()
    }

    private let schema = OneTimeSignal()

    /// Listens (once migrated) until cancelled or shut down, reconnecting after every loss.
    func run() async {
        await cancelWhenGracefulShutdown { [self] in
            await schema.wait()
            var failures = 0
            while !Task.isCancelled {
                let heardFor = ContinuousClock.now
                do {
                    try await listenOnce()
                } catch where !Task.isCancelled {
                    lose(because: error)
                } catch {
                    break   // shutting down: not a loss
                }
                if Task.isCancelled { break }
                // A connection that listened for a while starts the delays again.
                failures = ContinuousClock.now - heardFor > .seconds(10) ? 0 : failures + 1
                let delay = Self.retryDelays[min(failures, Self.retryDelays.count - 1)]
                do { try await Task.sleep(for: delay) } catch { break }
            }
            watch.withLock { $0.lost() }   // shut down: forgotten, not counted as a loss
        }
    }

    /// One listening session: lease, `LISTEN`, read, then follow notifications and checks until one fails.
    private func listenOnce() async throws {
        try await client.withConnection { [self] connection in
            try await connection.listen(on: Self.channel) { notifications in
                watch.withLock { $0.listening() }
                let version = try await Self.readVersion(connection, logger: logger)
                watch.withLock { $0.read(version) }
                observer.catalogueListener(connected: true)
                logger.info("catalogue version known at once: listening for changes", metadata: ["version": "\(version)"])
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { [self] in
                        for try await notification in notifications {
                            guard let version = Int64(notification.payload) else {
                                throw UnexpectedNotification(payload: String(notification.payload.prefix(40)))
                            }
                            watch.withLock { $0.notified(version) }
                        }
                        throw ListeningEnded()
                    }
                    let answered = LastAnswer()
                    group.addTask { [self] in
                        while true {
                            try await Task.sleep(for: Self.checkInterval)
                            let version = try await Self.readVersion(connection, logger: logger)
                            watch.withLock { $0.read(version) }
                            answered.now()
                        }
                    }
                    // A check that does not answer in time: stop knowing the version at once first (a
                    // query on a connection the network dropped may never end), then close the connection.
                    group.addTask { [self] in
                        while true {
                            try await Task.sleep(for: Self.checkInterval)
                            guard answered.time + Self.checkInterval + Self.checkAllowance < .now else { continue }
                            lose(because: CheckTimedOut())
                            try? await connection.close()
                            throw CheckTimedOut()
                        }
                    }
                    // Each child ends only by failing; the others are then cancelled.
                    try await group.next()
                }
            }
        }
    }

    /// Forgets the version (calls read it again) and says so once per loss.
    private func lose(because error: any Error) {
        let wasKnown = watch.withLock { watch in
            defer { watch.lost() }
            return watch.versionAtOnce != nil
        }
        guard wasKnown else {
            logger.debug("catalogue listener not listening yet", metadata: ["error": "\(error)"])
            return
        }
        observer.catalogueListener(connected: false)
        logger.warning("catalogue listener lost: reading the catalogue version per call until it listens again",
                       metadata: ["error": "\(ConnectionLeaser.readable(error, database: "catalogue listener"))"])
    }

    static func readVersion(_ connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        var version: Int64?
        for try await value in try await connection.query(versionQuery, logger: logger).decode(Int64.self) {
            version = value
        }
        guard let version else { throw MissingVersion() }
        return version
    }

    /// When the listening connection last answered a check.
    private final class LastAnswer: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        var time: ContinuousClock.Instant { instant.withLock { $0 } }
        func now() { instant.withLock { $0 = .now } }
    }

    struct ListeningEnded: Error, CustomStringConvertible {
        var description: String { "the notifications ended (connection closed)" }
    }
    struct UnexpectedNotification: Error, CustomStringConvertible {
        var payload: String
        var description: String { "a notification on \(CatalogueVersionListener.channel) that is not a version: \(payload)" }
    }
    struct MissingVersion: Error, CustomStringConvertible {
        var description: String { "the catalogue_version row is missing" }
    }
    struct CheckTimedOut: Error, CustomStringConvertible {
        var description: String { "the listening connection did not answer a check within \(CatalogueVersionListener.checkAllowance)" }
    }
}
