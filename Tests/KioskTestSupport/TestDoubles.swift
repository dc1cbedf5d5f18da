import Foundation
import KioskModels

/// A clock tests move by hand (Unix seconds).
public final class TestClock: KioskClock, @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int64
    public init(_ start: Int64) { value = start }
    public var now: Int64 { lock.withLock { value } }
    public func advance(_ seconds: Int64) { lock.withLock { value += seconds } }
}

/// A `PasswordHasher` without bcrypt's cost: new hashes are `test$` and the password, and the 2012
/// schemes are checked by `StoredPasswordHash.legacyMatches`, as the server's hasher checks them.
/// Every check is noted, so a test sees that unknown users are checked too.
///
/// Domain tests use it instead of the server's bcrypt hasher (HummingbirdBcrypt on NIO's thread pool):
/// the rules under test only need some non-legacy scheme, and bcrypt's own behaviour is tested with
/// the server.
public final class TestPasswordHasher: PasswordHasher, @unchecked Sendable {
    public static let scheme = "test$"
    private let lock = NSLock()
    private var checked: [String?] = []

    public init() {}

    /// The hashes checked so far, in order (nil for an unknown user).
    public var checkedHashes: [String?] { lock.withLock { checked } }

    public func verify(_ password: String, against hash: String?, username: String) async throws -> Bool {
        lock.withLock { checked.append(hash) }
        guard let hash else { return false }
        if hash.hasPrefix(Self.scheme) { return hash == Self.scheme + password }
        guard let stored = StoredPasswordHash(hash), stored.isLegacy else { return false }
        return stored.legacyMatches(password)
    }

    public func hash(_ password: String) async throws -> String {
        try PasswordLimits.checkSettable(password)
        return Self.scheme + password
    }
}
