import Foundation

/// A subscription as `purchases.subscriptionsv2.get` describes it. Unknown enum values are kept as their raw
/// text; fields this server does not use are not read.
public struct GoogleSubscriptionPurchase: Sendable, Equatable, Decodable {
    /// `SubscriptionState`; unknown values kept.
    public struct State: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let unspecified = State(rawValue: "SUBSCRIPTION_STATE_UNSPECIFIED")
        public static let pending = State(rawValue: "SUBSCRIPTION_STATE_PENDING")
        public static let active = State(rawValue: "SUBSCRIPTION_STATE_ACTIVE")
        public static let paused = State(rawValue: "SUBSCRIPTION_STATE_PAUSED")
        public static let inGracePeriod = State(rawValue: "SUBSCRIPTION_STATE_IN_GRACE_PERIOD")
        public static let onHold = State(rawValue: "SUBSCRIPTION_STATE_ON_HOLD")
        public static let canceled = State(rawValue: "SUBSCRIPTION_STATE_CANCELED")
        public static let expired = State(rawValue: "SUBSCRIPTION_STATE_EXPIRED")
        public static let pendingPurchaseCanceled = State(rawValue: "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED")
    }

    /// `AcknowledgementState`; unknown values kept.
    public struct AcknowledgementState: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let unspecified = AcknowledgementState(rawValue: "ACKNOWLEDGEMENT_STATE_UNSPECIFIED")
        public static let pending = AcknowledgementState(rawValue: "ACKNOWLEDGEMENT_STATE_PENDING")
        public static let acknowledged = AcknowledgementState(rawValue: "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED")
    }

    /// One product of the subscription (a base plan).
    public struct LineItem: Sendable, Equatable, Decodable {
        public let productID: String
        public let expiryTime: Date?
        /// Present for an auto-renewing plan (absent for a prepaid one); whether it will renew.
        public let autoRenewEnabled: Bool?
        /// The plan's current recurring price (`autoRenewingPlan.recurringPrice`), in thousandths of
        /// `currency`'s unit as the App Store gives prices; nil when absent or out of range.
        public let price: Int64?
        public let currency: String?
        /// The line item is in its free trial (`offerPhase.freeTrial`).
        public let isFreeTrial: Bool

        private enum CodingKeys: String, CodingKey { case productId, expiryTime, autoRenewingPlan, offerPhase }
        private enum PhaseKeys: String, CodingKey { case freeTrial }
        private enum PlanKeys: String, CodingKey { case autoRenewEnabled, recurringPrice }
        private enum MoneyKeys: String, CodingKey { case currencyCode, units, nanos }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            productID = try container.decode(String.self, forKey: .productId)
            expiryTime = try container.decodeGoogleTime(forKey: .expiryTime)
            var price: Int64?, currency: String?
            if container.contains(.autoRenewingPlan) {
                let plan = try container.nestedContainer(keyedBy: PlanKeys.self, forKey: .autoRenewingPlan)
                autoRenewEnabled = try plan.decodeIfPresent(Bool.self, forKey: .autoRenewEnabled) ?? false
                if plan.contains(.recurringPrice) {
                    let money = try plan.nestedContainer(keyedBy: MoneyKeys.self, forKey: .recurringPrice)
                    // google.type.Money: units an int64 written as a string, nanos an int32 of the same sign.
                    let units = try (money.decodeIfPresent(String.self, forKey: .units)).flatMap { Int64($0) } ?? 0
                    let nanos = try money.decodeIfPresent(Int64.self, forKey: .nanos) ?? 0
                    let (thousandths, overflow) = units.multipliedReportingOverflow(by: 1000)
                    if !overflow, (-999_999_999...999_999_999).contains(nanos) {
                        let (sum, overflowed) = thousandths.addingReportingOverflow(nanos / 1_000_000)
                        price = overflowed ? nil : sum
                    }
                    currency = try money.decodeIfPresent(String.self, forKey: .currencyCode).flatMap { $0.isEmpty ? nil : String($0.prefix(8)) }
                    if price == nil { currency = nil }
                }
            } else {
                autoRenewEnabled = nil
            }
            self.price = price
            self.currency = currency
            if container.contains(.offerPhase) {
                isFreeTrial = try container.nestedContainer(keyedBy: PhaseKeys.self, forKey: .offerPhase).contains(.freeTrial)
            } else {
                isFreeTrial = false
            }
        }
    }

    /// Who canceled (the key Google sets in `canceledStateContext`) and, for a user, when.
    public struct Cancellation: Sendable, Equatable {
        /// `user`, `system`, `developer`, `replacement`, or the raw key of a kind not known here.
        public let initiator: String
        public let cancelTime: Date?
    }

    public let state: State
    public let lineItems: [LineItem]
    public let startTime: Date?
    public let acknowledgementState: AcknowledgementState
    public let latestOrderID: String?
    public let linkedPurchaseToken: String?
    public let obfuscatedExternalAccountID: String?
    /// Whether `testPurchase` is present: a license tester's purchase, no money moved.
    public let isTestPurchase: Bool
    public let regionCode: String?
    public let cancellation: Cancellation?

    /// The latest expiry among the line items.
    public var expiryTime: Date? { lineItems.compactMap(\.expiryTime).max() }

    private enum CodingKeys: String, CodingKey {
        case subscriptionState, lineItems, startTime, acknowledgementState, latestOrderId, linkedPurchaseToken
        case externalAccountIdentifiers, testPurchase, regionCode, canceledStateContext
    }
    private enum AccountKeys: String, CodingKey { case obfuscatedExternalAccountId }
    private struct AnyKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        state = try container.decodeIfPresent(State.self, forKey: .subscriptionState) ?? .unspecified
        lineItems = try container.decodeIfPresent([LineItem].self, forKey: .lineItems) ?? []
        startTime = try container.decodeGoogleTime(forKey: .startTime)
        acknowledgementState =
            try container.decodeIfPresent(AcknowledgementState.self, forKey: .acknowledgementState) ?? .unspecified
        latestOrderID = try container.decodeIfPresent(String.self, forKey: .latestOrderId)
        linkedPurchaseToken = try container.decodeIfPresent(String.self, forKey: .linkedPurchaseToken)
        if container.contains(.externalAccountIdentifiers) {
            let account = try container.nestedContainer(keyedBy: AccountKeys.self, forKey: .externalAccountIdentifiers)
            obfuscatedExternalAccountID = try account.decodeIfPresent(String.self, forKey: .obfuscatedExternalAccountId)
        } else {
            obfuscatedExternalAccountID = nil
        }
        isTestPurchase = container.contains(.testPurchase)
        regionCode = try container.decodeIfPresent(String.self, forKey: .regionCode)
        if container.contains(.canceledStateContext) {
            let context = try container.nestedContainer(keyedBy: AnyKey.self, forKey: .canceledStateContext)
            guard let key = context.allKeys.sorted(by: { $0.stringValue < $1.stringValue }).first else {
                cancellation = Cancellation(initiator: "", cancelTime: nil)
                return
            }
            let known = ["userInitiatedCancellation": "user", "systemInitiatedCancellation": "system",
                         "developerInitiatedCancellation": "developer", "replacementCancellation": "replacement"]
            var cancelTime: Date?
            if key.stringValue == "userInitiatedCancellation" {
                let user = try context.nestedContainer(keyedBy: AnyKey.self, forKey: key)
                cancelTime = try user.decodeGoogleTime(forKey: AnyKey(stringValue: "cancelTime"))
            }
            cancellation = Cancellation(initiator: known[key.stringValue] ?? key.stringValue, cancelTime: cancelTime)
        } else {
            cancellation = nil
        }
    }
}

/// A one-time product purchase as `purchases.products.get` describes it. Unknown enum values are kept as
/// their raw number; an absent state is 0, as in Google's JSON, which leaves out zero values.
public struct GoogleProductPurchase: Sendable, Equatable, Decodable {
    /// `purchaseState`.
    public struct PurchaseState: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public var description: String { "\(rawValue)" }

        public static let purchased = PurchaseState(rawValue: 0)
        public static let canceled = PurchaseState(rawValue: 1)
        public static let pending = PurchaseState(rawValue: 2)
    }

    /// `consumptionState`.
    public struct ConsumptionState: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public var description: String { "\(rawValue)" }

        public static let notConsumed = ConsumptionState(rawValue: 0)
        public static let consumed = ConsumptionState(rawValue: 1)
    }

    /// `acknowledgementState`.
    public struct AcknowledgementState: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public var description: String { "\(rawValue)" }

        public static let notAcknowledged = AcknowledgementState(rawValue: 0)
        public static let acknowledged = AcknowledgementState(rawValue: 1)
    }

    /// `purchaseType`, present only for purchases not made the normal way.
    public struct PurchaseType: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public var description: String { "\(rawValue)" }

        /// A license tester's purchase: no money moved.
        public static let test = PurchaseType(rawValue: 0)
        public static let promo = PurchaseType(rawValue: 1)
        public static let rewarded = PurchaseType(rawValue: 2)
    }

    public let purchaseState: PurchaseState
    public let consumptionState: ConsumptionState
    public let acknowledgementState: AcknowledgementState
    public let orderID: String?
    public let purchaseTime: Date?
    public let obfuscatedExternalAccountID: String?
    public let quantity: Int?
    public let regionCode: String?
    public let purchaseType: PurchaseType?
    public let productID: String?

    public var isTestPurchase: Bool { purchaseType == .test }

    private enum CodingKeys: String, CodingKey {
        case purchaseState, consumptionState, acknowledgementState, orderId, purchaseTimeMillis
        case obfuscatedExternalAccountId, quantity, regionCode, purchaseType, productId
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        purchaseState = try container.decodeIfPresent(PurchaseState.self, forKey: .purchaseState) ?? .purchased
        consumptionState = try container.decodeIfPresent(ConsumptionState.self, forKey: .consumptionState) ?? .notConsumed
        acknowledgementState =
            try container.decodeIfPresent(AcknowledgementState.self, forKey: .acknowledgementState) ?? .notAcknowledged
        orderID = try container.decodeIfPresent(String.self, forKey: .orderId)
        purchaseTime = try container.decodeGoogleMilliseconds(forKey: .purchaseTimeMillis)
        obfuscatedExternalAccountID = try container.decodeIfPresent(String.self, forKey: .obfuscatedExternalAccountId)
        quantity = try container.decodeIfPresent(Int.self, forKey: .quantity)
        regionCode = try container.decodeIfPresent(String.self, forKey: .regionCode)
        purchaseType = try container.decodeIfPresent(PurchaseType.self, forKey: .purchaseType)
        productID = try container.decodeIfPresent(String.self, forKey: .productId)
    }
}

/// A purchase Google took back, as `purchases.voidedpurchases.list` lists it.
public struct GoogleVoidedPurchase: Sendable, Equatable, Decodable {
    public let purchaseToken: String
    public let orderID: String
    public let voidedTime: Date?
    /// 0 the user, 1 the developer, 2 Google.
    public let voidedSource: Int?
    /// 0 other, 1 remorse, 2 not received, 3 defective, 4 accidental purchase, 5 fraud, 6 friendly fraud, 7 chargeback, 8 unacknowledged.
    public let voidedReason: Int?

    private enum CodingKeys: String, CodingKey { case purchaseToken, orderId, voidedTimeMillis, voidedSource, voidedReason }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        purchaseToken = try container.decode(String.self, forKey: .purchaseToken)
        orderID = try container.decodeIfPresent(String.self, forKey: .orderId) ?? ""
        voidedTime = try container.decodeGoogleMilliseconds(forKey: .voidedTimeMillis)
        voidedSource = try container.decodeIfPresent(Int.self, forKey: .voidedSource)
        voidedReason = try container.decodeIfPresent(Int.self, forKey: .voidedReason)
    }
}

/// One page of `purchases.voidedpurchases.list`.
struct GoogleVoidedPurchases: Decodable {
    let voidedPurchases: [GoogleVoidedPurchase]
    let nextPageToken: String?

    private enum CodingKeys: String, CodingKey { case voidedPurchases, tokenPagination }
    private enum PaginationKeys: String, CodingKey { case nextPageToken }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        voidedPurchases = try container.decodeIfPresent([GoogleVoidedPurchase].self, forKey: .voidedPurchases) ?? []
        if container.contains(.tokenPagination) {
            let pagination = try container.nestedContainer(keyedBy: PaginationKeys.self, forKey: .tokenPagination)
            nextPageToken = try pagination.decodeIfPresent(String.self, forKey: .nextPageToken)
        } else {
            nextPageToken = nil
        }
    }
}
