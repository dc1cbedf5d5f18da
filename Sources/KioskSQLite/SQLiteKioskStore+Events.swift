import GRDB
import KioskModels
import KioskStoreSupport

/// The event outbox and the webhooks' queue. SQLite has one writer: events appended in a write
/// transaction get their ids in commit order, and every write below (a dispatch, a claim, a finished
/// try) is one immediate transaction, which is the lock that makes it exclusive across processes.
extension SQLiteKioskStore {
    /// Appends `events`, all at `time`, in the caller's write transaction.
    static func appendEvents(_ events: [NewEvent], at time: Int64, _ db: Database) throws {
        for row in EventRow.rows(events, at: time) {
            try db.cachedStatement(sql: "INSERT INTO outbox_events (type, time, body) VALUES (?, ?, ?)")
                .execute(arguments: [row.type, row.time, row.body])
        }
    }

    static let eventColumns = "e.id, e.type, e.time, e.body"

    static func event(_ row: Row, from index: Int = 0) -> KioskEvent? {
        KioskEvent(storedID: row[index], type: row[index + 1], time: row[index + 2], body: row[index + 3])
    }

    // MARK: EventLog

    public func events(after: Int64, types: Set<EventType>?, limit: Int) async throws -> [KioskEvent] {
        if let types, types.isEmpty { return [] }
        let names = types.map { $0.map(\.rawValue).sorted() }
        return try await longRead { db in
            var arguments: StatementArguments = [after]
            var filter = ""
            if let names {
                filter = "AND e.type IN (" + names.map { _ in "?" }.joined(separator: ", ") + ")"
                arguments += StatementArguments(names)
            }
            arguments += [max(0, limit)]
            return try Row.fetchAll(db, sql: """
                SELECT \(Self.eventColumns) FROM outbox_events e WHERE e.id > ? \(filter) ORDER BY e.id LIMIT ?
                """, arguments: arguments).compactMap { Self.event($0) }
        }
    }

    public func eventBounds() async throws -> ClosedRange<Int64>? {
        try await longRead { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT MIN(id), MAX(id) FROM outbox_events"),
                  let first = row[0] as Int64?, let last = row[1] as Int64?, first <= last else { return nil }
            return first...last
        }
    }

    public func appendEvent(_ event: NewEvent, at time: Int64) async throws -> KioskEvent {
        try await write { db in
            try Self.appendEvents([event], at: time, db)
            return KioskEvent(id: db.lastInsertedRowID, type: event.type, time: time, body: event.body)
        }
    }

    public func pruneEvents(before time: Int64) async throws -> Int {
        try await write { db in
            try db.execute(sql: """
                DELETE FROM outbox_events
                WHERE time < ? AND id <= COALESCE((SELECT position FROM outbox_cursor WHERE id = 1), 0)
                  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = outbox_events.id AND d.state = 'waiting')
                """, arguments: [time])
            return db.changesCount
        }
    }

    // MARK: Endpoints

    static let endpointColumns = """
        w.id, w.source, w.name, w.owner, w.url, w.types, w.secrets, w.enabled, w.disabled_reason, w.failing_since, w.created_at
        """

    static func endpoint(_ row: Row, from i: Int = 0) -> WebhookEndpoint {
        WebhookEndpoint(id: row[i], source: WebhookEndpointColumns.source(stored: row[i + 1]), name: row[i + 2], owner: row[i + 3],
                        url: row[i + 4], types: WebhookEndpointColumns.types(stored: row[i + 5]),
                        secrets: WebhookEndpointColumns.secrets(stored: row[i + 6]), enabled: row[i + 7],
                        disabledReason: row[i + 8], failingSince: row[i + 9], createdAt: row[i + 10])
    }

    public func webhookEndpoints(owner: String?) async throws -> [WebhookEndpoint] {
        try await longRead { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.endpointColumns) FROM webhook_endpoints w WHERE ?1 IS NULL OR w.owner = ?1 ORDER BY w.id
                """, arguments: [owner]).map { Self.endpoint($0) }
        }
    }

    public func webhookEndpoint(id: Int64) async throws -> WebhookEndpoint? {
        try await longRead { db in try Self.endpoint(id: id, db) }
    }

    static func endpoint(id: Int64, _ db: Database) throws -> WebhookEndpoint? {
        try Row.fetchOne(db, sql: "SELECT \(endpointColumns) FROM webhook_endpoints w WHERE w.id = ?", arguments: [id])
            .map { endpoint($0) }
    }

    public func saveWebhookEndpoint(_ endpoint: WebhookEndpoint) async throws -> WebhookEndpoint {
        try await write { db in try Self.save(endpoint, db) }
    }

    /// Inserts (id 0) or updates every column of `endpoint`.
    static func save(_ endpoint: WebhookEndpoint, _ db: Database) throws -> WebhookEndpoint {
        let values: StatementArguments = [
            endpoint.source.rawValue, endpoint.name, endpoint.owner, endpoint.url, WebhookEndpointColumns.types(endpoint.types),
            WebhookEndpointColumns.secrets(endpoint.secrets), endpoint.enabled, endpoint.disabledReason, endpoint.failingSince,
            endpoint.createdAt,
        ]
        var saved = endpoint
        if endpoint.id == 0 {
            try db.execute(sql: """
                INSERT INTO webhook_endpoints (source, name, owner, url, types, secrets, enabled, disabled_reason, failing_since,
                                               created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: values)
            saved.id = db.lastInsertedRowID
        } else {
            try db.execute(sql: """
                UPDATE webhook_endpoints SET source = ?, name = ?, owner = ?, url = ?, types = ?, secrets = ?, enabled = ?,
                    disabled_reason = ?, failing_since = ?, created_at = ?
                WHERE id = ?
                """, arguments: values + [endpoint.id])
            guard db.changesCount == 1 else { throw WebhookStoreError.unknownEndpoint(endpoint.id) }
        }
        return saved
    }

    public func changeWebhookEndpoint(id: Int64, _ change: WebhookEndpointChange) async throws -> WebhookEndpoint? {
        try await write { db in
            switch change {
            case .enable:
                try db.execute(sql: "UPDATE webhook_endpoints SET enabled = 1, disabled_reason = NULL, failing_since = NULL WHERE id = ?",
                               arguments: [id])
            case .disable(let reason):
                try db.execute(sql: "UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ? WHERE id = ?", arguments: [reason, id])
            case .secrets(let secrets):
                try db.execute(sql: "UPDATE webhook_endpoints SET secrets = ? WHERE id = ?",
                               arguments: [WebhookEndpointColumns.secrets(secrets), id])
            }
            return db.changesCount == 1 ? try Self.endpoint(id: id, db) : nil
        }
    }

    public func deleteWebhookEndpoint(id: Int64) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM webhook_endpoints WHERE id = ?", arguments: [id])
            return db.changesCount == 1
        }
    }

    public func syncFileEndpoints(_ endpoints: [WebhookEndpoint]) async throws {
        try await write { db in
            let stored = try Row.fetchAll(db, sql: """
                SELECT \(Self.endpointColumns) FROM webhook_endpoints w WHERE w.source = 'file'
                """).map { Self.endpoint($0) }
            for change in FileEndpointSync(stored: stored, wanted: endpoints).changes {
                switch change {
                case .remove(let id): try db.execute(sql: "DELETE FROM webhook_endpoints WHERE id = ?", arguments: [id])
                case .save(let endpoint): _ = try Self.save(endpoint, db)
                }
            }
        }
    }

    // MARK: Deliveries

    public func dispatchEvents(limit: Int, at now: Int64) async throws -> Int {
        try await write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO outbox_cursor (id, position) VALUES (1, 0)")
            let position = try Int64.fetchOne(db, sql: "SELECT position FROM outbox_cursor WHERE id = 1") ?? 0
            let rows = try Row.fetchAll(db, sql: """
                SELECT \(Self.eventColumns) FROM outbox_events e WHERE e.id > ? ORDER BY e.id LIMIT ?
                """, arguments: [position, max(0, limit)])
            guard let last = rows.last.map({ $0[0] as Int64 }) else { return 0 }
            let endpoints = try Row.fetchAll(db, sql: """
                SELECT \(Self.endpointColumns) FROM webhook_endpoints w WHERE w.enabled ORDER BY w.id
                """).map { Self.endpoint($0) }
            for delivery in webhookDeliveries(of: rows.compactMap { Self.event($0) }, to: endpoints) {
                try db.cachedStatement(sql: """
                    INSERT INTO webhook_deliveries (event_id, endpoint_id, attempts, due_at, state) VALUES (?, ?, 0, ?, 'waiting')
                    """).execute(arguments: [delivery.event, delivery.endpoint, now])
            }
            try db.execute(sql: "UPDATE outbox_cursor SET position = ? WHERE id = 1", arguments: [last])
            return rows.count
        }
    }

    /// One endpoint at a time (the write transaction holds off other claimers): its room, then its oldest due.
    public func claimDeliveries(worker: String, now: Int64, leaseUntil: Int64, limit: Int, perEndpoint: Int) async throws -> [WebhookDelivery] {
        try await write { db in
            let limit = max(0, limit)
            var rows: [Row] = []
            let endpoints = try Row.fetchAll(db, sql: """
                SELECT id, failing_since IS NOT NULL FROM webhook_endpoints WHERE enabled ORDER BY id
                """).map { (id: $0[0] as Int64, failing: $0[1] as Bool) }
            for (endpoint, failing) in endpoints {
                let busy = try Int.fetchOne(db.cachedStatement(sql: """
                    SELECT COUNT(*) FROM webhook_deliveries
                    WHERE endpoint_id = ? AND state = 'waiting' AND lease_until > ? AND lease_owner = ?
                    """), arguments: [endpoint, now, worker]) ?? 0
                let room = min(limit, max(0, (failing ? 1 : perEndpoint) - busy))
                guard room > 0 else { continue }
                rows += try Row.fetchAll(db.cachedStatement(sql: """
                    SELECT d.id, d.attempts, \(Self.eventColumns), \(Self.endpointColumns), d.due_at
                    FROM webhook_deliveries d
                    JOIN outbox_events e ON e.id = d.event_id
                    JOIN webhook_endpoints w ON w.id = d.endpoint_id
                    WHERE d.endpoint_id = ?1 AND d.state = 'waiting' AND d.due_at <= ?2 AND (d.lease_until IS NULL OR d.lease_until <= ?2)
                    ORDER BY d.due_at, d.id LIMIT ?3
                    """), arguments: [endpoint, now, room])
            }
            rows.sort { (($0[17] as Int64), ($0[0] as Int64)) < (($1[17] as Int64), ($1[0] as Int64)) }
            var claimed: [WebhookDelivery] = []
            for row in rows.prefix(limit) {
                let id: Int64 = row[0]
                try db.cachedStatement(sql: "UPDATE webhook_deliveries SET lease_owner = ?, lease_until = ? WHERE id = ?")
                    .execute(arguments: [worker, leaseUntil, id])
                guard let event = Self.event(row, from: 2) else { continue }
                claimed.append(WebhookDelivery(id: id, endpoint: Self.endpoint(row, from: 6), event: event, attempts: row[1]))
            }
            return claimed
        }
    }

    public func finishDelivery(_ delivery: WebhookDelivery, worker: String, attempt: DeliveryAttempt, next: WebhookRetries.Next,
                               endpoint: WebhookRetries.EndpointChange) async throws -> Bool {
        let (state, due) = DeliveryState.after(next)
        return try await write { db in
            try db.execute(sql: """
                UPDATE webhook_deliveries
                SET attempts = MAX(attempts, ?), state = ?, due_at = COALESCE(?, due_at), lease_owner = NULL, lease_until = NULL
                WHERE id = ? AND lease_owner = ? AND state = 'waiting'
                """, arguments: [attempt.attempt, state.rawValue, due, delivery.id, worker])
            guard db.changesCount == 1 else { return false }
            try db.execute(sql: """
                INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, event_type, attempt, time, status, latency_ms, answer)
                SELECT id, endpoint_id, event_id, ?, ?, ?, ?, ?, ? FROM webhook_deliveries WHERE id = ?
                """, arguments: [attempt.eventType.rawValue, attempt.attempt, attempt.time, attempt.status,
                                 attempt.latencyMilliseconds, attempt.answer, delivery.id])
            switch endpoint {
            case .none: break
            case .recovered:
                try db.execute(sql: """
                    UPDATE webhook_endpoints SET failing_since = NULL WHERE id = (SELECT endpoint_id FROM webhook_deliveries WHERE id = ?)
                    """, arguments: [delivery.id])
            case .startedFailing:
                try db.execute(sql: """
                    UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, ?)
                    WHERE id = (SELECT endpoint_id FROM webhook_deliveries WHERE id = ?)
                    """, arguments: [attempt.time, delivery.id])
            case .disable(let reason):
                try db.execute(sql: """
                    UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?
                    WHERE id = (SELECT endpoint_id FROM webhook_deliveries WHERE id = ?)
                    """, arguments: [reason, delivery.id])
            }
            return true
        }
    }

    public func deliveryLog(endpointID: Int64, limit: Int) async throws -> [DeliveryAttempt] {
        try await longRead { db in
            try Row.fetchAll(db, sql: """
                SELECT delivery_id, endpoint_id, event_id, event_type, attempt, time, status, latency_ms, answer
                FROM webhook_attempts WHERE endpoint_id = ? ORDER BY time DESC, id DESC LIMIT ?
                """, arguments: [endpointID, max(0, limit)]).compactMap { row in
                EventType(rawValue: row[3]).map {
                    DeliveryAttempt(deliveryID: row[0], endpointID: row[1], eventID: row[2], eventType: $0, attempt: row[4],
                                    time: row[5], status: row[6], latencyMilliseconds: row[7], answer: row[8])
                }
            }
        }
    }

    public func redeliver(eventID: Int64, endpointID: Int64, at now: Int64) async throws -> Bool {
        try await write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM outbox_events WHERE id = ?", arguments: [eventID]) == true,
                  try Bool.fetchOne(db, sql: "SELECT 1 FROM webhook_endpoints WHERE id = ?", arguments: [endpointID]) == true
            else { return false }
            // One still waiting (and not leased) is made due now; otherwise a new delivery.
            let waiting = try Row.fetchOne(db, sql: """
                SELECT id, lease_until FROM webhook_deliveries WHERE event_id = ? AND endpoint_id = ? AND state = 'waiting'
                ORDER BY id LIMIT 1
                """, arguments: [eventID, endpointID])
            if let waiting {
                let leaseUntil: Int64? = waiting[1]
                if leaseUntil.map({ $0 <= now }) ?? true {
                    try db.execute(sql: "UPDATE webhook_deliveries SET due_at = MIN(due_at, ?) WHERE id = ?",
                                   arguments: [now, waiting[0] as Int64])
                }
                return true
            }
            try db.execute(sql: """
                INSERT INTO webhook_deliveries (event_id, endpoint_id, attempts, due_at, state) VALUES (?, ?, 0, ?, 'waiting')
                """, arguments: [eventID, endpointID, now])
            return true
        }
    }

    public func deliveryBacklog(at now: Int64) async throws -> (waiting: Int, oldestDue: Int64?) {
        try await longRead { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT COUNT(*), MIN(CASE WHEN d.due_at <= ? THEN d.due_at END)
                FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
                WHERE d.state = 'waiting' AND w.enabled
                """, arguments: [now])
            let waiting: Int = row?[0] ?? 0
            let oldestDue: Int64? = row?[1]
            return (waiting, oldestDue)
        }
    }
}
