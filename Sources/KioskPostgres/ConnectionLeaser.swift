import Foundation
import KioskModels
import KioskStoreSupport
import Logging
import PostgresNIO
import Synchronization

/// Leases pooled connections, failing with `PostgresUnavailable` when none is given within the wait
/// (the server is down or unreachable), and turns postgres-nio's errors into `PostgresFailure`.
struct ConnectionLeaser: Sendable {
    let client: PostgresClient
    /// Where the database is, for messages (never the password).
    let name: String
    /// How long a call waits for a connection.
    let wait: Duration
    /// Set when the last wait for a connection ran out: calls then wait only `waitWhileDown`, so that
    /// while the server is down they fail fast instead of each waiting the full time; a lease clears it.
    let serverDown: LockedFlag
    let logger: Logger
    /// How long a call waits for a connection while the server is known to be down.
    static let waitWhileDown: Duration = .milliseconds(300)
    /// What a wire call's queries may take once leased, at most.
    static let queryAllowance: Duration = .seconds(2)
    /// The longest a wire call's database work may take.
    var callLimit: Duration { wait + Self.queryAllowance }

    /// Runs `body` in one transaction. An error `body` throws (a refusal such as
    /// `UserAdministrationError`) reaches the caller as it was thrown, after the rollback.
    func transaction<Result: Sendable>(limit: Duration? = nil,
                                       _ body: @escaping @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        let logger = self.logger
        return try await leased(limit: limit) { connection in
            do {
                return try await connection.withTransaction(logger: logger) { try await body($0) }
            } catch let error as PostgresTransactionError {
                guard let thrown = error.closureError, error.rollbackError == nil else { throw error }
                throw thrown
            }
        }
    }

    /// Runs `body` on a connection leased within `wait` (default: the leaser's). With `limit`, the whole
    /// call fails with `PostgresUnavailable` after that long even once leased: the connection is then
    /// closed, since a query on a connection the server or the network dropped may otherwise never end.
    /// Without, `body` takes the time it needs.
    func leased<Result: Sendable>(waiting: Duration? = nil, limit: Duration? = nil,
                                  _ body: @escaping @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        let client = self.client, name = self.name, serverDown = self.serverDown
        let wait = serverDown.isSet ? min(waiting ?? self.wait, Self.waitWhileDown) : (waiting ?? self.wait)
        let leased = LeasedConnection()
        return try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask {
                do {
                    return try await client.withConnection { connection in
                        leased.set(connection)
                        serverDown.set(false)
                        return try await body(connection)
                    }
                } catch {
                    throw Self.readable(error, database: name)
                }
            }
            // The deadlines: a connection within `wait`, an answer within `limit`.
            group.addTask {
                try await Task.sleep(for: wait)
                guard let connection = leased.connection else {
                    serverDown.set()
                    throw PostgresUnavailable(database: name, waited: wait)
                }
                guard let limit, limit > wait else { return nil }
                try await Task.sleep(for: limit - wait)
                try? await connection.close()
                throw PostgresUnavailable(database: name, waited: limit)
            }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let result = next { return result }
            }
            throw CancellationError()
        }
    }

    /// postgres-nio's errors in the server's words.
    static func readable(_ error: any Error, database: String) -> any Error {
        if let error = error as? PSQLError { return PostgresFailure(error, database: database) }
        if let error = error as? PostgresTransactionError {
            // BEGIN or COMMIT failed (the connection went away): say so in the server's words.
            let cause = error.closureError ?? error.beginError ?? error.commitError ?? error.rollbackError
            return cause.map { readable($0, database: database) } ?? error
        }
        return error
    }
}

/// The connection a call leased, once it has one.
private final class LeasedConnection: Sendable {
    private let leased = Mutex<PostgresConnection?>(nil)
    var connection: PostgresConnection? { leased.withLock { $0 } }
    func set(_ connection: PostgresConnection) { leased.withLock { $0 = connection } }
}

/// No connection to PostgreSQL within the wait: the server is down, unreachable or refusing.
public struct PostgresUnavailable: Error, CustomStringConvertible {
    public var database: String
    public var waited: Duration
    public var description: String { "PostgreSQL at \(database) gave no connection within \(waited) (down, unreachable or refusing connections?)" }
}

/// A PostgreSQL error in words an operator can act on: the server's SQLSTATE, message and detail, or
/// the client's error code (postgres-nio's own description hides everything, for fear of leaking binds).
public struct PostgresFailure: Error, CustomStringConvertible {
    public var database: String
    public var sqlState: String?
    public var message: String

    init(_ error: PSQLError, database: String) {
        self.database = database
        if let info = error.serverInfo {
            sqlState = info[.sqlState]
            message = [info[.message], info[.detail]].compactMap { $0 }.joined(separator: "; ")
        } else {
            // The client's own failures (connection closed, refused, timed out), by their code.
            message = "\(error.code)" + (error.underlying.flatMap { $0 is PSQLError ? nil : ": \($0)" } ?? "")
        }
    }

    public var description: String {
        "PostgreSQL at \(database): \(sqlState.map { "[\($0)] " } ?? "")\(message)"
    }
}
