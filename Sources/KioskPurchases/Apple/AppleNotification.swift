import Foundation

/// A verified App Store Server Notification V2 (Apple's ResponseBodyV2DecodedPayload).
///
/// It carries `data` (a subscription or purchase event, or a TEST notification without transactions) or
/// `summary` (the outcome of a subscription-renewal-date extension for many customers, `RENEWAL_EXTENSION`
/// with subtype `SUMMARY`). The signed transaction and renewal info inside `data` are verified with the same
/// rules as the notification itself, and must be for the same app and environment.
public struct AppleNotification: Hashable, Sendable {
    public var notificationType: AppleNotificationType
    public var subtype: AppleNotificationSubtype?
    /// Unique per notification: Apple resends the same UUID when a delivery is retried.
    public var notificationUUID: String
    public var version: String
    public var signedDate: Date
    public var data: AppleNotificationData?
    public var summary: AppleNotificationSummary?
}

/// The app, environment and verified signed data a notification is about.
public struct AppleNotificationData: Hashable, Sendable {
    public var bundleId: String
    public var bundleVersion: String?
    public var appAppleId: Int64?
    public var environment: AppleEnvironment
    public var status: AppleSubscriptionStatus?
    /// The verified `signedTransactionInfo`, when the notification has one.
    public var transaction: AppleTransaction?
    /// The verified `signedRenewalInfo`, when the notification has one.
    public var renewalInfo: AppleRenewalInfo?
    /// The JWS the transaction was read from, to keep as the store's proof.
    public var signedTransactionInfo: String?
    /// The JWS the renewal info was read from.
    public var signedRenewalInfo: String?
}

/// The outcome of a renewal-date extension Apple ran for many subscribers at once.
public struct AppleNotificationSummary: Hashable, Sendable {
    public var requestIdentifier: String
    public var environment: AppleEnvironment
    public var appAppleId: Int64?
    public var bundleId: String
    public var productId: String
    public var storefrontCountryCodes: [String]
    public var succeededCount: Int64
    public var failedCount: Int64
}

/// The JSON of a notification payload, as Apple names and types its fields.
struct AppleNotificationPayload: Decodable {
    struct DataPayload: Decodable {
        let appAppleId: Int64?
        let bundleId: String
        let bundleVersion: String?
        let environment: String
        let signedTransactionInfo: String?
        let signedRenewalInfo: String?
        let status: Int?
    }

    struct SummaryPayload: Decodable {
        let requestIdentifier: String
        let environment: String
        let appAppleId: Int64?
        let bundleId: String
        let productId: String
        let storefrontCountryCodes: [String]?
        let succeededCount: Int64
        let failedCount: Int64

        var value: AppleNotificationSummary {
            AppleNotificationSummary(
                requestIdentifier: requestIdentifier,
                environment: AppleEnvironment(rawValue: environment),
                appAppleId: appAppleId,
                bundleId: bundleId,
                productId: productId,
                storefrontCountryCodes: storefrontCountryCodes ?? [],
                succeededCount: succeededCount,
                failedCount: failedCount)
        }
    }

    let notificationType: String
    let subtype: String?
    let notificationUUID: String
    let version: String
    let signedDate: Int64
    let data: DataPayload?
    let summary: SummaryPayload?
}
