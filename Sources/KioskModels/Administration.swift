/// A user to add or update, with the subscriptions to set.
public struct UserImport: Sendable, Hashable {
    public var username: String
    public var name: String
    public var email: String
    /// A slow hash already made: bcrypt, or a 2012 one (`StoredPasswordHash`) replaced at the first sign-in.
    public var passwordHash: String
    public var subscriptions: [(editionID: Int, until: IssueDate)]
    public init(username: String, name: String, email: String, passwordHash: String,
                subscriptions: [(editionID: Int, until: IssueDate)] = []) {
        self.username = username; self.name = name; self.email = email; self.passwordHash = passwordHash
        self.subscriptions = subscriptions
    }
    public static func == (lhs: UserImport, rhs: UserImport) -> Bool {
        lhs.username == rhs.username && lhs.name == rhs.name && lhs.email == rhs.email
            && lhs.passwordHash == rhs.passwordHash
            && lhs.subscriptions.map(\.editionID) == rhs.subscriptions.map(\.editionID)
            && lhs.subscriptions.map(\.until) == rhs.subscriptions.map(\.until)
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(username) }
}

/// What an import did.
public struct UserImportSummary: Sendable, Hashable {
    public var added = 0
    public var updated = 0
    public var subscriptions = 0
    public init() {}
}

/// A device of the 2012 system (a row of its `USERS_MOBILS` table) to take over with its old key.
public struct IdentityImport: Sendable, Hashable {
    /// The 2012 `IDEN_KEY`, kept as the device's key until its next `registrar`.
    public var key: String
    public var appKey: String
    public var deviceKey: String
    /// The signed-in user's name; empty when the identity is anonymous.
    public var username: String
    /// Demos the device consumed on the app.
    public var demosConsumed: Int
    public init(key: String, appKey: String, deviceKey: String, username: String, demosConsumed: Int) {
        self.key = key; self.appKey = appKey; self.deviceKey = deviceKey; self.username = username
        self.demosConsumed = demosConsumed
    }
}

/// What an identity import did.
public struct IdentityImportSummary: Sendable, Hashable {
    public var added = 0
    public var updated = 0
    public init() {}
}

/// A refused row of an import: its index in the list given, and why.
public struct ImportRowError: Error, Hashable, CustomStringConvertible {
    public var index: Int
    public var reason: UserAdministrationError
    public var description: String { reason.description }
    public init(index: Int, reason: UserAdministrationError) { self.index = index; self.reason = reason }
}

/// Refusals of the user administration commands.
public enum UserAdministrationError: Error, Hashable, CustomStringConvertible {
    case usernameTaken(String)
    case unknownUser(String)
    case unknownEdition(Int)
    case unknownApp(String)
    /// An imported identity key already names another app or device.
    case identityKeyTaken(String)

    public var description: String {
        switch self {
        case .unknownApp(let key): "no app \"\(key)\" in the database (is it in the configuration?)"
        case .identityKeyTaken(let key): "identity key \"\(key)\" already belongs to another app or device"
        case .usernameTaken(let name): "a user named \"\(name)\" already exists"
        case .unknownUser(let name): "no user named \"\(name)\""
        case .unknownEdition(let id): "no edition \(id) in the database (is it in the configuration?)"
        }
    }
}

/// What a reader's username may be.
public enum UsernameRule {
    /// Why `username` cannot be a reader's username, or nil when it can.
    public static func problem(with username: String) -> String? {
        guard !username.isEmpty, username.count <= 150, !username.contains(":"),
              !username.unicodeScalars.contains(where: CatalogueName.breaksLine) else {
            return "username must be 1-150 characters without ':', line breaks or control characters"
        }
        return nil
    }
}
