import GRDB
import KioskModels

/// A user to add or update, with the subscriptions to set.
public struct UserImport: Sendable, Hashable {
    public var username: String
    public var name: String
    public var email: String
    /// A bcrypt hash, already made.
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

/// Refusals of the user administration commands.
public enum UserAdministrationError: Error, Hashable, CustomStringConvertible {
    case usernameTaken(String)
    case unknownUser(String)
    case unknownEdition(Int)

    public var description: String {
        switch self {
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
            try db.execute(sql: """
                INSERT INTO users (username, name, email, password_hash, created_at) VALUES (?, ?, ?, ?, ?)
                """, arguments: [username, name, email, passwordHash, time])
            return Int(db.lastInsertedRowID)
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
                    try db.execute(sql: """
                        INSERT INTO users (username, name, email, password_hash, created_at) VALUES (?, ?, ?, ?, ?)
                        """, arguments: [user.username, user.name, user.email, user.passwordHash, time])
                    userID = Int(db.lastInsertedRowID)
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

    private static func setSubscription(_ db: Database, userID: Int, editionID: Int, until: IssueDate) throws {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM editions WHERE id = ?", arguments: [editionID]) == true else {
            throw UserAdministrationError.unknownEdition(editionID)
        }
        try db.execute(sql: """
            INSERT INTO subscriptions (user_id, edition_id, until) VALUES (?, ?, ?)
            ON CONFLICT (user_id, edition_id) DO UPDATE SET until = excluded.until
            """, arguments: [userID, editionID, until.description])
    }
}
