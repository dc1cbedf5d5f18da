// The App Store's enumerated values. Each is a struct holding the raw value Apple sends, with the values
// known today as constants: a value Apple adds later is kept, not refused.

/// The kind of in-app purchase (`type`).
public struct AppleProductType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let autoRenewableSubscription = Self(rawValue: "Auto-Renewable Subscription")
    public static let nonConsumable = Self(rawValue: "Non-Consumable")
    public static let consumable = Self(rawValue: "Consumable")
    public static let nonRenewingSubscription = Self(rawValue: "Non-Renewing Subscription")
    public var description: String { rawValue }
}

/// Whether the user bought the purchase or has it through Family Sharing (`inAppOwnershipType`).
public struct AppleOwnershipType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let purchased = Self(rawValue: "PURCHASED")
    public static let familyShared = Self(rawValue: "FAMILY_SHARED")
    public var description: String { rawValue }
}

/// Why the transaction happened: a purchase by the customer or an automatic renewal (`transactionReason`).
public struct AppleTransactionReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let purchase = Self(rawValue: "PURCHASE")
    public static let renewal = Self(rawValue: "RENEWAL")
    public var description: String { rawValue }
}

/// Why the App Store refunded or revoked a transaction (`revocationReason`).
public struct AppleRevocationReason: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let other = Self(rawValue: 0)
    public static let appIssue = Self(rawValue: 1)
}

/// The kind of subscription offer applied (`offerType`).
public struct AppleOfferType: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let introductory = Self(rawValue: 1)
    public static let promotional = Self(rawValue: 2)
    public static let offerCode = Self(rawValue: 3)
    public static let winBack = Self(rawValue: 4)
}

/// Whether an auto-renewable subscription renews at the end of its period (`autoRenewStatus`).
public struct AppleAutoRenewStatus: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let off = Self(rawValue: 0)
    public static let on = Self(rawValue: 1)
}

/// Why a subscription expired (`expirationIntent`).
public struct AppleExpirationIntent: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let customerCancelled = Self(rawValue: 1)
    public static let billingError = Self(rawValue: 2)
    public static let priceIncreaseNotConsented = Self(rawValue: 3)
    public static let productUnavailable = Self(rawValue: 4)
    public static let other = Self(rawValue: 5)
}

/// The state of a subscription a notification is about (`data.status`).
public struct AppleSubscriptionStatus: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let active = Self(rawValue: 1)
    public static let expired = Self(rawValue: 2)
    public static let billingRetry = Self(rawValue: 3)
    public static let billingGracePeriod = Self(rawValue: 4)
    public static let revoked = Self(rawValue: 5)
}

/// What happened, in an App Store Server Notification V2 (`notificationType`).
public struct AppleNotificationType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let subscribed = Self(rawValue: "SUBSCRIBED")
    public static let didRenew = Self(rawValue: "DID_RENEW")
    public static let didChangeRenewalStatus = Self(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    public static let didChangeRenewalPreference = Self(rawValue: "DID_CHANGE_RENEWAL_PREF")
    public static let didFailToRenew = Self(rawValue: "DID_FAIL_TO_RENEW")
    public static let expired = Self(rawValue: "EXPIRED")
    public static let gracePeriodExpired = Self(rawValue: "GRACE_PERIOD_EXPIRED")
    public static let offerRedeemed = Self(rawValue: "OFFER_REDEEMED")
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    public static let refund = Self(rawValue: "REFUND")
    public static let refundDeclined = Self(rawValue: "REFUND_DECLINED")
    public static let refundReversed = Self(rawValue: "REFUND_REVERSED")
    public static let renewalExtended = Self(rawValue: "RENEWAL_EXTENDED")
    public static let renewalExtension = Self(rawValue: "RENEWAL_EXTENSION")
    public static let revoke = Self(rawValue: "REVOKE")
    public static let consumptionRequest = Self(rawValue: "CONSUMPTION_REQUEST")
    public static let oneTimeCharge = Self(rawValue: "ONE_TIME_CHARGE")
    public static let test = Self(rawValue: "TEST")
    public var description: String { rawValue }
}

/// The detail of a notification type (`subtype`), e.g. `INITIAL_BUY`, `AUTO_RENEW_DISABLED`, `SUMMARY`.
public struct AppleNotificationSubtype: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let initialBuy = Self(rawValue: "INITIAL_BUY")
    public static let resubscribe = Self(rawValue: "RESUBSCRIBE")
    public static let downgrade = Self(rawValue: "DOWNGRADE")
    public static let upgrade = Self(rawValue: "UPGRADE")
    public static let autoRenewEnabled = Self(rawValue: "AUTO_RENEW_ENABLED")
    public static let autoRenewDisabled = Self(rawValue: "AUTO_RENEW_DISABLED")
    public static let voluntary = Self(rawValue: "VOLUNTARY")
    public static let billingRetry = Self(rawValue: "BILLING_RETRY")
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    public static let gracePeriod = Self(rawValue: "GRACE_PERIOD")
    public static let billingRecovery = Self(rawValue: "BILLING_RECOVERY")
    public static let pending = Self(rawValue: "PENDING")
    public static let accepted = Self(rawValue: "ACCEPTED")
    public static let productNotForSale = Self(rawValue: "PRODUCT_NOT_FOR_SALE")
    public static let summary = Self(rawValue: "SUMMARY")
    public static let failure = Self(rawValue: "FAILURE")
    public var description: String { rawValue }
}
