/// One payment a store took for a purchase: an Apple transaction, a Google order.
public struct StorePayment: Sendable, Hashable, Codable {
    /// Apple's `transactionId`, Google's order id.
    public var id: String
    /// When it was paid, Unix seconds.
    public var paidAt: Int64
    /// The time a subscription's payment pays for; nil for a one-time product.
    public var period: PaidPeriod?
    /// Refunded or revoked by the store.
    public var revoked: Bool
    /// The price in thousandths of the currency's unit, as the stores give it; nil when unknown.
    public var price: Int64?
    /// ISO 4217, e.g. `EUR`.
    public var currency: String?
    /// When the store said this (Unix milliseconds): a later word about a payment replaces an earlier one,
    /// never the reverse, since the stores retry and do not keep order.
    public var signedAt: Int64

    /// A price of 0 is a free period (a trial): it opens issues while it lasts, and keeps none of them.
    public var isFree: Bool { price == 0 }

    /// Prices beyond this many thousandths (a thousand million units of any currency) are taken as unknown.
    public static let largestPrice: Int64 = 1_000_000_000_000

    /// `price` when it is a price a store could charge, else nil (unknown).
    public static func plausible(_ price: Int64?) -> Int64? {
        guard let price, (0...largestPrice).contains(price) else { return nil }
        return price
    }

    public init(id: String, paidAt: Int64, period: PaidPeriod? = nil, revoked: Bool = false,
                price: Int64? = nil, currency: String? = nil, signedAt: Int64) {
        self.id = id; self.paidAt = paidAt; self.period = period; self.revoked = revoked
        self.price = price; self.currency = currency; self.signedAt = signedAt
    }
}

/// What a store said about a subscription's grace period, and when (Unix milliseconds).
public struct GraceFact: Sendable, Hashable, Codable {
    /// The grace's end, Unix seconds; nil: not in grace.
    public var until: Int64?
    public var signedAt: Int64
    public init(until: Int64?, signedAt: Int64) { self.until = until; self.signedAt = signedAt }
}

/// What a store vouched for about one purchase, verified, in Kiosk's terms: an Apple transaction with
/// its renewal info, or a Google purchase as the Play Developer API gave it.
public struct StoreFacts: Sendable, Hashable {
    public var store: Storefront
    /// The purchase's lasting name: Apple's `originalTransactionId`, Google's purchase token.
    public var originalID: String
    /// The store's product id; empty when the store did not name it (a Google voided purchase).
    public var storeProductID: String
    /// `Production`, `Sandbox` (Apple) or `Test` (a Google test purchase).
    public var environment: String
    /// The account token the app gave the store (lowercase UUID), if any.
    public var accountToken: String?
    /// The payment this is about; nil for a word about the renewal alone.
    public var payment: StorePayment?
    /// What it says of a grace period; nil when it says nothing of it.
    public var grace: GraceFact?

    public init(store: Storefront, originalID: String, storeProductID: String, environment: String,
                accountToken: String? = nil, payment: StorePayment? = nil, grace: GraceFact? = nil) {
        self.store = store; self.originalID = originalID; self.storeProductID = storeProductID
        self.environment = environment; self.accountToken = accountToken; self.payment = payment; self.grace = grace
    }
}

/// What an app sends to register a purchase (`compra`).
public enum PurchaseEvidence: Sendable, Hashable {
    /// A StoreKit 2 signed transaction (JWS).
    case apple(signedTransaction: String)
    /// A Google Play product id and purchase token.
    case google(productID: String, token: String)

    public var store: Storefront {
        switch self {
        case .apple: .apple
        case .google: .google
        }
    }
}

/// A store's server notification, verified.
public struct StoreNotice: Sendable, Hashable {
    public var store: Storefront
    /// Apple's `notificationUUID`, the Pub/Sub `messageId`: a notice seen again is dropped.
    public var id: String
    /// The store's name for what happened: `DID_RENEW`, `SUBSCRIPTION_RENEWED`, `VOIDED_PURCHASE`, …
    public var type: String
    public var subtype: String
    /// What it says about a purchase; nil when it says nothing Kiosk applies (a test notification).
    public var facts: StoreFacts?

    public init(store: Storefront, id: String, type: String, subtype: String = "", facts: StoreFacts?) {
        self.store = store; self.id = id; self.type = type; self.subtype = subtype; self.facts = facts
    }
}

/// A notice as Kiosk records it: for dropping duplicates, and as a purchase's history in the console.
public struct StoreNoticeRecord: Sendable, Hashable {
    public var store: Storefront
    public var id: String
    public var appKey: String
    public var type: String
    public var subtype: String
    /// The purchase it was about; empty for none.
    public var originalID: String
    public var receivedAt: Int64
    /// What Kiosk did with it, in words (`applied`, `no change`, `recorded`, …).
    public var outcome: String

    public init(store: Storefront, id: String, appKey: String, type: String, subtype: String, originalID: String,
                receivedAt: Int64, outcome: String) {
        self.store = store; self.id = id; self.appKey = appKey; self.type = type; self.subtype = subtype
        self.originalID = originalID; self.receivedAt = receivedAt; self.outcome = outcome
    }
}

/// Checks what apps and stores send, against the stores' own signatures and APIs (`KioskPurchases`).
public protocol StoreVerifying: Sendable {
    /// What the store vouches for about `evidence`, an app's purchase of a `kind` product for `appKey`.
    /// Throws `PurchaseError.unverifiable` when the store does not vouch for it, and
    /// `PurchaseError.storeUnavailable` when the store could not be asked.
    func verify(_ evidence: PurchaseEvidence, appKey: String, kind: ProductKind) async throws -> StoreFacts
    /// A notification `store` posted for `appKey` (`body` as received, `authorization` its header), verified,
    /// with the purchase fetched when the store sends only a reference (Google). Throws as `verify`.
    func notice(store: Storefront, appKey: String, body: [UInt8], authorization: String?) async throws -> StoreNotice
    /// Tells the store the purchase was granted, once it is committed: Google wants a subscription acknowledged
    /// and a one-time product consumed (or it refunds it); Apple needs nothing.
    func confirm(_ facts: StoreFacts, appKey: String, kind: ProductKind) async throws
}

/// The verifier of a server that sells in no store: every purchase is refused.
public struct NoStores: StoreVerifying {
    public init() {}
    static let refusal = PurchaseError.unverifiable("this server is not set up to verify store purchases")
    public func verify(_ evidence: PurchaseEvidence, appKey: String, kind: ProductKind) async throws -> StoreFacts { throw Self.refusal }
    public func notice(store: Storefront, appKey: String, body: [UInt8], authorization: String?) async throws -> StoreNotice { throw Self.refusal }
    public func confirm(_ facts: StoreFacts, appKey: String, kind: ProductKind) async throws {}
}
