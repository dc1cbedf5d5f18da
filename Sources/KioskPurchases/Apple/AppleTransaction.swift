import Foundation

/// A verified StoreKit 2 transaction (Apple's JWSTransactionDecodedPayload), dates from Apple's milliseconds.
public struct AppleTransaction: Hashable, Sendable {
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var bundleId: String
    /// The UUID the app set on the purchase to tie it to its own account, if any.
    public var appAccountToken: UUID?
    public var purchaseDate: Date
    public var originalPurchaseDate: Date?
    /// When an auto-renewable subscription expires or renews.
    public var expiresDate: Date?
    /// When the App Store refunded or revoked the transaction: from then on it grants nothing.
    public var revocationDate: Date?
    public var revocationReason: AppleRevocationReason?
    public var type: AppleProductType
    public var environment: AppleEnvironment
    /// When the App Store signed this copy of the transaction.
    public var signedDate: Date
    /// The price in milliunits of `currency` (1990 is 1.99).
    public var price: Int64?
    /// ISO 4217 currency code of `price`.
    public var currency: String?
    public var quantity: Int
    public var inAppOwnershipType: AppleOwnershipType
    public var webOrderLineItemId: String?
    /// True when the user upgraded to another subscription: this one grants nothing any more.
    public var isUpgraded: Bool?
    public var offerType: AppleOfferType?
    /// The three-letter code of the App Store country or region.
    public var storefront: String?
    public var transactionReason: AppleTransactionReason?
    public var appTransactionId: String?
    /// How an offer discounts it: `FREE_TRIAL`, `PAY_AS_YOU_GO`, `PAY_UP_FRONT`; nil without an offer.
    public var offerDiscountType: String? = nil

    /// A free period (a free trial, or an offer that charges nothing): it opens issues while it lasts but pays
    /// for none of them.
    public var isFree: Bool { offerDiscountType == "FREE_TRIAL" || price == 0 }
}

/// The JSON of a transaction payload, as Apple names and types its fields.
struct AppleTransactionPayload: Decodable {
    let transactionId: String
    let originalTransactionId: String
    let productId: String
    let bundleId: String
    let appAccountToken: String?
    let purchaseDate: Int64
    let originalPurchaseDate: Int64?
    let expiresDate: Int64?
    let revocationDate: Int64?
    let revocationReason: Int?
    let type: String
    let environment: String
    let signedDate: Int64
    let price: Int64?
    let currency: String?
    let quantity: Int
    let inAppOwnershipType: String
    let webOrderLineItemId: String?
    let isUpgraded: Bool?
    let offerType: Int?
    let storefront: String?
    let transactionReason: String?
    let appTransactionId: String?
    let offerDiscountType: String?

    func value() throws(PurchaseVerificationError) -> AppleTransaction {
        AppleTransaction(
            transactionId: transactionId,
            originalTransactionId: originalTransactionId,
            productId: productId,
            bundleId: bundleId,
            appAccountToken: try appleAccountToken(appAccountToken, in: "transaction"),
            purchaseDate: appleDate(purchaseDate),
            originalPurchaseDate: originalPurchaseDate.map(appleDate),
            expiresDate: expiresDate.map(appleDate),
            revocationDate: revocationDate.map(appleDate),
            revocationReason: revocationReason.map(AppleRevocationReason.init(rawValue:)),
            type: AppleProductType(rawValue: type),
            environment: AppleEnvironment(rawValue: environment),
            signedDate: appleDate(signedDate),
            price: price,
            currency: currency,
            quantity: quantity,
            inAppOwnershipType: AppleOwnershipType(rawValue: inAppOwnershipType),
            webOrderLineItemId: webOrderLineItemId,
            isUpgraded: isUpgraded,
            offerType: offerType.map(AppleOfferType.init(rawValue:)),
            storefront: storefront,
            transactionReason: transactionReason.map(AppleTransactionReason.init(rawValue:)),
            appTransactionId: appTransactionId,
            offerDiscountType: offerDiscountType)
    }
}

/// A date from Apple's milliseconds since 1970.
func appleDate(_ milliseconds: Int64) -> Date {
    Date(timeIntervalSince1970: Double(milliseconds) / 1000)
}

/// An `appAccountToken`: absent or empty is none; anything else must be a UUID.
func appleAccountToken(_ text: String?, in what: String) throws(PurchaseVerificationError) -> UUID? {
    guard let text, !text.isEmpty else { return nil }
    guard let token = UUID(uuidString: text) else {
        throw PurchaseVerificationError(.malformed, "the \(what)'s appAccountToken \"\(text.prefix(64))\" is not a UUID")
    }
    return token
}
