import GRDB
import KioskModels

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
}

/// A refused row of an import: its index in the list given, and why.
public struct ImportRowError: Error, Hashable, CustomStringConvertible {
    public var index: Int
    public var reason: UserAdministrationError
    public var description: String { reason.description }
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

extension SQLiteKioskStore {
    /// Adds a user; returns the new id.
    public func addUser(username: String, name: String, email: String, passwordHash: String, at time: Int64) async throws -> Int {
        try await pool.write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM users WHERE username = ?", arguments: [username]) == true {
                throw UserAdministrationError.usernameTaken(username)
            }
            var record = UserRecord(username: username, name: name, email: email, passwordHash: passwordHash, createdAt: time)
            try record.insert(db)
            return record.user.id
        }
    }

    /// Sets (adds or moves) a user's subscription end for an edition.
    public func subscribe(username: String, editionID: Int, until: IssueDate) async throws {
        try await pool.write { db in
            guard let userID = try Int.fetchOne(db, sql: "SELECT id FROM users WHERE username = ?", arguments: [username]) else {
                throw UserAdministrationError.unknownUser(username)
            }
            try Self.setSubscription(db, userID: userID, editionID: editionID, until: until)
        }
    }

    /// Adds or updates every user of `users` and sets their subscriptions, all in one transaction.
    public func importUsers(_ users: [UserImport], at time: Int64) async throws -> UserImportSummary {
        try await pool.write { db in
            var summary = UserImportSummary()
            for user in users {
                let existing = try Int.fetchOne(db, sql: "SELECT id FROM users WHERE username = ?", arguments: [user.username])
                let userID: Int
                if let existing {
                    try db.execute(sql: "UPDATE users SET name = ?, email = ?, password_hash = ? WHERE id = ?",
                                   arguments: [user.name, user.email, user.passwordHash, existing])
                    userID = existing
                    summary.updated += 1
                } else {
                    var record = UserRecord(username: user.username, name: user.name, email: user.email,
                                            passwordHash: user.passwordHash, createdAt: time)
                    try record.insert(db)
                    userID = record.user.id
                    summary.added += 1
                }
                for subscription in user.subscriptions {
                    try Self.setSubscription(db, userID: userID, editionID: subscription.editionID, until: subscription.until)
                    summary.subscriptions += 1
                }
            }
            return summary
        }
    }

    /// Adds or updates every identity of `identities`, all in one transaction: each keeps its old key
    /// (marked imported) and its device's demo count becomes at least the one given. A device with
    /// several old identities on one app keeps the largest count, since Kiosk counts demos per device.
    /// `progress` hears (rows written, rows) about twenty times; nothing is committed before the last.
    public func importIdentities(_ identities: [IdentityImport], at time: Int64,
                                 progress: @escaping @Sendable (Int, Int) -> Void = { _, _ in }) async throws -> IdentityImportSummary {
        try await pool.write { db in
            var summary = IdentityImportSummary()
            let step = max(1, identities.count / 20)
            for (index, identity) in identities.enumerated() {
                if index > 0 && index % step == 0 { progress(index, identities.count) }
                func refuse(_ reason: UserAdministrationError) -> ImportRowError { ImportRowError(index: index, reason: reason) }
                guard try Bool.fetchOne(db, sql: "SELECT 1 FROM apps WHERE key = ?", arguments: [identity.appKey]) == true else {
                    throw refuse(.unknownApp(identity.appKey))
                }
                var userID = 0
                if !identity.username.isEmpty {
                    guard let id = try Int.fetchOne(db, sql: "SELECT id FROM users WHERE username = ?",
                                                    arguments: [identity.username]) else {
                        throw refuse(.unknownUser(identity.username))
                    }
                    userID = id
                }
                if let existing = try IdentityRecord.fetchOne(db, key: identity.key) {
                    guard existing.appKey == identity.appKey, existing.deviceKey == identity.deviceKey else {
                        throw refuse(.identityKeyTaken(identity.key))
                    }
                    try db.execute(sql: "UPDATE identities SET user_id = ? WHERE key = ?", arguments: [userID, identity.key])
                    summary.updated += 1
                } else {
                    try IdentityRecord(DeviceIdentity(key: identity.key, appKey: identity.appKey, deviceKey: identity.deviceKey,
                                                      userID: userID, deviceInfo: [:], os: "", imported: true),
                                       seenAt: time).insert(db)
                    summary.added += 1
                }
                try db.execute(sql: """
                    INSERT INTO demo_counters (app_key, device_key, consumed) VALUES (?, ?, ?)
                    ON CONFLICT (app_key, device_key) DO UPDATE SET consumed = MAX(consumed, excluded.consumed)
                    """, arguments: [identity.appKey, identity.deviceKey, identity.demosConsumed])
            }
            progress(identities.count, identities.count)
            return summary
        }
    }

    /// Counts the users whose password hash is still the 2012 system's (anything but bcrypt).
    static let legacyPasswordHashCountSQL = """
        SELECT COUNT(*) FROM users
        WHERE NOT (password_hash GLOB '$2[aby]$[0-9][0-9]$*' AND length(password_hash) = 60)
        """

    private static func setSubscription(_ db: Database, userID: Int, editionID: Int, until: IssueDate) throws {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM editions WHERE id = ?", arguments: [editionID]) == true else {
            throw UserAdministrationError.unknownEdition(editionID)
        }
        let subscription = SubscriptionRecord(userID: userID, editionID: editionID, until: until)
        try db.execute(sql: """
            INSERT INTO subscriptions (user_id, edition_id, until) VALUES (?, ?, ?)
            ON CONFLICT (user_id, edition_id) DO UPDATE SET until = excluded.until
            """, arguments: [subscription.userID, subscription.editionID, subscription.until])
    }
}
