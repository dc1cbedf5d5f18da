import HummingbirdBcrypt
import KioskModels
import NIOConcurrencyHelpers
import NIOCore
import KioskFiles

/// bcrypt hashing, and checking of bcrypt and the 2012 system's hashes, off the event loops, on an executor
/// of their own.
///
/// That executor has half the processors' threads (at least one), and jobs wait for a thread in arrival
/// order. A check never waits behind disk work queued on the blocking executor: a publish's fsyncs do not
/// delay a sign-in. And one flood cannot fill that queue: each username, and each client
/// (`RequestClient.address`, set per request), has at most a few checks waiting or running
/// (`CheckAdmission`); more are refused at once as too many attempts, so other readers wait at most a
/// few checks' time behind a flood.
package struct PasswordHashing: PasswordHasher {
    package static let defaultCost: UInt8 = 11

    private let executor: BlockingExecutor
    private let admission: CheckAdmission

    /// Process-wide: the threads every check and hash runs on.
    package static let executor = BlockingExecutor(threads: max(1, System.coreCount / 2))
    /// The checks waiting or running per username and per client, for hashers made without their own;
    /// a server's runtime has one of its own (`RuntimeFactory`). Checks outside a request are not limited.
    package static let admission = CheckAdmission(perUsername: 2, perClient: 4)

    package init(executor: BlockingExecutor = PasswordHashing.executor, admission: CheckAdmission = PasswordHashing.admission) {
        self.executor = executor
        self.admission = admission
    }

    package func verify(_ password: String, against hash: String?, username: String) async throws -> Bool {
        let stored = hash.flatMap(StoredPasswordHash.init)
        // Limits are for requests; a check made outside one (the CLI, start-up) has no client to limit.
        let client = RequestClient.address
        var ticket: CheckAdmission.Ticket?
        if !client.isEmpty {
            guard let admitted = admission.admit(username: username, client: client) else {
                throw KioskError.tooManySignInAttempts(retryAfterSeconds: 1)
            }
            ticket = admitted
        }
        defer { if let ticket { admission.release(ticket) } }
        return (try? await executor.run { Self.check(password, against: stored) }) ?? false
    }

    /// The check itself, on the calling thread. No account, a legacy hash (MD5 is fast) or a password over
    /// `PasswordLimits.maxBytes` (or holding a NUL) costs the same bcrypt work as an account's check, so the
    /// time taken tells none of them apart from a bcrypt account.
    package static func check(_ password: String, against stored: StoredPasswordHash?) -> Bool {
        // A NUL ends the password for bcrypt: one holding it would match on what comes before it alone.
        guard password.utf8.count <= PasswordLimits.maxBytes, !password.utf8.contains(0) else {
            _ = Bcrypt.verify("", hash: equalizingHash)
            return false
        }
        guard case .bcrypt(let bcrypt)? = stored else {
            _ = Bcrypt.verify(password, hash: equalizingHash)
            return stored?.legacyMatches(password) ?? false
        }
        return Bcrypt.verify(password, hash: normalized(bcrypt))
    }

    package func hash(_ password: String) async throws -> String {
        try await hash(password, cost: Self.defaultCost)
    }

    package func hash(_ password: String, cost: UInt8) async throws -> String {
        try PasswordLimits.checkSettable(password)
        return try await executor.run { Bcrypt.hash(password, cost: cost) }
    }

    /// A bcrypt hash, at the default cost, of a random password nobody knows; made once, at first use.
    package static let equalizingHash: String = {
        let password = (0..<4).map { _ in String(UInt64.random(in: .min ... .max), radix: 36) }.joined()
        return Bcrypt.hash(password, cost: defaultCost)
    }()

    /// PHP's `$2y$` and old `$2a$` hashes are checked as `$2b$` (the same algorithm for valid UTF-8 passwords).
    package static func normalized(_ hash: String) -> String {
        hash.hasPrefix("$2y$") || hash.hasPrefix("$2a$") ? "$2b$" + hash.dropFirst(4) : hash
    }
}

/// Counts the password checks waiting or running per username and per client, and admits a new one only
/// while both are under their limits. The counts are held while a check waits, so they bound the queue.
package final class CheckAdmission: Sendable {
    package let perUsername: Int
    package let perClient: Int
    private let pending = NIOLockedValueBox<(usernames: [String: Int], clients: [String: Int])>(([:], [:]))

    /// A check let in; give it back with `release`.
    package struct Ticket: Sendable {
        fileprivate let username: String
        fileprivate let client: String
    }

    package init(perUsername: Int, perClient: Int) {
        self.perUsername = perUsername
        self.perClient = perClient
    }

    /// A ticket, or nil when `username` or `client` already has its most checks pending. Every username
    /// counts, the empty one too; an empty client (a check made outside a request: the CLI, start-up)
    /// is not limited on that key.
    package func admit(username: String, client: String) -> Ticket? {
        pending.withLockedValue { pending in
            if pending.usernames[username, default: 0] >= perUsername { return nil }
            if !client.isEmpty, pending.clients[client, default: 0] >= perClient { return nil }
            pending.usernames[username, default: 0] += 1
            if !client.isEmpty { pending.clients[client, default: 0] += 1 }
            return Ticket(username: username, client: client)
        }
    }

    package func release(_ ticket: Ticket) {
        pending.withLockedValue { pending in
            Self.decrement(&pending.usernames, ticket.username)
            if !ticket.client.isEmpty { Self.decrement(&pending.clients, ticket.client) }
        }
    }

    /// Counts drop to zero by removal, so the maps hold only keys with checks pending.
    private static func decrement(_ counts: inout [String: Int], _ key: String) {
        let left = counts[key, default: 1] - 1
        counts[key] = left > 0 ? left : nil
    }
}
