import GRDB
import KioskModels
import KioskStoreSupport

extension SQLiteKioskStore {
    /// Adds a user; returns the new id.
    public func addUser(username: String, name: String, email: String, passwordHash: String, at time: Int64) async throws -> Int {
        try await write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM users WHERE username = ?", arguments: [username]) == true {
                throw UserAdministrationError.usernameTaken(username)
            }
            var record = UserRecord(username: username, name: name, email: email, passwordHash: passwordHash, createdAt: time)
            try record.insert(db)
            try Self.appendEvents([.readerAdded(userID: record.user.id)], at: time, db)
            return record.user.id
        }
    }

    /// Sets (adds or moves) a user's subscription end for an edition.
    public func subscribe(username: String, editionID: Int, until: IssueDate) async throws {
        try await write { db in
            guard let userID = try Int.fetchOne(db, sql: "SELECT id FROM users WHERE username = ?", arguments: [username]) else {
                throw UserAdministrationError.unknownUser(username)
            }
            try Self.setSubscription(db, userID: userID, editionID: editionID, until: until, at: EventRow.now())
        }
    }

    /// Adds or updates every user of `users` and sets their subscriptions, all in one transaction.
    public func importUsers(_ users: [UserImport], at time: Int64) async throws -> UserImportSummary {
        try await write { db in
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
                    try Self.appendEvents([.readerAdded(userID: userID)], at: time, db)
                    summary.added += 1
                }
                for subscription in user.subscriptions {
                    try Self.setSubscription(db, userID: userID, editionID: subscription.editionID, until: subscription.until, at: time)
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
        try await write { db in
            var summary = IdentityImportSummary()
            let reports = ImportProgress(rows: identities.count, report: progress)
            for (index, identity) in identities.enumerated() {
                reports.writing(row: index)
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
            reports.finished()
            return summary
        }
    }

    /// Counts the users whose password hash is still the 2012 system's (anything but bcrypt).
    static let legacyPasswordHashCountSQL = """
        SELECT COUNT(*) FROM users
        WHERE NOT (password_hash GLOB '$2[aby]$[0-9][0-9]$*' AND length(password_hash) = 60)
        """

    /// Sets a subscription's end and appends its event (none when the end is unchanged).
    private static func setSubscription(_ db: Database, userID: Int, editionID: Int, until: IssueDate, at time: Int64) throws {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM editions WHERE id = ?", arguments: [editionID]) == true else {
            throw UserAdministrationError.unknownEdition(editionID)
        }
        let previous = try String.fetchOne(db, sql: "SELECT until FROM subscriptions WHERE user_id = ? AND edition_id = ?",
                                           arguments: [userID, editionID]).flatMap { IssueDate($0) }
        if let event = NewEvent.subscription(userID: userID, editionID: editionID, until: until, previous: previous) {
            try appendEvents([event], at: time, db)
        }
        let subscription = SubscriptionRecord(userID: userID, editionID: editionID, until: until)
        try db.execute(sql: """
            INSERT INTO subscriptions (user_id, edition_id, until) VALUES (?, ?, ?)
            ON CONFLICT (user_id, edition_id) DO UPDATE SET until = excluded.until
            """, arguments: [subscription.userID, subscription.editionID, subscription.until])
    }
}
