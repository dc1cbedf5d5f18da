/// Whom an account lets in: a reader app (HTTP Basic on XML-RPC), a publisher (HTTP Basic on `/publish`),
/// or an operator of the console (`/admin`).
public enum AccountKind: String, Sendable, Hashable, Codable, CaseIterable {
    case apiClient = "api_client"
    case publisher
    case `operator`
}

/// A stored account: kept in the database with the catalogue (synced from the file, or edited in the
/// console, by `catalogue_source`), and read from there by every instance when it authenticates.
public struct Account: Sendable, Hashable {
    public var kind: AccountKind
    public var username: String
    /// A bcrypt hash; the password itself is never kept.
    public var passwordHash: String
    /// An operator's role; nil for the other kinds.
    public var role: OperatorRole?

    public init(kind: AccountKind, username: String, passwordHash: String, role: OperatorRole? = nil) {
        self.kind = kind; self.username = username; self.passwordHash = passwordHash
        self.role = kind == .operator ? role ?? .editor : nil
    }

    /// `kind:username`: how the audit log and the sync's report name the account.
    public var label: String { "\(kind.rawValue):\(username)" }
}

extension Catalogue {
    /// The catalogue's accounts in the order stores keep them (kind, then username): what the sync compares.
    public var sortedAccounts: [Account] {
        accounts.sorted { ($0.kind.rawValue, $0.username) < ($1.kind.rawValue, $1.username) }
    }
}

/// What changes between two account lists, in the sync's words (never a hash): additions, removals,
/// password and role changes, keyed by kind and username.
public enum AccountChanges {
    public static func describe(from current: [Account], to wanted: [Account]) -> [String] {
        let old = Dictionary(current.map { ($0.label, $0) }, uniquingKeysWith: { first, _ in first })
        let new = Dictionary(wanted.map { ($0.label, $0) }, uniquingKeysWith: { first, _ in first })
        var changes: [String] = []
        for account in current where new[account.label] == nil {
            changes.append("remove account \(account.label)")
        }
        for account in wanted {
            guard let stored = old[account.label] else {
                changes.append("add account \(account.label)" + (account.role.map { " (\($0.rawValue))" } ?? ""))
                continue
            }
            if stored.passwordHash != account.passwordHash { changes.append("set password of account \(account.label)") }
            if stored.role != account.role, let role = account.role { changes.append("set role of account \(account.label) to \(role.rawValue)") }
        }
        return changes
    }
}
