import HummingbirdBcrypt
import KioskModels
import NIOCore
import KioskConfig
import KioskFiles

/// bcrypt hashing, and checking of bcrypt and the 2012 system's hashes, off the event loops (on the
/// blocking executor).
///
/// Checks pass through `gate`: a flood of distinct wrong passwords (each one a cache miss and a full
/// bcrypt) waits its turn instead of taking every pool thread from file delivery and the database.
package struct PasswordHashing: PasswordHasher {
    package static let defaultCost: UInt8 = 11

    private let executor: BlockingExecutor

    package init(executor: BlockingExecutor = .shared) { self.executor = executor }
    /// Process-wide, like the executor it protects: half the processors (at least one) verify at once.
    package static let gate = ConcurrencyGate(limit: max(1, System.coreCount / 2))

    package func verify(_ password: String, against hash: String?) async -> Bool {
        let stored = hash.flatMap(StoredPasswordHash.init)
        return await Self.gate.run {
            (try? await executor.run { Self.check(password, against: stored) }) ?? false
        }
    }

    /// The check itself, on the calling thread. No account, or a legacy hash (MD5 is fast), costs the
    /// same bcrypt work as an account's check, so the time taken tells neither apart from a bcrypt account.
    package static func check(_ password: String, against stored: StoredPasswordHash?) -> Bool {
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
        try await executor.run { Bcrypt.hash(password, cost: cost) }
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

/// Lets at most `limit` operations run at once; the others wait in arrival order.
package actor ConcurrencyGate {
    private let limit: Int
    private var running = 0
    /// Waiters from `head` on, in arrival order (the consumed front is dropped in batches).
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var head = 0

    package init(limit: Int) { self.limit = limit }

    package func run<Value: Sendable>(_ operation: @Sendable () async -> Value) async -> Value {
        if running < limit {
            running += 1
        } else {
            await withCheckedContinuation { waiting.append($0) }   // the slot is handed over by `leave`
        }
        defer { leave() }
        return await operation()
    }

    private func leave() {
        guard head < waiting.count else {
            running -= 1
            return
        }
        let next = waiting[head]
        head += 1
        if head >= 64, head * 2 >= waiting.count {
            waiting.removeFirst(head)
            head = 0
        }
        next.resume()
    }
}
