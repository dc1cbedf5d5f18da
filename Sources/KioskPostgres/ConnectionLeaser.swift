import Foundation
import KioskStoreSupport
import Logging
import PostgresNIO

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
    /// call fails with `PostgresUnavailable` after that long even once leased (a query on a connection
    /// the server dropped may otherwise never end); without, `body` takes the time it needs.
    ///
    /// Not a task group, on purpose: a group waits for all its children, and neither a lease from a pool
    /// that is connecting to a server that is down nor a query on a dropped connection ends promptly when
    /// cancelled, so a group would hold the caller past its deadline (15 s calls while PostgreSQL is down,
    /// `MultiInstanceTests.postgreSQLStoppedAndStartedUnderLoad`). The work is cancelled and left to end.
    func leased<Result: Sendable>(waiting: Duration? = nil, limit: Duration? = nil,
                                  _ body: @escaping @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        let client = self.client, name = self.name, serverDown = self.serverDown
        let wait = serverDown.isSet ? min(waiting ?? self.wait, Self.waitWhileDown) : (waiting ?? self.wait)
        let leased = LockedFlag()
        let outcome = Outcome<Result>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                outcome.resume(continuation)
                let work = Task {
                    do {
                        let result = try await client.withConnection { connection in
                            leased.set()
                            serverDown.set(false)
                            return try await body(connection)
                        }
                        outcome.finish(.success(result))
                    } catch {
                        outcome.finish(.failure(Self.readable(error, database: name)))
                    }
                }
                let deadline = Task {
                    do { try await Task.sleep(for: wait) } catch { return }
                    guard leased.isSet else {
                        serverDown.set()
                        outcome.finish(.failure(PostgresUnavailable(database: name, waited: wait)))
                        return
                    }
                    guard let limit, limit > wait else { return }
                    do { try await Task.sleep(for: limit - wait) } catch { return }
                    outcome.finish(.failure(PostgresUnavailable(database: name, waited: limit)))
                }
                outcome.onFinish { failed in
                    deadline.cancel()
                    if failed { work.cancel() }
                }
            }
        } onCancel: {
            outcome.finish(.failure(CancellationError()))
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

/// The one answer of a call raced against its deadlines: the first `finish` wins; it resumes the
/// caller and runs the clean-ups (cancelling the deadline, and on failure the work still running).
final class Outcome<Result: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Swift.Result<Result, any Error>?
    private var continuation: CheckedContinuation<Result, any Error>?
    private var cleanups: [@Sendable (_ failed: Bool) -> Void] = []

    /// Resumes `continuation` with the result, now if it is known, else when it is.
    func resume(_ continuation: CheckedContinuation<Result, any Error>) {
        let known: Swift.Result<Result, any Error>? = lock.withLock {
            if result == nil { self.continuation = continuation }
            return result
        }
        if let known { continuation.resume(with: known) }
    }

    /// Runs `action` once the result is known (at once if it is), telling it whether the call failed.
    func onFinish(_ action: @escaping @Sendable (_ failed: Bool) -> Void) {
        let known: Swift.Result<Result, any Error>? = lock.withLock {
            if result == nil { cleanups.append(action) }
            return result
        }
        if let known { action(Self.failed(known)) }
    }

    func finish(_ outcome: Swift.Result<Result, any Error>) {
        let (continuation, cleanups): (CheckedContinuation<Result, any Error>?, [@Sendable (Bool) -> Void]) = lock.withLock {
            guard result == nil else { return (nil, []) }
            result = outcome
            defer { self.continuation = nil; self.cleanups = [] }
            return (self.continuation, self.cleanups)
        }
        continuation?.resume(with: outcome)
        for cleanup in cleanups { cleanup(Self.failed(outcome)) }
    }

    private static func failed(_ outcome: Swift.Result<Result, any Error>) -> Bool {
        if case .failure = outcome { return true }
        return false
    }
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
