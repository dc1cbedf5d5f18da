import GRDB
import KioskModels
import KioskStoreSupport

/// Push registrations and the publish fan-out's progress. Every change is one immediate transaction: the
/// write lock makes a claim exclusive across connections and processes.
extension SQLiteKioskStore {
    static let pushColumns = """
        r.id, r.app_key, r.device_key, r.identity_key, r.user_id, r.platform, r.token, r.editions, r.language, r.created_at, r.updated_at
        """

    static func pushRegistration(_ row: Row) -> PushRegistration? {
        PushRegistrationColumns.registration(id: row[0], appKey: row[1], deviceKey: row[2], identityKey: row[3], userID: row[4],
                                             platform: row[5], token: row[6], editions: row[7], language: row[8],
                                             createdAt: row[9], updatedAt: row[10])
    }

    public func savePushRegistration(_ registration: PushRegistration) async throws -> PushRegistration {
        try await write { db in
            let r = registration
            try db.execute(sql: """
                DELETE FROM push_registrations WHERE app_key = ? AND platform = ? AND token = ? AND device_key <> ?
                """, arguments: [r.appKey, r.platform.rawValue, r.token, r.deviceKey])
            try db.execute(sql: """
                INSERT INTO push_registrations (app_key, device_key, identity_key, user_id, platform, token, editions, language,
                                                created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (app_key, device_key) DO UPDATE SET
                    identity_key = excluded.identity_key, user_id = excluded.user_id, platform = excluded.platform,
                    token = excluded.token, editions = excluded.editions, language = excluded.language,
                    updated_at = excluded.updated_at
                """, arguments: [r.appKey, r.deviceKey, r.identityKey, r.userID, r.platform.rawValue, r.token,
                                 PushRegistrationColumns.editions(r.editions), r.language, r.createdAt, r.updatedAt])
            guard let row = try Row.fetchOne(db, sql: """
                SELECT \(Self.pushColumns) FROM push_registrations r WHERE r.app_key = ? AND r.device_key = ?
                """, arguments: [r.appKey, r.deviceKey]), let stored = Self.pushRegistration(row)
            else { throw PushStorageError.notStored }
            return stored
        }
    }

    public func deletePushRegistration(appKey: String, deviceKey: String, token: String?) async throws -> Bool {
        try await write { db in
            try db.execute(sql: """
                DELETE FROM push_registrations WHERE app_key = ? AND device_key = ? AND (? IS NULL OR token = ?)
                """, arguments: [appKey, deviceKey, token, token])
            return db.changesCount > 0
        }
    }

    public func pushRegistration(appKey: String, deviceKey: String) async throws -> PushRegistration? {
        try await longRead { db in
            try Row.fetchOne(db, sql: """
                SELECT \(Self.pushColumns) FROM push_registrations r WHERE r.app_key = ? AND r.device_key = ?
                """, arguments: [appKey, deviceKey]).flatMap(Self.pushRegistration)
        }
    }

    public func removeDeadPushTokens(_ tokens: [PushDeadToken]) async throws -> Int {
        guard !tokens.isEmpty else { return 0 }
        return try await write { db in
            var removed = 0
            for dead in tokens {
                try db.cachedStatement(sql: "DELETE FROM push_registrations WHERE app_key = ? AND platform = ? AND token = ?")
                    .execute(arguments: [dead.appKey, dead.platform.rawValue, dead.token])
                removed += db.changesCount
            }
            return removed
        }
    }

    public func claimPushBatch(_ request: PushBatchRequest) async throws -> PushBatch? {
        try await write { db in
            guard let (event, after) = try Self.pushFanOutInProgress(request, db) else { return nil }
            var targets: [PushTarget] = []
            if let issue = PushRegistrationColumns.issue(of: event) {
                targets = try Row.fetchAll(db, sql: """
                    SELECT \(Self.pushColumns), t.access,
                        EXISTS (SELECT 1 FROM subscriptions s
                                WHERE r.user_id <> 0 AND s.user_id = r.user_id AND s.edition_id = t.edition_id AND s.until >= ?),
                        EXISTS (SELECT 1 FROM store_purchases p WHERE r.user_id <> 0 AND p.user_id = r.user_id AND p.app_key = r.app_key)
                          OR EXISTS (SELECT 1 FROM store_purchase_devices d WHERE d.app_key = r.app_key AND d.device_key = r.device_key)
                    FROM push_registrations r JOIN tariff_lines t ON t.app_key = r.app_key AND t.edition_id = ?
                    WHERE r.id > ? ORDER BY r.id LIMIT ?
                    """, arguments: [issue.date, issue.edition, after, request.limit]).compactMap { row -> PushTarget? in
                        guard let registration = Self.pushRegistration(row), let access = LineAccess(rawValue: row[11]) else { return nil }
                        return PushTarget(registration: registration, access: access, subscribed: row[12], holdsPurchases: row[13])
                    }
            }
            let last = targets.count < request.limit
            try db.execute(sql: "UPDATE push_fanouts SET after_id = ?, done = ? WHERE event_id = ?",
                           arguments: [targets.last?.registration.id ?? after, last, event.id])
            return PushBatch(event: event, targets: targets, last: last)
        }
    }

    /// The oldest event whose fan-out is not finished, and the last registration id claimed for it; else the
    /// next event to fan out after the cursor, taken up (the cursor moves to it). Nil when none waits.
    private static func pushFanOutInProgress(_ request: PushBatchRequest, _ db: Database) throws -> (KioskEvent, Int64)? {
        if let row = try Row.fetchOne(db, sql: """
            SELECT \(eventColumns), f.after_id FROM push_fanouts f JOIN outbox_events e ON e.id = f.event_id
            WHERE f.done = 0 ORDER BY f.event_id LIMIT 1
            """), let event = event(row) {
            return (event, row[4])
        }
        let position = try Int64.fetchOne(db, sql: "SELECT position FROM push_cursor WHERE id = 1") ?? 0
        let names = request.types.map(\.rawValue).sorted()
        guard !names.isEmpty else { return nil }
        let next = try Row.fetchOne(db, sql: """
            SELECT \(eventColumns) FROM outbox_events e
            WHERE e.id > ? AND e.time >= ? AND e.type IN (\(names.map { _ in "?" }.joined(separator: ", ")))
            ORDER BY e.id LIMIT 1
            """, arguments: [position, request.notBefore] + StatementArguments(names)).flatMap { event($0) }
        guard let next else {
            // Nothing to take up: the cursor passes the events seen, so that they are not read again.
            try db.execute(sql: """
                INSERT INTO push_cursor (id, position) VALUES (1, COALESCE((SELECT MAX(id) FROM outbox_events), 0))
                ON CONFLICT (id) DO UPDATE SET position = MAX(position, excluded.position)
                """)
            return nil
        }
        try db.execute(sql: """
            INSERT INTO push_cursor (id, position) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET position = excluded.position
            """, arguments: [next.id])
        try db.execute(sql: "INSERT INTO push_fanouts (event_id, after_id, done, started_at) VALUES (?, 0, 0, ?)",
                       arguments: [next.id, request.now])
        return (next, 0)
    }
}
