import KioskModels
import KioskStoreSupport
import Logging
import PostgresNIO

/// The event outbox and the webhooks' queue, as `SQLiteKioskStore+Events.swift` keeps them. Where SQLite's
/// single writer orders and excludes by itself: events are appended under `PostgresSchema.outboxLock`, so
/// their ids follow commit order; one dispatcher at a time holds the cursor's row (`FOR UPDATE`); claims
/// skip the deliveries another claimer is taking (`FOR UPDATE SKIP LOCKED`).
extension PostgresKioskStore {
    /// Appends `events`, all at `time`, in the caller's transaction. Must be its last statements: the
    /// outbox lock taken here is held until the transaction ends, so that the next append gets its ids
    /// only after this one is committed (or rolled back).
    func appendEvents(_ events: [NewEvent], at time: Int64, on c: PostgresConnection) async throws {
        guard !events.isEmpty else { return }
        let rows = EventRow.rows(events, at: time)
        try await c.run("SELECT pg_advisory_xact_lock(\(PostgresSchema.outboxLock))", logger: logger)
        try await c.run("""
            INSERT INTO outbox_events (type, time, body)
            SELECT u.type, u.time, u.body
            FROM unnest(\(rows.map(\.type))::text[], \(rows.map(\.time))::bigint[], \(rows.map(\.body))::text[])
                WITH ORDINALITY AS u(type, time, body, n)
            ORDER BY u.n
            """, logger: logger)
    }

    typealias EventColumns = (Int64, String, Int64, String)
    static let eventColumns = "e.id, e.type, e.time, e.body"

    static func event(_ row: EventColumns) -> KioskEvent? {
        KioskEvent(storedID: row.0, type: row.1, time: row.2, body: row.3)
    }

    // MARK: EventLog

    public func events(after: Int64, types: Set<EventType>?, limit: Int) async throws -> [KioskEvent] {
        if let types, types.isEmpty { return [] }
        let names = types.map { $0.map(\.rawValue).sorted() }
        let limit = max(0, limit)
        return try await withConnection { [self] c in
            let rows: [EventColumns]
            if let names {
                rows = try await c.rows("""
                    SELECT \(unescaped: Self.eventColumns) FROM outbox_events e
                    WHERE e.id > \(after) AND e.type = ANY(\(names)::text[]) ORDER BY e.id LIMIT \(limit)
                    """, EventColumns.self, logger: logger)
            } else {
                rows = try await c.rows("""
                    SELECT \(unescaped: Self.eventColumns) FROM outbox_events e WHERE e.id > \(after) ORDER BY e.id LIMIT \(limit)
                    """, EventColumns.self, logger: logger)
            }
            return rows.compactMap(Self.event)
        }
    }

    public func eventBounds() async throws -> ClosedRange<Int64>? {
        try await withConnection { [self] c in
            guard let row = try await c.rows("SELECT MIN(id), MAX(id) FROM outbox_events", (Int64?, Int64?).self, logger: logger).first,
                  let first = row.0, let last = row.1, first <= last else { return nil }
            return first...last
        }
    }

    public func appendEvent(_ event: NewEvent, at time: Int64) async throws -> KioskEvent {
        let row = EventRow(event, at: time)
        return try await withTransaction { [self] c in
            try await c.run("SELECT pg_advisory_xact_lock(\(PostgresSchema.outboxLock))", logger: logger)
            guard let id = try await c.value("""
                INSERT INTO outbox_events (type, time, body) VALUES (\(row.type), \(row.time), \(row.body)) RETURNING id
                """, Int64.self, logger: logger) else { throw EventStorageError.noRowID }
            return KioskEvent(id: id, type: event.type, time: time, body: event.body)
        }
    }

    public func pruneEvents(before time: Int64) async throws -> Int {
        try await withConnection(bounded: false) { [self] c in
            try await c.run("""
                DELETE FROM outbox_events e
                WHERE e.time < \(time) AND e.id <= COALESCE((SELECT position FROM outbox_cursor WHERE id = 1), 0)
                  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.state = 'waiting')
                RETURNING 1
                """, logger: logger)
        }
    }

    // MARK: Endpoints

    static let endpointColumns = """
        w.id, w.source, w.name, w.owner, w.url, w.types, w.secrets, w.enabled, w.disabled_reason, w.failing_since, w.created_at
        """
    typealias EndpointColumns = (Int64, String, String, String, String, String, String, Bool, String?, Int64?, Int64)

    static func endpoint(_ r: EndpointColumns) -> WebhookEndpoint {
        WebhookEndpoint(id: r.0, source: WebhookEndpointColumns.source(stored: r.1), name: r.2, owner: r.3, url: r.4,
                        types: WebhookEndpointColumns.types(stored: r.5), secrets: WebhookEndpointColumns.secrets(stored: r.6),
                        enabled: r.7, disabledReason: r.8, failingSince: r.9, createdAt: r.10)
    }

    public func webhookEndpoints(owner: String?) async throws -> [WebhookEndpoint] {
        try await withConnection { [self] c in
            try await c.rows("""
                SELECT \(unescaped: Self.endpointColumns) FROM webhook_endpoints w
                WHERE \(owner)::text IS NULL OR w.owner = \(owner) ORDER BY w.id
                """, EndpointColumns.self, logger: logger).map(Self.endpoint)
        }
    }

    public func webhookEndpoint(id: Int64) async throws -> WebhookEndpoint? {
        try await withConnection { [self] c in try await endpoint(id: id, on: c) }
    }

    func endpoint(id: Int64, on c: PostgresConnection) async throws -> WebhookEndpoint? {
        try await c.rows("SELECT \(unescaped: Self.endpointColumns) FROM webhook_endpoints w WHERE w.id = \(id)",
                         EndpointColumns.self, logger: logger).first.map(Self.endpoint)
    }

    public func saveWebhookEndpoint(_ endpoint: WebhookEndpoint) async throws -> WebhookEndpoint {
        try await withTransaction { [self] c in try await save(endpoint, on: c) }
    }

    /// Inserts (id 0) or updates every column of `endpoint`.
    func save(_ endpoint: WebhookEndpoint, on c: PostgresConnection) async throws -> WebhookEndpoint {
        let types = WebhookEndpointColumns.types(endpoint.types), secrets = WebhookEndpointColumns.secrets(endpoint.secrets)
        var saved = endpoint
        if endpoint.id == 0 {
            guard let id = try await c.value("""
                INSERT INTO webhook_endpoints (source, name, owner, url, types, secrets, enabled, disabled_reason, failing_since,
                                               created_at)
                VALUES (\(endpoint.source.rawValue), \(endpoint.name), \(endpoint.owner), \(endpoint.url), \(types), \(secrets),
                        \(endpoint.enabled), \(endpoint.disabledReason), \(endpoint.failingSince), \(endpoint.createdAt))
                RETURNING id
                """, Int64.self, logger: logger) else { throw EventStorageError.noRowID }
            saved.id = id
        } else {
            guard try await c.run("""
                UPDATE webhook_endpoints SET source = \(endpoint.source.rawValue), name = \(endpoint.name), owner = \(endpoint.owner),
                    url = \(endpoint.url), types = \(types), secrets = \(secrets), enabled = \(endpoint.enabled),
                    disabled_reason = \(endpoint.disabledReason), failing_since = \(endpoint.failingSince),
                    created_at = \(endpoint.createdAt)
                WHERE id = \(endpoint.id) RETURNING 1
                """, logger: logger) == 1 else { throw WebhookStoreError.unknownEndpoint(endpoint.id) }
        }
        return saved
    }

    public func changeWebhookEndpoint(id: Int64, _ change: WebhookEndpointChange) async throws -> WebhookEndpoint? {
        try await withTransaction { [self] c in
            let changed: Int
            switch change {
            case .enable:
                changed = try await c.run("""
                    UPDATE webhook_endpoints SET enabled = TRUE, disabled_reason = NULL, failing_since = NULL
                    WHERE id = \(id) RETURNING 1
                    """, logger: logger)
            case .disable(let reason):
                changed = try await c.run("""
                    UPDATE webhook_endpoints SET enabled = FALSE, disabled_reason = \(reason) WHERE id = \(id) RETURNING 1
                    """, logger: logger)
            case .secrets(let secrets):
                let column = WebhookEndpointColumns.secrets(secrets)
                changed = try await c.run("UPDATE webhook_endpoints SET secrets = \(column) WHERE id = \(id) RETURNING 1", logger: logger)
            }
            return changed == 1 ? try await endpoint(id: id, on: c) : nil
        }
    }

    public func deleteWebhookEndpoint(id: Int64) async throws -> Bool {
        try await withConnection { [self] c in
            try await c.run("DELETE FROM webhook_endpoints WHERE id = \(id) RETURNING 1", logger: logger) == 1
        }
    }

    /// Syncs from several instances take turns on the advisory lock, so each sees what the previous left.
    public func syncFileEndpoints(_ endpoints: [WebhookEndpoint]) async throws {
        try await withTransaction { [self] c in
            try await c.run("SELECT pg_advisory_xact_lock(\(Self.fileEndpointsLock))", logger: logger)
            let stored = try await c.rows("""
                SELECT \(unescaped: Self.endpointColumns) FROM webhook_endpoints w WHERE w.source = 'file'
                """, EndpointColumns.self, logger: logger).map(Self.endpoint)
            for change in FileEndpointSync(stored: stored, wanted: endpoints).changes {
                switch change {
                case .remove(let id): try await c.run("DELETE FROM webhook_endpoints WHERE id = \(id)", logger: logger)
                case .save(let endpoint): _ = try await save(endpoint, on: c)
                }
            }
        }
    }

    /// `pg_advisory_xact_lock` key of `syncFileEndpoints`: "WEBHOOKS" in ASCII.
    static let fileEndpointsLock: Int64 = 0x5745_4248_4F4F_4B53

    // MARK: Deliveries

    public func dispatchEvents(limit: Int, at now: Int64) async throws -> Int {
        let limit = max(0, limit)
        return try await withTransaction(bounded: false) { [self] c in
            try await c.run("INSERT INTO outbox_cursor (id, position) VALUES (1, 0) ON CONFLICT (id) DO NOTHING", logger: logger)
            // One dispatcher at a time: the others wait here, then read the position this one leaves.
            let position = try await c.value("SELECT position FROM outbox_cursor WHERE id = 1 FOR UPDATE", Int64.self,
                                             logger: logger) ?? 0
            let rows = try await c.rows("""
                SELECT \(unescaped: Self.eventColumns) FROM outbox_events e WHERE e.id > \(position) ORDER BY e.id LIMIT \(limit)
                """, EventColumns.self, logger: logger)
            guard let last = rows.last?.0 else { return 0 }
            let endpoints = try await c.rows("""
                SELECT \(unescaped: Self.endpointColumns) FROM webhook_endpoints w WHERE w.enabled ORDER BY w.id
                """, EndpointColumns.self, logger: logger).map(Self.endpoint)
            let deliveries = webhookDeliveries(of: rows.compactMap(Self.event), to: endpoints)
            if !deliveries.isEmpty {
                try await c.run("""
                    INSERT INTO webhook_deliveries (event_id, endpoint_id, attempts, due_at, state)
                    SELECT u.event_id, u.endpoint_id, 0, \(now), 'waiting'
                    FROM unnest(\(deliveries.map(\.event))::bigint[], \(deliveries.map(\.endpoint))::bigint[])
                        WITH ORDINALITY AS u(event_id, endpoint_id, n)
                    ORDER BY u.n
                    """, logger: logger)
            }
            try await c.run("UPDATE outbox_cursor SET position = \(last) WHERE id = 1", logger: logger)
            return rows.count
        }
    }

    typealias ClaimColumns = (Int64, Int, Int64, String, Int64, String,
                              Int64, String, String, String, String, String, String, Bool, String?, Int64?, Int64)

    /// Each enabled endpoint's oldest due, as many as its room (`LATERAL`), then the oldest of those. The
    /// deliveries another claimer is taking are skipped (`SKIP LOCKED`), not waited for; one whose lease it
    /// committed is seen leased when rechecked.
    public func claimDeliveries(worker: String, now: Int64, leaseUntil: Int64, limit: Int, perEndpoint: Int) async throws -> [WebhookDelivery] {
        let limit = max(0, limit)
        let perEndpoint = Int64(clamping: perEndpoint)
        return try await withTransaction { [self] c in
            let rows = try await c.rows("""
                WITH picked AS (
                    SELECT p.id FROM webhook_endpoints w
                    CROSS JOIN LATERAL (
                        SELECT d.id, d.due_at FROM webhook_deliveries d
                        WHERE d.endpoint_id = w.id AND d.state = 'waiting' AND d.due_at <= \(now)
                          AND (d.lease_until IS NULL OR d.lease_until <= \(now))
                        ORDER BY d.due_at, d.id
                        LIMIT GREATEST(0, LEAST(\(Int64(clamping: limit)), (CASE WHEN w.failing_since IS NULL THEN \(perEndpoint) ELSE 1 END) - (
                            SELECT COUNT(*) FROM webhook_deliveries b
                            WHERE b.endpoint_id = w.id AND b.state = 'waiting' AND b.lease_until > \(now)
                              AND b.lease_owner = \(worker))))
                        FOR UPDATE OF d SKIP LOCKED) p
                    WHERE w.enabled
                    ORDER BY p.due_at, p.id LIMIT \(limit)),
                leased AS (
                    UPDATE webhook_deliveries d SET lease_owner = \(worker), lease_until = \(leaseUntil)
                    FROM picked WHERE d.id = picked.id
                    RETURNING d.id, d.attempts, d.event_id, d.endpoint_id, d.due_at)
                SELECT l.id, l.attempts, \(unescaped: Self.eventColumns), \(unescaped: Self.endpointColumns)
                FROM leased l JOIN outbox_events e ON e.id = l.event_id JOIN webhook_endpoints w ON w.id = l.endpoint_id
                ORDER BY l.due_at, l.id
                """, ClaimColumns.self, logger: logger)
            return rows.compactMap { r in
                Self.event((r.2, r.3, r.4, r.5)).map { event in
                    WebhookDelivery(id: r.0, endpoint: Self.endpoint((r.6, r.7, r.8, r.9, r.10, r.11, r.12, r.13, r.14, r.15, r.16)),
                                    event: event, attempts: r.1)
                }
            }
        }
    }

    public func finishDelivery(_ delivery: WebhookDelivery, worker: String, attempt: DeliveryAttempt, next: WebhookRetries.Next,
                               endpoint: WebhookRetries.EndpointChange) async throws -> Bool {
        let (state, due) = DeliveryState.after(next)
        return try await withTransaction { [self] c in
            guard let held = try await c.rows("""
                UPDATE webhook_deliveries
                SET attempts = GREATEST(attempts, \(attempt.attempt)), state = \(state.rawValue), due_at = COALESCE(\(due), due_at),
                    lease_owner = NULL, lease_until = NULL
                WHERE id = \(delivery.id) AND lease_owner = \(worker) AND state = 'waiting'
                RETURNING endpoint_id, event_id
                """, (Int64, Int64).self, logger: logger).first else { return false }
            try await c.run("""
                INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, event_type, attempt, time, status, latency_ms, answer)
                VALUES (\(delivery.id), \(held.0), \(held.1), \(attempt.eventType.rawValue), \(attempt.attempt), \(attempt.time),
                        \(attempt.status), \(attempt.latencyMilliseconds), \(attempt.answer))
                """, logger: logger)
            switch endpoint {
            case .none: break
            case .recovered:
                try await c.run("UPDATE webhook_endpoints SET failing_since = NULL WHERE id = \(held.0)", logger: logger)
            case .startedFailing:
                try await c.run("""
                    UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, \(attempt.time)) WHERE id = \(held.0)
                    """, logger: logger)
            case .disable(let reason):
                try await c.run("UPDATE webhook_endpoints SET enabled = false, disabled_reason = \(reason) WHERE id = \(held.0)",
                                logger: logger)
            }
            return true
        }
    }

    public func deliveryLog(endpointID: Int64, limit: Int) async throws -> [DeliveryAttempt] {
        let limit = max(0, limit)
        return try await withConnection { [self] c in
            try await c.rows("""
                SELECT delivery_id, endpoint_id, event_id, event_type, attempt, time, status, latency_ms, answer
                FROM webhook_attempts WHERE endpoint_id = \(endpointID) ORDER BY time DESC, id DESC LIMIT \(limit)
                """, (Int64, Int64, Int64, String, Int, Int64, Int?, Int64, String).self, logger: logger).compactMap { r in
                EventType(rawValue: r.3).map {
                    DeliveryAttempt(deliveryID: r.0, endpointID: r.1, eventID: r.2, eventType: $0, attempt: r.4, time: r.5,
                                    status: r.6, latencyMilliseconds: r.7, answer: r.8)
                }
            }
        }
    }

    public func redeliver(eventID: Int64, endpointID: Int64, at now: Int64) async throws -> Bool {
        try await withTransaction { [self] c in
            // The event's row is locked against a prune, the endpoint's against a deletion, until this commits.
            guard try await c.run("SELECT 1 FROM outbox_events WHERE id = \(eventID) FOR SHARE", logger: logger) == 1,
                  try await c.run("SELECT 1 FROM webhook_endpoints WHERE id = \(endpointID) FOR SHARE", logger: logger) == 1
            else { return false }
            // One still waiting (and not leased) is made due now; otherwise a new delivery.
            if let waiting = try await c.rows("""
                SELECT id, lease_until FROM webhook_deliveries
                WHERE event_id = \(eventID) AND endpoint_id = \(endpointID) AND state = 'waiting'
                ORDER BY id LIMIT 1 FOR UPDATE
                """, (Int64, Int64?).self, logger: logger).first {
                if waiting.1.map({ $0 <= now }) ?? true {
                    try await c.run("UPDATE webhook_deliveries SET due_at = LEAST(due_at, \(now)) WHERE id = \(waiting.0)", logger: logger)
                }
                return true
            }
            try await c.run("""
                INSERT INTO webhook_deliveries (event_id, endpoint_id, attempts, due_at, state)
                VALUES (\(eventID), \(endpointID), 0, \(now), 'waiting')
                """, logger: logger)
            return true
        }
    }

    public func deliveryBacklog(at now: Int64) async throws -> (waiting: Int, oldestDue: Int64?) {
        try await withConnection { [self] c in
            let row = try await c.rows("""
                SELECT COUNT(*)::bigint, MIN(CASE WHEN d.due_at <= \(now) THEN d.due_at END)
                FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
                WHERE d.state = 'waiting' AND w.enabled
                """, (Int, Int64?).self, logger: logger).first
            return (row?.0 ?? 0, row?.1)
        }
    }
}

/// The outbox or the webhooks could not be stored as asked.
enum EventStorageError: Error, CustomStringConvertible {
    /// PostgreSQL answered an insert without the new row's id.
    case noRowID

    var description: String {
        switch self {
        case .noRowID: "PostgreSQL stored an event or an endpoint without answering its id"
        }
    }
}
