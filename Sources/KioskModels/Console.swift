/// What the operator console needs from storage beyond the wire methods: the catalogue as stored,
/// finding and looking after readers.
public protocol ConsoleStore: Sendable {
    /// The catalogue the database holds (what the wire methods answer from), in id and key order.
    func catalogue() async throws -> Catalogue
    /// Users whose username, name or e-mail contains `text` (any case), by username; at most `limit`.
    func findUsers(matching text: String, limit: Int) async throws -> [User]
    /// Sets a user's password hash; false when there is no such user.
    func setPasswordHash(username: String, to hash: String) async throws -> Bool
    /// Forgets the failed sign-ins of `username` (a lock-out ends); returns how many there were.
    func clearSignInFailures(username: String) async throws -> Int
}

/// What an operator of the console may do.
public enum OperatorRole: String, Sendable, Hashable, Codable, CaseIterable {
    /// Publishes and withdraws issues, and sees the dashboard.
    case editor
    /// Everything an editor may, and configures: apps, tariff lines, demo quotas, readers.
    case `operator`

    public var mayConfigure: Bool { self == .operator }
}
