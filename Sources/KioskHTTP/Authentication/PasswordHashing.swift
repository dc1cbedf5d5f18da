import HummingbirdBcrypt
import KioskModels
import NIOCore
import KioskConfig
import KioskFiles

/// bcrypt hashing, and checking of bcrypt and the 2012 system's hashes, off the event loops, on an executor
/// of their own.
///
/// That executor has half the processors' threads (at least one), and jobs wait for a thread in arrival
/// order. A flood of distinct wrong passwords (each a cache miss and a full bcrypt) therefore waits its turn
/// without taking the blocking executor's threads from file delivery and the database. And a check never
/// waits behind disk work queued on the blocking executor: a publish's fsyncs do not delay a sign-in.
package struct PasswordHashing: PasswordHasher {
    package static let defaultCost: UInt8 = 11

    private let executor: BlockingExecutor

    /// Process-wide: the threads every check and hash runs on.
    package static let executor = BlockingExecutor(threads: max(1, System.coreCount / 2))

    package init(executor: BlockingExecutor = PasswordHashing.executor) { self.executor = executor }

    package func verify(_ password: String, against hash: String?) async -> Bool {
        let stored = hash.flatMap(StoredPasswordHash.init)
        return (try? await executor.run { Self.check(password, against: stored) }) ?? false
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
