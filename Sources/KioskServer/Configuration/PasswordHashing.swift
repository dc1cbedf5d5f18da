import HummingbirdBcrypt
import KioskModels
import NIOCore
import NIOPosix

/// bcrypt hashing and checking, off the event loops (on NIO's blocking thread pool).
///
/// Checks pass through `gate`: a flood of distinct wrong passwords (each one a cache miss and a full
/// bcrypt) waits its turn instead of taking every pool thread from file delivery and the database.
struct PasswordHashing: PasswordVerifier {
    static let defaultCost: UInt8 = 11
    /// Process-wide, like the thread pool it protects: half the processors (at least one) verify at once.
    static let gate = ConcurrencyGate(limit: max(1, System.coreCount / 2))

    func verify(_ password: String, against hash: String) async -> Bool {
        guard Self.isBcryptHash(hash) else { return false }
        return await Self.gate.run {
            (try? await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: Self.normalized(hash)) }) ?? false
        }
    }

    func hash(_ password: String, cost: UInt8 = PasswordHashing.defaultCost) async throws -> String {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// `$2a$`, `$2b$` or `$2y$` with a two-digit cost, 22 salt and 31 hash characters.
    static func isBcryptHash(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
              [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(bytes[2]),
              bytes[3] == UInt8(ascii: "$"), bytes[6] == UInt8(ascii: "$"),
              let cost = Int(String(decoding: bytes[4...5], as: UTF8.self)), (4...31).contains(cost)
        else { return false }
        return bytes[7...].allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "/")
        }
    }

    /// PHP's `$2y$` and old `$2a$` hashes are checked as `$2b$` (the same algorithm for valid UTF-8 passwords).
    static func normalized(_ hash: String) -> String {
        hash.hasPrefix("$2y$") || hash.hasPrefix("$2a$") ? "$2b$" + hash.dropFirst(4) : hash
    }
}

/// Lets at most `limit` operations run at once; the others wait in arrival order.
actor ConcurrencyGate {
    private let limit: Int
    private var running = 0
    /// Waiters from `head` on, in arrival order (the consumed front is dropped in batches).
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var head = 0

    init(limit: Int) { self.limit = limit }

    func run<Value: Sendable>(_ operation: @Sendable () async -> Value) async -> Value {
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
