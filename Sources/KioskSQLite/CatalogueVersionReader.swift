import Foundation
import GRDBSQLite

/// The catalogue version, known without a SQLite read while `CatalogueChanges` shows no change since it
/// was last read, and otherwise read on a connection of its own: one prepared statement stepped under a
/// lock, without the reader-queue hop and transaction of a pool read. A single statement reads one
/// committed snapshot (WAL).
///
/// A version known from the counts is read again at least every `recheckInterval`, which also finds
/// a change that bypassed the counts (a SQLite shell): that change is then counted, so every process
/// drops what it knew.
final class CatalogueVersionReader: @unchecked Sendable {
    /// Guards the statement (held while it steps, which may wait for SQLite).
    private let statementLock = NSLock()
    private var connection: OpaquePointer?
    private var statement: OpaquePointer?
    private let path: String
    private let busyTimeoutMilliseconds: Int32
    private let changes: CatalogueChanges
    /// The last version read, with the count of changes it was read under and when (`knownLock`, held briefly).
    private var known: (mark: UInt64, version: Int64, readAt: ContinuousClock.Instant)?
    private let knownLock = NSLock()
    static let recheckInterval = Duration.seconds(1)

    init(path: String, busyTimeout: Double, changes: CatalogueChanges) throws {
        self.path = path
        self.changes = changes
        guard let milliseconds = Int32(exactly: (busyTimeout * 1000).rounded(.towardZero)) else {
            throw DatabaseFailure(path: path, message: "the busy timeout must be at most 2147483 seconds, got \(busyTimeout)")
        }
        busyTimeoutMilliseconds = milliseconds
        guard sqlite3_open_v2(path, &connection, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            defer { sqlite3_close(connection) }
            throw DatabaseFailure(path: path, message: String(cString: sqlite3_errmsg(connection)))
        }
        sqlite3_busy_timeout(connection, busyTimeoutMilliseconds)
        guard sqlite3_prepare_v2(connection, "SELECT version FROM catalogue_version WHERE id = 1", -1, &statement, nil) == SQLITE_OK else {
            defer { sqlite3_close(connection) }
            throw DatabaseFailure(path: path, message: String(cString: sqlite3_errmsg(connection)))
        }
    }

    deinit {
        sqlite3_finalize(statement)
        sqlite3_close(connection)
    }

    /// The version: known at once when it can be, else read (waiting up to the busy timeout).
    func read() throws -> Int64 {
        if let version = readWithoutWaiting() { return version }
        if changes.balancedMark == nil { changes.balance() }
        return try statementLock.withLock {
            guard let version = step(waiting: true) else {
                throw DatabaseFailure(path: path, message: String(cString: sqlite3_errmsg(connection)))
            }
            return version
        }
    }

    /// The version, or nil when it would have to wait: while a change is under way, while another
    /// read holds the statement, or while SQLite is busy (a writer recovering the log, a checkpoint
    /// resetting it). Never waits for I/O: the connections' event loops ask.
    func readWithoutWaiting() -> Int64? {
        guard let mark = changes.balancedMark else { return nil }
        let now = ContinuousClock.now
        let last = knownLock.withLock { known }
        if let last, last.mark == mark, now < last.readAt + Self.recheckInterval { return last.version }
        guard statementLock.try() else { return nil }
        let version = step(waiting: false)
        statementLock.unlock()
        guard let version else { return nil }
        if let last, last.mark == mark, last.version != version {
            // Changed, yet not counted: count it, so that no process keeps the old version.
            changes.countChange()
            knownLock.withLock { known = nil }
        } else if changes.balancedMark == mark {
            knownLock.withLock { known = (mark, version, now) }
        }
        return version
    }

    /// One step of the statement (`statementLock` held).
    private func step(waiting: Bool) -> Int64? {
        if !waiting { sqlite3_busy_timeout(connection, 0) }
        defer {
            if !waiting { sqlite3_busy_timeout(connection, busyTimeoutMilliseconds) }
            sqlite3_reset(statement)
        }
        guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
        return sqlite3_column_int64(statement, 0)
    }

    /// SQLite refused the read.
    struct DatabaseFailure: Error, CustomStringConvertible {
        var path: String
        var message: String
        var description: String { "reading the catalogue version of \(path): \(message)" }
    }
}
