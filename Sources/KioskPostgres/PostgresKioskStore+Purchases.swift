import KioskModels
import KioskStoreSupport
import Logging
import PostgresNIO

/// Store purchases and the stores' notices, as `SQLiteKioskStore+Purchases.swift` keeps them (the rows of
/// `PurchaseRow`). SQLite's single writer serializes every change; here each change to a purchase first
/// takes a transaction-scoped advisory lock on its name (app, store, original id), so two changes to one
/// purchase serialize across connections and instances, even while no row of it exists yet.
extension PostgresKioskStore {
    static let purchaseColumns = """
        p.app_key, p.store, p.original_id, p.product_id, p.kind, p.user_id, p.device_key, p.account_token, p.revoked,
        p.access_end, p.created_at, p.updated_at, p.details
        """
    typealias PurchaseColumns = (String, String, String, String, String, Int, String, String, Bool, Int64, Int64, Int64, String)
    typealias PurchaseColumnsWithID = (String, String, String, String, String, Int, String, String, Bool, Int64, Int64, Int64, String,
                                       Int64)

    static func purchaseRow(_ r: PurchaseColumns) -> PurchaseRow {
        PurchaseRow(appKey: r.0, store: r.1, originalID: r.2, productID: r.3, kind: r.4, userID: r.5, deviceKey: r.6,
                    accountToken: r.7, revoked: r.8, accessEnd: r.9, createdAt: r.10, updatedAt: r.11, details: r.12)
    }

    static func purchaseRow(_ r: PurchaseColumnsWithID) -> (id: Int64, row: PurchaseRow) {
        (r.13, purchaseRow((r.0, r.1, r.2, r.3, r.4, r.5, r.6, r.7, r.8, r.9, r.10, r.11, r.12)))
    }

    public func storeProducts(appKey: String) async throws -> [StoreProduct] {
        try await withConnection { [self] c in
            try await c.rows(Statements.StoreProducts(appKey: appKey), logger: logger).map {
                StoreProduct(appKey: $0.0, id: $0.1, appleID: $0.2, googleID: $0.3, storedKind: $0.4, storedEditions: $0.5,
                             credits: $0.6, storedScope: $0.7)
            }
        }
    }

    public func purchases(appKey: String, userID: Int, deviceKey: String) async throws -> [HeldPurchase] {
        try await withConnection { [self] c in
            try await c.rows(Statements.HeldPurchases(appKey: appKey, userID: userID, deviceKey: deviceKey), logger: logger)
                .compactMap { Self.purchaseRow($0).held }
        }
    }

    public func purchase(appKey: String, store: Storefront, originalID: String) async throws -> HeldPurchase? {
        try await withConnection { [self] c in
            try await purchase(appKey: appKey, store: store.rawValue, originalID: originalID, on: c)?.row.held
        }
    }

    /// A purchase's row and its id; nil when there is none.
    func purchase(appKey: String, store: String, originalID: String,
                  on c: PostgresConnection) async throws -> (id: Int64, row: PurchaseRow)? {
        try await c.rows(Statements.Purchase(appKey: appKey, store: store, originalID: originalID), logger: logger)
            .first.map(Self.purchaseRow)
    }

    /// Serializes, until the transaction ends, the transactions that read and change one purchase, on any
    /// connection of any instance. Its own key space of `hashtextextended` (seed 3; 1 is a device's demos,
    /// 2 sign-in attempts); a collision only makes two purchases wait for each other.
    func lockPurchase(appKey: String, store: String, originalID: String, on c: PostgresConnection) async throws {
        let name = appKey + "\u{1F}" + store + "\u{1F}" + originalID
        try await c.run("SELECT pg_advisory_xact_lock(hashtextextended(\(name), 3))", logger: logger)
    }

    public func changePurchase<T: Sendable>(appKey: String, store: Storefront, originalID: String, recording notice: StoreNoticeRecord?,
                                            _ change: @escaping @Sendable (inout HeldPurchase?) throws -> T) async throws -> T? {
        try await withTransaction { [self] c in
            try await lockPurchase(appKey: appKey, store: store.rawValue, originalID: originalID, on: c)
            if let notice, try await !insert(notice, on: c) { return nil }
            let existing = try await purchase(appKey: appKey, store: store.rawValue, originalID: originalID, on: c)
            var held = existing?.row.held
            let before = held
            // A throw here leaves the transaction, which rolls back the notice too.
            let answer = try change(&held)
            if let held, held != before {
                try await save(held, id: existing?.id, on: c)
                try await appendEvents(NewEvent.purchaseChange(from: before, to: held, at: held.updatedAt), at: held.updatedAt, on: c)
            }
            return answer
        }
    }

    /// Writes a purchase, its devices and its payments (a new one when `id` is nil).
    func save(_ held: HeldPurchase, id: Int64?, on c: PostgresConnection) async throws {
        let row = PurchaseRow(held)
        let purchaseID: Int64
        if let id {
            try await c.run("""
                UPDATE store_purchases SET app_key = \(row.appKey), store = \(row.store), original_id = \(row.originalID),
                    product_id = \(row.productID), kind = \(row.kind), user_id = \(row.userID), device_key = \(row.deviceKey),
                    account_token = \(row.accountToken), revoked = \(row.revoked), access_end = \(row.accessEnd),
                    created_at = \(row.createdAt), updated_at = \(row.updatedAt), details = \(row.details)
                WHERE id = \(id)
                """, logger: logger)
            purchaseID = id
        } else {
            guard let inserted = try await c.value("""
                INSERT INTO store_purchases (app_key, store, original_id, product_id, kind, user_id, device_key, account_token,
                                             revoked, access_end, created_at, updated_at, details)
                VALUES (\(row.appKey), \(row.store), \(row.originalID), \(row.productID), \(row.kind), \(row.userID),
                        \(row.deviceKey), \(row.accountToken), \(row.revoked), \(row.accessEnd), \(row.createdAt),
                        \(row.updatedAt), \(row.details))
                RETURNING id
                """, Int64.self, logger: logger) else { throw PurchaseStorageError.noRowID }
            purchaseID = inserted
        }

        try await c.run("DELETE FROM store_purchase_devices WHERE purchase_id = \(purchaseID)", logger: logger)
        let devices = Set(PurchaseRow.devices(of: held)).sorted()
        if !devices.isEmpty {
            try await c.run("""
                INSERT INTO store_purchase_devices (app_key, device_key, purchase_id)
                SELECT \(held.appKey), d, \(purchaseID) FROM unnest(\(devices)::text[]) AS d
                """, logger: logger)
        }

        // One row a payment id, the last of the ledger's when it names one twice (SQLite's INSERT OR REPLACE).
        var payments: [StorePayment] = []
        var positions: [String: Int] = [:]
        for payment in held.payments {
            if let index = positions[payment.id] {
                payments[index] = payment
            } else {
                positions[payment.id] = payments.count
                payments.append(payment)
            }
        }
        try await c.run("DELETE FROM store_payments WHERE purchase_id = \(purchaseID)", logger: logger)
        if !payments.isEmpty {
            // postgres-nio's arrays hold no NULL: a price or currency left out is flagged beside it.
            try await c.run("""
                INSERT INTO store_payments (purchase_id, id, app_key, kind, paid_at, price, currency, revoked)
                SELECT \(purchaseID), u.id, \(held.appKey), \(row.kind), u.paid_at,
                       CASE WHEN u.priced THEN u.price END, CASE WHEN u.has_currency THEN u.currency END, u.revoked
                FROM unnest(\(payments.map(\.id))::text[], \(payments.map(\.paidAt))::bigint[],
                            \(payments.map { $0.price ?? 0 })::bigint[], \(payments.map { $0.price != nil })::boolean[],
                            \(payments.map { $0.currency ?? "" })::text[], \(payments.map { $0.currency != nil })::boolean[],
                            \(payments.map { $0.revoked || held.revokedByOperator })::boolean[])
                    AS u(id, paid_at, price, priced, currency, has_currency, revoked)
                """, logger: logger)
        }
    }

    /// Inserts a notice; false when it is already there.
    func insert(_ notice: StoreNoticeRecord, on c: PostgresConnection) async throws -> Bool {
        try await c.run("""
            INSERT INTO store_notices (store, id, app_key, type, subtype, original_id, received_at, outcome)
            VALUES (\(notice.store.rawValue), \(notice.id), \(notice.appKey), \(notice.type), \(notice.subtype),
                    \(notice.originalID), \(notice.receivedAt), \(notice.outcome))
            ON CONFLICT (store, id) DO NOTHING
            RETURNING 1
            """, logger: logger) == 1
    }

    public func recordNotice(_ notice: StoreNoticeRecord) async throws -> Bool {
        try await withConnection { [self] c in try await insert(notice, on: c) }
    }

    /// Oldest first: by the time received, then in the order recorded (`seq`).
    public func notices(appKey: String, store: Storefront, originalID: String) async throws -> [StoreNoticeRecord] {
        try await withConnection { [self] c in
            try await c.rows("""
                SELECT store, id, app_key, type, subtype, original_id, received_at, outcome FROM store_notices
                WHERE app_key = \(appKey) AND store = \(store.rawValue) AND original_id = \(originalID)
                ORDER BY received_at, seq
                """, (String, String, String, String, String, String, Int64, String).self, logger: logger).compactMap {
                StoreNoticeRecord(storedStore: $0.0, id: $0.1, appKey: $0.2, type: $0.3, subtype: $0.4, originalID: $0.5,
                                  receivedAt: $0.6, outcome: $0.7)
            }
        }
    }

    /// Each purchase that opens on the device (bought or restored there) is locked as `changePurchase` locks it, all in one order (two moves
    /// never deadlock), and read again once locked: a change committed meanwhile is moved, not overwritten.
    public func movePurchases(appKey: String, deviceKey: String, toUser userID: Int, at time: Int64) async throws {
        guard userID != 0, !deviceKey.isEmpty else { return }
        try await withTransaction { [self] c in
            let names = try await c.rows("""
                SELECT store, original_id FROM store_purchases WHERE app_key = \(appKey) AND user_id = 0 AND (device_key = \(deviceKey)
                    OR id IN (SELECT purchase_id FROM store_purchase_devices WHERE app_key = \(appKey) AND device_key = \(deviceKey)))
                ORDER BY store COLLATE "C", original_id COLLATE "C"
                """, (String, String).self, logger: logger)
            guard !names.isEmpty else { return }
            for name in names { try await lockPurchase(appKey: appKey, store: name.0, originalID: name.1, on: c) }
            let locked = Set(names.map { [$0.0, $0.1] })
            let rows = try await c.rows("""
                SELECT \(unescaped: Self.purchaseColumns), p.id FROM store_purchases p
                WHERE p.app_key = \(appKey) AND p.user_id = 0 AND (p.device_key = \(deviceKey)
                    OR p.id IN (SELECT purchase_id FROM store_purchase_devices WHERE app_key = \(appKey) AND device_key = \(deviceKey)))
                ORDER BY p.id
                """, PurchaseColumnsWithID.self, logger: logger).map(Self.purchaseRow)
            for (id, row) in rows where locked.contains([row.store, row.originalID]) {
                guard var purchase = row.held else { continue }
                let claimant = PurchaseClaimant(userID: userID, deviceKey: deviceKey, accountTokens: [])
                guard (try? purchase.claim(by: claimant, deviceLimit: 0, at: time)) == true else { continue }
                try await save(purchase, id: id, on: c)
            }
        }
    }

    /// Newest change first, then the last stored; each given field must match.
    public func purchases(matching filter: PurchaseFilter) async throws -> [HeldPurchase] {
        try await withConnection { [self] c in
            var query = DynamicQuery()
            var conditions: [String] = []
            if let appKey = filter.appKey { conditions.append("p.app_key = \(query.bind(appKey))") }
            if let userID = filter.userID { conditions.append("p.user_id = \(query.bind(userID))") }
            if let deviceKey = filter.deviceKey {
                let key = query.bind(deviceKey)
                conditions.append("(p.device_key = \(key) OR p.id IN (SELECT purchase_id FROM store_purchase_devices WHERE device_key = \(key)))")
            }
            if let originalID = filter.originalID { conditions.append("p.original_id = \(query.bind(originalID))") }
            let limit = query.bind(max(0, filter.limit))
            return try await c.rows(query.query("""
                SELECT \(Self.purchaseColumns) FROM store_purchases p
                \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
                ORDER BY p.updated_at DESC, p.id DESC LIMIT \(limit)
                """), PurchaseColumns.self, logger: logger).compactMap { Self.purchaseRow($0).held }
        }
    }
}

/// A purchase could not be stored as asked.
enum PurchaseStorageError: Error, CustomStringConvertible {
    /// PostgreSQL answered an insert without the new row's id.
    case noRowID

    var description: String {
        switch self {
        case .noRowID: "PostgreSQL stored a purchase without answering its id"
        }
    }
}
