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
    /// A publisher's scope: what it may publish to; nil for the other kinds, and for a publisher that may
    /// publish to every edition (accounts made before scopes, until an operator gives them one).
    public var scope: PublisherScope?

    public init(kind: AccountKind, username: String, passwordHash: String, role: OperatorRole? = nil, scope: PublisherScope? = nil) {
        self.kind = kind; self.username = username; self.passwordHash = passwordHash
        self.role = kind == .operator ? role ?? .editor : nil
        self.scope = kind == .publisher ? scope : nil
    }

    /// `kind:username`: how the audit log and the sync's report name the account.
    public var label: String { "\(kind.rawValue):\(username)" }
}

/// The publications and editions a publisher account may publish, withdraw and restore issues of: an
/// edition is in scope when it is listed, or its publication is.
public struct PublisherScope: Sendable, Hashable, CustomStringConvertible {
    public var publications: Set<Int>
    public var editions: Set<Int>

    public init(publications: Set<Int> = [], editions: Set<Int> = []) {
        self.publications = publications; self.editions = editions
    }

    public func allows(editionID: Int, publicationID: Int?) -> Bool {
        editions.contains(editionID) || publicationID.map(publications.contains) == true
    }

    /// How the stores keep it and logs show it: `publications 1,2; editions 7` (either part may be empty).
    public var description: String {
        "publications \(publications.sorted().map(String.init).joined(separator: ",")); "
            + "editions \(editions.sorted().map(String.init).joined(separator: ","))"
    }

    /// Reads `description`'s form back; nil for anything else.
    public init?(stored text: String) {
        let parts = text.split(separator: ";", omittingEmptySubsequences: false).map { $0.split(separator: " ", maxSplits: 1) }
        guard parts.count == 2, parts[0].first == "publications", parts[1].first == "editions",
              let publications = Self.ids(parts[0].dropFirst().first), let editions = Self.ids(parts[1].dropFirst().first)
        else { return nil }
        self.init(publications: publications, editions: editions)
    }

    /// A comma-separated list of positive ids (spaces allowed), as the console's form and the stores write them.
    public static func ids(_ text: Substring?) -> Set<Int>? {
        guard let text else { return [] }
        var ids = Set<Int>()
        for item in text.split(separator: ",") {
            let trimmed = item.filter { $0 != " " }
            guard !trimmed.isEmpty else { continue }
            guard trimmed.utf8.count <= 10, let id = Int(trimmed, radix: 10), id > 0 else { return nil }
            ids.insert(id)
        }
        return ids
    }
}

/// Bounds on passwords, checked before any hashing.
public enum PasswordLimits {
    /// Longest password, in bytes of UTF-8: longer ones are refused as wrong (legacy schemes hash the
    /// whole password thousands of times, so its length must not set the cost).
    public static let maxBytes = 1024
    /// Longest password a new hash is made of: bcrypt reads only the first 72 bytes, so a longer one would
    /// be matched by any password sharing them.
    public static let maxSettableBytes = 72

    /// Why `password` cannot be hashed, or nil: over `maxSettableBytes`, or holding a NUL (bcrypt reads up to
    /// the first NUL, so the rest would not count).
    public static func settingProblem(_ password: String) -> String? {
        if password.utf8.count > maxSettableBytes { return "longer than \(maxSettableBytes) bytes (bcrypt reads no more)" }
        if password.utf8.contains(0) { return "holds a NUL character" }
        return nil
    }

    /// `KioskError.invalidArgument` naming `password` when it cannot be set (`settingProblem`).
    public static func checkSettable(_ password: String) throws {
        if let problem = settingProblem(password) { throw KioskError.invalidArgument(parameter: "password", problem: problem) }
    }
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
                changes.append("add account \(account.label)" + (account.role.map { " (\($0.rawValue))" } ?? "")
                                   + (account.scope.map { " (\($0))" } ?? ""))
                continue
            }
            if stored.passwordHash != account.passwordHash { changes.append("set password of account \(account.label)") }
            if stored.role != account.role, let role = account.role { changes.append("set role of account \(account.label) to \(role.rawValue)") }
            if stored.scope != account.scope {
                changes.append("set scope of account \(account.label) to " + (account.scope.map(\.description) ?? "every edition"))
            }
        }
        return changes
    }
}
