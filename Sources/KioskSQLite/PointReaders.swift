import Foundation
import GRDB

/// Read-only connections of their own for the hot path's one-statement reads (an identity, a user's
/// subscriptions): a statement is its own snapshot in WAL, so these skip the pool's reader checkout and
/// the transaction it wraps every read in. Taken in turn; a connection busy with another read makes the
/// caller wait on its queue for microseconds.
final class PointReaders: @unchecked Sendable {
    private let connections: [DatabaseQueue]
    private let lock = NSLock()
    private var next = 0

    init(path: String, count: Int, busyTimeout: Double) throws {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(busyTimeout)
        connections = try (0..<max(count, 1)).map { _ in try DatabaseQueue(path: path, configuration: configuration) }
    }

    func read<T>(_ block: (Database) throws -> T) throws -> T {
        let connection = lock.withLock {
            next = (next + 1) % connections.count
            return connections[next]
        }
        return try connection.inDatabase(block)
    }
}
