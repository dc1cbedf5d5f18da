import KioskModels
import KioskStoreSupport
import Logging
import PostgresNIO

/// Push registrations and the publish fan-out's progress, as `SQLiteKioskStore+Push.swift` keeps them. Where
/// SQLite's single writer excludes by itself, a claim here holds `PostgresSchema.pushLock` for its transaction,
/// so two instances never claim the same batch.
extension PostgresKioskStore {
    static let pushColumns = """
        r.id, r.app_key, r.device_key, r.identity_key, r.user_id, r.platform, r.token, r.editions, r.language, r.created_at, r.updated_at
        """
    typealias PushColumns = (Int64, String, String, String, Int, String, String, String, String, Int64, Int64)

    static func pushRegistration(_ r: PushColumns) -> PushRegistration? {
        PushRegistrationColumns.registration(id: r.0, appKey: r.1, deviceKey: r.2, identityKey: r.3, userID: r.4, platform: r.5,
                                             token: r.6, editions: r.7, language: r.8, createdAt: r.9, updatedAt: r.10)
    }

    public func savePushRegistration(_ registration: PushRegistration) async throws -> PushRegistration {
        let r = registration
        let editions = PushRegistrationColumns.editions(r.editions)
        return try await withTransaction { [self] c in
            try await c.run("""
                DELETE FROM push_registrations
                WHERE app_key = \(r.appKey) AND platform = \(r.platform.rawValue) AND token = \(r.token) AND device_key <> \(r.deviceKey)
                """, logger: logger)
            let rows = try await c.rows("""
                INSERT INTO push_registrations AS r (app_key, device_key, identity_key, user_id, platform, token, editions, language,
                                                     created_at, updated_at)
                VALUES (\(r.appKey), \(r.deviceKey), \(r.identityKey), \(r.userID), \(r.platform.rawValue), \(r.token), \(editions),
                        \(r.language), \(r.createdAt), \(r.updatedAt))
                ON CONFLICT (app_key, device_key) DO UPDATE SET
                    identity_key = excluded.identity_key, user_id = excluded.user_id, platform = excluded.platform,
                    token = excluded.token, editions = excluded.editions, language = excluded.language,
                    updated_at = excluded.updated_at
                RETURNING \(unescaped: Self.pushColumns)
                """, PushColumns.self, logger: logger)
            guard let stored = rows.first.flatMap(Self.pushRegistration) else { throw PushStorageError.notStored }
            return stored
        }
    }

    public func deletePushRegistration(appKey: String, deviceKey: String, token: String?) async throws -> Bool {
        try await withConnection { [self] c in
            try await c.run("""
                DELETE FROM push_registrations
                WHERE app_key = \(appKey) AND device_key = \(deviceKey) AND (\(token)::text IS NULL OR token = \(token))
                RETURNING 1
                """, logger: logger) > 0
        }
    }

    public func pushRegistration(appKey: String, deviceKey: String) async throws -> PushRegistration? {
        try await withConnection { [self] c in
            try await c.rows("""
                SELECT \(unescaped: Self.pushColumns) FROM push_registrations r WHERE r.app_key = \(appKey) AND r.device_key = \(deviceKey)
                """, PushColumns.self, logger: logger).first.flatMap(Self.pushRegistration)
        }
    }

    public func removeDeadPushTokens(_ tokens: [PushDeadToken]) async throws -> Int {
        guard !tokens.isEmpty else { return 0 }
        return try await withConnection { [self] c in
            try await c.run("""
                DELETE FROM push_registrations r
                USING unnest(\(tokens.map(\.appKey))::text[], \(tokens.map(\.platform.rawValue))::text[], \(tokens.map(\.token))::text[])
                    AS u(app_key, platform, token)
                WHERE r.app_key = u.app_key AND r.platform = u.platform AND r.token = u.token
                RETURNING 1
                """, logger: logger)
        }
    }

    public func claimPushBatch(_ request: PushBatchRequest) async throws -> PushBatch? {
        try await withTransaction { [self] c in
            try await c.run("SELECT pg_advisory_xact_lock(\(PostgresSchema.pushLock))", logger: logger)
            guard let (event, after) = try await pushFanOutInProgress(request, on: c) else { return nil }
            var targets: [PushTarget] = []
            if let issue = PushRegistrationColumns.issue(of: event) {
                let rows = try await c.rows("""
                    SELECT \(unescaped: Self.pushColumns), t.access,
                        EXISTS (SELECT 1 FROM subscriptions s
                                WHERE r.user_id <> 0 AND s.user_id = r.user_id AND s.edition_id = t.edition_id AND s.until >= \(issue.date)),
                        EXISTS (SELECT 1 FROM store_purchases p WHERE r.user_id <> 0 AND p.user_id = r.user_id AND p.app_key = r.app_key)
                          OR EXISTS (SELECT 1 FROM store_purchase_devices d WHERE d.app_key = r.app_key AND d.device_key = r.device_key)
                    FROM push_registrations r JOIN tariff_lines t ON t.app_key = r.app_key AND t.edition_id = \(issue.edition)
                    WHERE r.id > \(after) ORDER BY r.id LIMIT \(request.limit)
                    """, (Int64, String, String, String, Int, String, String, String, String, Int64, Int64, String, Bool, Bool).self,
                    logger: logger)
                targets = rows.compactMap { row -> PushTarget? in
                    guard let registration = Self.pushRegistration((row.0, row.1, row.2, row.3, row.4, row.5, row.6, row.7, row.8,
                                                                    row.9, row.10)),
                          let access = LineAccess(rawValue: row.11) else { return nil }
                    return PushTarget(registration: registration, access: access, subscribed: row.12, holdsPurchases: row.13)
                }
            }
            let last = targets.count < request.limit
            try await c.run("""
                UPDATE push_fanouts SET after_id = \(targets.last?.registration.id ?? after), done = \(last) WHERE event_id = \(event.id)
                """, logger: logger)
            return PushBatch(event: event, targets: targets, last: last)
        }
    }

    /// As `SQLiteKioskStore`'s: the oldest unfinished fan-out, else the next event after the cursor, taken up.
    private func pushFanOutInProgress(_ request: PushBatchRequest, on c: PostgresConnection) async throws -> (KioskEvent, Int64)? {
        if let row = try await c.rows("""
            SELECT \(unescaped: Self.eventColumns), f.after_id FROM push_fanouts f JOIN outbox_events e ON e.id = f.event_id
            WHERE NOT f.done ORDER BY f.event_id LIMIT 1
            """, (Int64, String, Int64, String, Int64).self, logger: logger).first,
            let event = Self.event((row.0, row.1, row.2, row.3)) {
            return (event, row.4)
        }
        let names = request.types.map(\.rawValue).sorted()
        guard !names.isEmpty else { return nil }
        let position = try await c.value("SELECT position FROM push_cursor WHERE id = 1", Int64.self, logger: logger) ?? 0
        // Read committed: each statement sees what committed before it started. The newest id is read first and
        // the search stops there, so that an event committed between the two statements is not passed over.
        let newest = try await c.value("SELECT COALESCE(MAX(id), 0) FROM outbox_events", Int64.self, logger: logger) ?? 0
        let next = try await c.rows("""
            SELECT \(unescaped: Self.eventColumns) FROM outbox_events e
            WHERE e.id > \(position) AND e.id <= \(newest) AND e.time >= \(request.notBefore) AND e.type = ANY(\(names)::text[])
            ORDER BY e.id LIMIT 1
            """, EventColumns.self, logger: logger).first.flatMap(Self.event)
        guard let next else {
            // Nothing to take up: the cursor passes the events seen, so that they are not read again.
            try await c.run("""
                INSERT INTO push_cursor (id, position) VALUES (1, \(newest))
                ON CONFLICT (id) DO UPDATE SET position = GREATEST(push_cursor.position, excluded.position)
                """, logger: logger)
            return nil
        }
        try await c.run("""
            INSERT INTO push_cursor (id, position) VALUES (1, \(next.id)) ON CONFLICT (id) DO UPDATE SET position = excluded.position
            """, logger: logger)
        try await c.run("INSERT INTO push_fanouts (event_id, after_id, done, started_at) VALUES (\(next.id), 0, false, \(request.now))",
                        logger: logger)
        return (next, 0)
    }
}
