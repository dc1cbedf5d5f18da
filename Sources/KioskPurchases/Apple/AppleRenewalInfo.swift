import Foundation

/// Verified renewal information of an auto-renewable subscription (Apple's JWSRenewalInfoDecodedPayload).
public struct AppleRenewalInfo: Hashable, Sendable {
    public var originalTransactionId: String
    /// The product of the current period.
    public var productId: String
    /// The product the subscription renews to, when the user changed it.
    public var autoRenewProductId: String?
    public var autoRenewStatus: AppleAutoRenewStatus
    public var expirationIntent: AppleExpirationIntent?
    public var gracePeriodExpiresDate: Date?
    public var isInBillingRetryPeriod: Bool?
    public var renewalDate: Date?
    /// When the App Store signed this copy.
    public var signedDate: Date
    public var environment: AppleEnvironment
    public var appAccountToken: UUID?
}

/// The JSON of a renewal info payload, as Apple names and types its fields.
struct AppleRenewalInfoPayload: Decodable {
    let originalTransactionId: String
    let productId: String
    let autoRenewProductId: String?
    let autoRenewStatus: Int
    let expirationIntent: Int?
    let gracePeriodExpiresDate: Int64?
    let isInBillingRetryPeriod: Bool?
    let renewalDate: Int64?
    let signedDate: Int64
    let environment: String
    let appAccountToken: String?

    func value() throws(PurchaseVerificationError) -> AppleRenewalInfo {
        AppleRenewalInfo(
            originalTransactionId: originalTransactionId,
            productId: productId,
            autoRenewProductId: autoRenewProductId,
            autoRenewStatus: AppleAutoRenewStatus(rawValue: autoRenewStatus),
            expirationIntent: expirationIntent.map(AppleExpirationIntent.init(rawValue:)),
            gracePeriodExpiresDate: gracePeriodExpiresDate.map(appleDate),
            isInBillingRetryPeriod: isInBillingRetryPeriod,
            renewalDate: renewalDate.map(appleDate),
            signedDate: appleDate(signedDate),
            environment: AppleEnvironment(rawValue: environment),
            appAccountToken: try appleAccountToken(appAccountToken, in: "renewal info"))
    }
}
