import KioskModels
import KioskStoreSupport
import PostgresNIO

/// The operator's commands: users, subscriptions, imports. Each call is one transaction.
extension PostgresKioskStore {
    public func addUser(username: String, name: String, email: String, passwordHash: String, at time: Int64) async throws -> Int {
        try await withTransaction { [self] c in
            guard let id = try await c.value("""
                INSERT INTO users (username, name, email, password_hash, created_at)
                VALUES (\(username), \(name), \(email), \(passwordHash), \(time))
                ON CONFLICT ((lower(username))) DO NOTHING RETURNING id
                """, Int.self, logger: logger)
            else { throw UserAdministrationError.usernameTaken(username) }
            try await appendEvents([.readerAdded(userID: id)], at: time, on: c)
            return id
        }
    }

    public func subscribe(username: String, editionID: Int, until: IssueDate) async throws {
        try await withTransaction { [self] c in
            guard let userID = try await lookUpUser(username, on: c) else { throw UserAdministrationError.unknownUser(username) }
            let event = try await setSubscription(userID: userID, editionID: editionID, until: until, on: c)
            try await appendEvents(event.map { [$0] } ?? [], at: EventRow.now(), on: c)
        }
    }

    public func importUsers(_ users: [UserImport], at time: Int64) async throws -> UserImportSummary {
        try await withTransaction(bounded: false) { [self] c in
            var summary = UserImportSummary()
            var events: [NewEvent] = []
            for user in users {
                let userID: Int
                if let existing = try await lookUpUser(user.username, on: c) {
                    try await c.run("""
                        UPDATE users SET name = \(user.name), email = \(user.email), password_hash = \(user.passwordHash)
                        WHERE id = \(existing)
                        """, logger: logger)
                    userID = existing
                    summary.updated += 1
                } else {
                    userID = try await c.value("""
                        INSERT INTO users (username, name, email, password_hash, created_at)
                        VALUES (\(user.username), \(user.name), \(user.email), \(user.passwordHash), \(time)) RETURNING id
                        """, Int.self, logger: logger) ?? 0
                    events.append(.readerAdded(userID: userID))
                    summary.added += 1
                }
                for subscription in user.subscriptions {
                    if let event = try await setSubscription(userID: userID, editionID: subscription.editionID,
                                                             until: subscription.until, on: c) {
                        events.append(event)
                    }
                    summary.subscriptions += 1
                }
            }
            try await appendEvents(events, at: time, on: c)
            return summary
        }
    }

    public func importIdentities(_ identities: [IdentityImport], at time: Int64,
                                 progress: @escaping @Sendable (Int, Int) -> Void) async throws -> IdentityImportSummary {
        try await withTransaction(bounded: false) { [self] c in
            var summary = IdentityImportSummary()
            let reports = ImportProgress(rows: identities.count, report: progress)
            let apps = Set(try await c.values("SELECT key FROM apps", String.self, logger: logger))
            for (index, identity) in identities.enumerated() {
                reports.writing(row: index)
                func refuse(_ reason: UserAdministrationError) -> ImportRowError { ImportRowError(index: index, reason: reason) }
                guard apps.contains(identity.appKey) else { throw refuse(.unknownApp(identity.appKey)) }
                var userID = 0
                if !identity.username.isEmpty {
                    guard let id = try await lookUpUser(identity.username, on: c) else { throw refuse(.unknownUser(identity.username)) }
                    userID = id
                }
                if let existing = try await c.rows("SELECT app_key, device_key FROM identities WHERE key = \(identity.key)",
                                                   (String, String).self, logger: logger).first {
                    guard existing.0 == identity.appKey, existing.1 == identity.deviceKey else {
                        throw refuse(.identityKeyTaken(identity.key))
                    }
                    try await c.run("UPDATE identities SET user_id = \(userID) WHERE key = \(identity.key)", logger: logger)
                    summary.updated += 1
                } else {
                    try await c.run("""
                        INSERT INTO identities (key, app_key, device_key, user_id, device_info, os, first_seen, last_seen, imported)
                        VALUES (\(identity.key), \(identity.appKey), \(identity.deviceKey), \(userID), '{}', '', \(time), \(time), true)
                        """, logger: logger)
                    summary.added += 1
                }
                try await c.run("""
                    INSERT INTO demo_counters (app_key, device_key, consumed)
                    VALUES (\(identity.appKey), \(identity.deviceKey), \(identity.demosConsumed))
                    ON CONFLICT (app_key, device_key) DO UPDATE SET consumed = GREATEST(demo_counters.consumed, excluded.consumed)
                    """, logger: logger)
            }
            reports.finished()
            return summary
        }
    }

    private func lookUpUser(_ username: String, on c: PostgresConnection) async throws -> Int? {
        try await c.value("SELECT id FROM users WHERE lower(username) = lower(\(username))", Int.self, logger: logger)
    }

    /// Sets a subscription's end; returns its event (nil when the end is unchanged), for the caller to append
    /// last. A concurrent first subscription waits on the insert, then reads the end the other set.
    private func setSubscription(userID: Int, editionID: Int, until: IssueDate, on c: PostgresConnection) async throws -> NewEvent? {
        guard try await c.value("SELECT 1 FROM editions WHERE id = \(editionID)", Int.self, logger: logger) != nil else {
            throw UserAdministrationError.unknownEdition(editionID)
        }
        let day = until.description
        var previous: IssueDate?
        if try await c.run("""
            INSERT INTO subscriptions (user_id, edition_id, until) VALUES (\(userID), \(editionID), \(day))
            ON CONFLICT (user_id, edition_id) DO NOTHING RETURNING 1
            """, logger: logger) == 0 {
            previous = try await c.value("""
                SELECT until FROM subscriptions WHERE user_id = \(userID) AND edition_id = \(editionID) FOR UPDATE
                """, String.self, logger: logger).flatMap { IssueDate($0) }
            try await c.run("UPDATE subscriptions SET until = \(day) WHERE user_id = \(userID) AND edition_id = \(editionID)",
                            logger: logger)
        }
        return NewEvent.subscription(userID: userID, editionID: editionID, until: until, previous: previous)
    }
}
