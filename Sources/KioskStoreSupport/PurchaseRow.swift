import Foundation
import KioskModels

/// A `HeldPurchase` as both engines store it: the columns they search and count by, and the rest as JSON
/// (`details`), with its devices and payments also as rows of their own tables.
package struct PurchaseRow: Sendable {
    package var appKey: String
    package var store: String
    package var originalID: String
    package var productID: String
    package var kind: String
    /// The reader holding it; 0: none.
    package var userID: Int
    /// The anonymous device holding it; empty: none.
    package var deviceKey: String
    package var accountToken: String
    package var revoked: Bool
    /// When a subscription's access ends (Unix seconds); 0 for the other kinds.
    package var accessEnd: Int64
    package var createdAt: Int64
    package var updatedAt: Int64
    package var details: String

    /// What is kept as JSON: the product as bought, the ledger, the issues, the devices.
    private struct Details: Codable {
        var credits: Int
        var editions: [Int]
        var scope: SubscriptionScope
        var environment: String
        var payments: [StorePayment]
        var graceUntil: Int64?
        var graceSignedAt: Int64
        var issues: [IssueRef]
        var devices: [String]
        var revokedByOperator: Bool
    }

    package init(_ held: HeldPurchase) {
        let purchase = held.purchase
        appKey = held.appKey; store = purchase.store.rawValue; originalID = purchase.originalID
        productID = purchase.product.id; kind = purchase.product.kind.rawValue
        switch held.holder {
        case .unclaimed: userID = 0; deviceKey = ""
        case .reader(let id): userID = id; deviceKey = ""
        case .device(let key): userID = 0; deviceKey = key
        }
        accountToken = held.accountToken ?? ""
        revoked = purchase.revoked
        accessEnd = purchase.product.kind == .subscription ? purchase.accessEnd : 0
        createdAt = held.createdAt; updatedAt = held.updatedAt
        let details = Details(credits: purchase.product.credits, editions: purchase.product.editions, scope: purchase.product.scope,
                              environment: held.environment, payments: held.payments, graceUntil: purchase.graceUntil,
                              graceSignedAt: held.graceSignedAt, issues: purchase.issues, devices: held.devices,
                              revokedByOperator: held.revokedByOperator)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        self.details = (try? String(decoding: encoder.encode(details), as: UTF8.self)) ?? "{}"
    }

    package init(appKey: String, store: String, originalID: String, productID: String, kind: String, userID: Int,
                 deviceKey: String, accountToken: String, revoked: Bool, accessEnd: Int64, createdAt: Int64,
                 updatedAt: Int64, details: String) {
        self.appKey = appKey; self.store = store; self.originalID = originalID; self.productID = productID; self.kind = kind
        self.userID = userID; self.deviceKey = deviceKey; self.accountToken = accountToken; self.revoked = revoked
        self.accessEnd = accessEnd; self.createdAt = createdAt; self.updatedAt = updatedAt; self.details = details
    }

    /// The purchase as stored; nil when a row cannot be read (an unknown store or kind, unreadable JSON),
    /// which then grants nothing.
    package var held: HeldPurchase? {
        guard let store = Storefront(rawValue: store), let kind = ProductKind(rawValue: kind),
              let details = try? JSONDecoder().decode(Details.self, from: Data(details.utf8)) else { return nil }
        let product = StoreProduct(appKey: appKey, id: productID, kind: kind, editions: details.editions,
                                   credits: details.credits, scope: details.scope)
        let holder: PurchaseHolder = userID != 0 ? .reader(userID: userID) : deviceKey.isEmpty ? .unclaimed : .device(deviceKey: deviceKey)
        return HeldPurchase(
            appKey: appKey,
            purchase: StorePurchase(store: store, originalID: originalID, product: product,
                                    graceUntil: details.graceUntil, issues: details.issues),
            holder: holder, accountToken: accountToken.isEmpty ? nil : accountToken, devices: details.devices,
            environment: details.environment, payments: details.payments, graceSignedAt: details.graceSignedAt,
            revokedByOperator: details.revokedByOperator, createdAt: createdAt, updatedAt: updatedAt)
    }

    /// The devices it opens on, as rows of `store_purchase_devices`.
    package static func devices(of held: HeldPurchase) -> [String] {
        if case .device = held.holder { return held.devices }
        return []
    }
}

extension StoreNoticeRecord {
    /// A notice as stored; nil for an unknown store.
    package init?(storedStore: String, id: String, appKey: String, type: String, subtype: String, originalID: String,
                  receivedAt: Int64, outcome: String) {
        guard let store = Storefront(rawValue: storedStore) else { return nil }
        self.init(store: store, id: id, appKey: appKey, type: type, subtype: subtype, originalID: originalID,
                  receivedAt: receivedAt, outcome: outcome)
    }
}
