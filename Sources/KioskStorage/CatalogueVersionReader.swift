import Foundation
import GRDBSQLite

/// The catalogue version on a read connection of its own: one prepared statement stepped under a lock,
/// without the reader-queue hop and transaction of a pool read (every catalogue call asks, and a kept
/// answer costs little else). A single statement reads one committed snapshot (WAL).
final class CatalogueVersionReader: @unchecked Sendable {
    private let lock = NSLock()
    private var connection: OpaquePointer?
    private var statement: OpaquePointer?
    private let path: String
    private let busyTimeoutMilliseconds: Int32

    init(path: String, busyTimeout: Double) throws {
        self.path = path
        busyTimeoutMilliseconds = Int32(busyTimeout * 1000)
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

    func read() throws -> Int64 {
        try lock.withLock {
            defer { sqlite3_reset(statement) }
            let status = sqlite3_step(statement)
            guard status == SQLITE_ROW else {
                throw DatabaseFailure(path: path, message: String(cString: sqlite3_errmsg(connection)))
            }
            return sqlite3_column_int64(statement, 0)
        }
    }

    /// The version, or nil when SQLite would have to wait (busy: a writer is recovering the log, or a
    /// checkpoint is resetting it). Concurrent reads take turns on the lock, a statement step each.
    func readWithoutWaiting() -> Int64? {
        lock.lock()
        defer { lock.unlock() }
        sqlite3_busy_timeout(connection, 0)
        defer { sqlite3_busy_timeout(connection, busyTimeoutMilliseconds); sqlite3_reset(statement) }
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
