import GRDB
import KioskModels
import KioskStoreSupport

extension SQLiteKioskStore {
    static let purchaseColumns = """
        p.app_key, p.store, p.original_id, p.product_id, p.kind, p.user_id, p.device_key, p.account_token, p.revoked,
        p.access_end, p.created_at, p.updated_at, p.details
        """

    static func purchaseRow(_ row: Row) -> PurchaseRow {
        PurchaseRow(appKey: row[0], store: row[1], originalID: row[2], productID: row[3], kind: row[4], userID: row[5],
                    deviceKey: row[6], accountToken: row[7], revoked: row[8], accessEnd: row[9], createdAt: row[10],
                    updatedAt: row[11], details: row[12])
    }

    static func purchases(_ db: Database, sql: String, arguments: StatementArguments) throws -> [HeldPurchase] {
        try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).compactMap { purchaseRow($0).held }
    }

    public func storeProducts(appKey: String) async throws -> [StoreProduct] {
        try read { db in
            try StoreProductRecord.filter(StoreProductRecord.Columns.appKey == appKey)
                .order(StoreProductRecord.Columns.position).fetchAll(db).map(\.product)
        }
    }

    public func purchases(appKey: String, userID: Int, deviceKey: String) async throws -> [HeldPurchase] {
        try read { db in
            try Self.purchases(db, sql: """
                SELECT \(Self.purchaseColumns) FROM store_purchases p
                WHERE p.app_key = ?1 AND ((?2 <> 0 AND p.user_id = ?2) OR p.id IN (
                    SELECT purchase_id FROM store_purchase_devices WHERE app_key = ?1 AND device_key = ?3))
                ORDER BY p.id
                """, arguments: [appKey, userID, deviceKey])
        }
    }

    public func purchase(appKey: String, store: Storefront, originalID: String) async throws -> HeldPurchase? {
        try read { db in try Self.purchase(db, appKey: appKey, store: store, originalID: originalID)?.held }
    }

    static func purchase(_ db: Database, appKey: String, store: Storefront, originalID: String) throws -> (id: Int64, held: HeldPurchase?)? {
        try Row.fetchOne(db.cachedStatement(sql: """
            SELECT \(purchaseColumns), p.id FROM store_purchases p WHERE p.app_key = ? AND p.store = ? AND p.original_id = ?
            """), arguments: [appKey, store.rawValue, originalID]).map { row in (row[13], purchaseRow(row).held) }
    }

    public func changePurchase<T: Sendable>(appKey: String, store: Storefront, originalID: String, recording notice: StoreNoticeRecord?,
                                            _ change: @escaping @Sendable (inout HeldPurchase?) throws -> T) async throws -> T? {
        try await write { db in
            if let notice, try !Self.insert(notice, db) { return nil }
            let existing = try Self.purchase(db, appKey: appKey, store: store, originalID: originalID)
            var held = existing?.held
            let before = held
            let answer = try change(&held)
            if let held, held != before {
                try Self.save(held, id: existing?.id, db)
                try Self.appendEvents(NewEvent.purchaseChange(from: before, to: held, at: held.updatedAt), at: held.updatedAt, db)
            }
            return answer
        }
    }

    /// Writes a purchase, its devices and its payments.
    static func save(_ held: HeldPurchase, id: Int64?, _ db: Database) throws {
        let row = PurchaseRow(held)
        let arguments: StatementArguments = [row.appKey, row.store, row.originalID, row.productID, row.kind, row.userID, row.deviceKey,
                                             row.accountToken, row.revoked, row.accessEnd, row.createdAt, row.updatedAt, row.details]
        let purchaseID: Int64
        if let id {
            try db.execute(sql: """
                UPDATE store_purchases SET app_key = ?, store = ?, original_id = ?, product_id = ?, kind = ?, user_id = ?,
                device_key = ?, account_token = ?, revoked = ?, access_end = ?, created_at = ?, updated_at = ?, details = ?
                WHERE id = ?
                """, arguments: arguments + [id])
            purchaseID = id
        } else {
            try db.execute(sql: """
                INSERT INTO store_purchases (app_key, store, original_id, product_id, kind, user_id, device_key, account_token,
                                             revoked, access_end, created_at, updated_at, details)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: arguments)
            purchaseID = db.lastInsertedRowID
        }
        try db.execute(sql: "DELETE FROM store_purchase_devices WHERE purchase_id = ?", arguments: [purchaseID])
        for device in Set(PurchaseRow.devices(of: held)) {
            try db.execute(sql: "INSERT INTO store_purchase_devices (app_key, device_key, purchase_id) VALUES (?, ?, ?)",
                           arguments: [held.appKey, device, purchaseID])
        }
        try db.execute(sql: "DELETE FROM store_payments WHERE purchase_id = ?", arguments: [purchaseID])
        for payment in held.payments {
            try db.execute(sql: """
                INSERT OR REPLACE INTO store_payments (purchase_id, id, app_key, kind, paid_at, price, currency, revoked)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [purchaseID, payment.id, held.appKey, row.kind, payment.paidAt, payment.price, payment.currency,
                                 payment.revoked || held.revokedByOperator])
        }
    }

    /// Inserts a notice; false when it is already there.
    static func insert(_ notice: StoreNoticeRecord, _ db: Database) throws -> Bool {
        try db.execute(sql: """
            INSERT OR IGNORE INTO store_notices (store, id, app_key, type, subtype, original_id, received_at, outcome)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [notice.store.rawValue, notice.id, notice.appKey, notice.type, notice.subtype, notice.originalID,
                             notice.receivedAt, notice.outcome])
        return db.changesCount > 0
    }

    public func recordNotice(_ notice: StoreNoticeRecord) async throws -> Bool {
        try await write { db in try Self.insert(notice, db) }
    }

    public func notices(appKey: String, store: Storefront, originalID: String) async throws -> [StoreNoticeRecord] {
        try await longRead { db in
            try Row.fetchAll(db, sql: """
                SELECT store, id, app_key, type, subtype, original_id, received_at, outcome FROM store_notices
                WHERE app_key = ? AND store = ? AND original_id = ? ORDER BY received_at, rowid
                """, arguments: [appKey, store.rawValue, originalID]).compactMap {
                StoreNoticeRecord(storedStore: $0[0], id: $0[1], appKey: $0[2], type: $0[3], subtype: $0[4], originalID: $0[5],
                                  receivedAt: $0[6], outcome: $0[7])
            }
        }
    }

    public func movePurchases(appKey: String, deviceKey: String, toUser userID: Int, at time: Int64) async throws {
        guard userID != 0, !deviceKey.isEmpty else { return }
        try await write { db in
            let held = try Self.purchases(db, sql: """
                SELECT \(Self.purchaseColumns) FROM store_purchases p WHERE p.app_key = ?1 AND p.user_id = 0 AND (p.device_key = ?2
                    OR p.id IN (SELECT purchase_id FROM store_purchase_devices WHERE app_key = ?1 AND device_key = ?2))
                """, arguments: [appKey, deviceKey])
            for var purchase in held {
                let claimant = PurchaseClaimant(userID: userID, deviceKey: deviceKey, accountTokens: [])
                guard (try? purchase.claim(by: claimant, deviceLimit: 0, at: time)) == true,
                      let id = try Self.purchase(db, appKey: appKey, store: purchase.purchase.store,
                                                 originalID: purchase.purchase.originalID)?.id else { continue }
                try Self.save(purchase, id: id, db)
            }
        }
    }

    public func purchases(matching filter: PurchaseFilter) async throws -> [HeldPurchase] {
        try await longRead { db in
            var conditions: [String] = []
            var arguments: StatementArguments = []
            if let appKey = filter.appKey { conditions.append("p.app_key = ?"); arguments += [appKey] }
            if let userID = filter.userID { conditions.append("p.user_id = ?"); arguments += [userID] }
            if let deviceKey = filter.deviceKey {
                conditions.append("(p.device_key = ? OR p.id IN (SELECT purchase_id FROM store_purchase_devices WHERE device_key = ?))")
                arguments += [deviceKey, deviceKey]
            }
            if let originalID = filter.originalID { conditions.append("p.original_id = ?"); arguments += [originalID] }
            arguments += [max(0, filter.limit)]
            return try Row.fetchAll(db, sql: """
                SELECT \(Self.purchaseColumns) FROM store_purchases p
                \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
                ORDER BY p.updated_at DESC, p.id DESC LIMIT ?
                """, arguments: arguments).compactMap { Self.purchaseRow($0).held }
        }
    }
}
