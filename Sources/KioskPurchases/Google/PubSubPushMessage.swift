import Foundation

/// The body of a Pub/Sub push request: one message of the subscription. Read it only after
/// `PubSubPushVerifier` accepted the request.
public struct PubSubPushMessage: Sendable, Equatable {
    public let subscription: String
    public let messageID: String
    public let publishTime: Date?
    public let attributes: [String: String]
    /// The message's data, base64-decoded (empty when it has none).
    public let data: Data

    /// Decodes a push body of at most `maximumSize` bytes.
    public init(body: Data, maximumSize: Int) throws(PurchaseVerificationError) {
        guard body.count <= maximumSize else {
            throw PurchaseVerificationError(.malformed, "the push body is larger than \(maximumSize) bytes")
        }
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let message = object["message"] as? [String: Any]
        else {
            throw PurchaseVerificationError(.malformed, "the push body is not a Pub/Sub push (no message object)")
        }
        guard let subscription = object["subscription"] as? String else {
            throw PurchaseVerificationError(.malformed, "the push body names no subscription")
        }
        guard let messageID = (message["messageId"] ?? message["message_id"]) as? String else {
            throw PurchaseVerificationError(.malformed, "the pushed message has no messageId")
        }
        var data = Data()
        if let encoded = message["data"] {
            guard let text = encoded as? String, let decoded = Data(base64Encoded: text) else {
                throw PurchaseVerificationError(.malformed, "the pushed message's data is not base64")
            }
            data = decoded
        }
        var attributes: [String: String] = [:]
        if let raw = message["attributes"] {
            guard let dictionary = raw as? [String: String] else {
                throw PurchaseVerificationError(.malformed, "the pushed message's attributes are not strings")
            }
            attributes = dictionary
        }
        self.subscription = subscription
        self.messageID = messageID
        self.publishTime = ((message["publishTime"] ?? message["publish_time"]) as? String).flatMap(GoogleTime.rfc3339)
        self.attributes = attributes
        self.data = data
    }

    /// The Google Play developer notification in `data`, refused when it is for another app than
    /// `expectedPackageName`.
    public func developerNotification(expectedPackageName: String) throws(PurchaseVerificationError)
        -> GoogleDeveloperNotification
    {
        let notification = try GoogleDeveloperNotification(json: data)
        guard notification.packageName == expectedPackageName else {
            throw PurchaseVerificationError(.wrongApp, "the notification is for another app than \(expectedPackageName)")
        }
        return notification
    }
}

/// A Google Play real-time developer notification.
public struct GoogleDeveloperNotification: Sendable, Equatable {
    public let version: String
    public let packageName: String
    public let eventTime: Date
    public let kind: Kind

    public enum Kind: Sendable, Equatable {
        case subscription(SubscriptionNotification)
        case oneTimeProduct(OneTimeProductNotification)
        case voidedPurchase(VoidedPurchaseNotification)
        /// Sent from the Play Console's "send test notification".
        case test(version: String)
        /// A kind not known here, by its field name (such as `pendingRefundReviewNotification`): accept the
        /// push so Pub/Sub does not send it again, and ignore it.
        case other(String)
    }

    public struct SubscriptionNotification: Sendable, Equatable {
        public let version: String
        public let type: SubscriptionNotificationType
        public let purchaseToken: String
        /// The subscription's product id, when Google still sends it.
        public let subscriptionID: String?
    }

    /// `subscriptionNotification.notificationType`; unknown values kept.
    public struct SubscriptionNotificationType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public var description: String { "\(rawValue)" }

        public static let recovered = Self(rawValue: 1)
        public static let renewed = Self(rawValue: 2)
        public static let canceled = Self(rawValue: 3)
        public static let purchased = Self(rawValue: 4)
        public static let onHold = Self(rawValue: 5)
        public static let inGracePeriod = Self(rawValue: 6)
        public static let restarted = Self(rawValue: 7)
        public static let priceChangeConfirmed = Self(rawValue: 8)
        public static let deferred = Self(rawValue: 9)
        public static let paused = Self(rawValue: 10)
        public static let pauseScheduleChanged = Self(rawValue: 11)
        public static let revoked = Self(rawValue: 12)
        public static let expired = Self(rawValue: 13)
        public static let pendingPurchaseCanceled = Self(rawValue: 20)
    }

    public struct OneTimeProductNotification: Sendable, Equatable {
        public let version: String
        public let type: OneTimeProductNotificationType
        public let purchaseToken: String
        public let sku: String
    }

    /// `oneTimeProductNotification.notificationType`; unknown values kept.
    public struct OneTimeProductNotificationType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public var description: String { "\(rawValue)" }

        public static let purchased = Self(rawValue: 1)
        public static let canceled = Self(rawValue: 2)
    }

    /// A refund, chargeback or cancellation that took a purchase back.
    public struct VoidedPurchaseNotification: Sendable, Equatable {
        public let purchaseToken: String
        public let orderID: String
        public let productType: ProductType
        /// 1 a full refund, 2 a refund of part of the quantity; nil when absent.
        public let refundType: Int?

        /// `productType`; unknown values kept.
        public struct ProductType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
            public let rawValue: Int
            public init(rawValue: Int) { self.rawValue = rawValue }
            public var description: String { "\(rawValue)" }

            public static let subscription = Self(rawValue: 1)
            public static let oneTime = Self(rawValue: 2)
        }
    }

    private static let kinds = [
        "subscriptionNotification", "oneTimeProductNotification", "voidedPurchaseNotification", "testNotification",
    ]

    /// Decodes the JSON of a notification (a push message's data).
    public init(json: Data) throws(PurchaseVerificationError) {
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw PurchaseVerificationError(.malformed, "the notification is not a JSON object")
        }
        guard let packageName = object["packageName"] as? String, !packageName.isEmpty else {
            throw PurchaseVerificationError(.malformed, "the notification names no packageName")
        }
        guard let millis = Self.integer(object["eventTimeMillis"]) else {
            throw PurchaseVerificationError(.malformed, "the notification has no eventTimeMillis")
        }
        self.version = object["version"] as? String ?? ""
        self.packageName = packageName
        self.eventTime = GoogleTime.milliseconds(millis)

        let present = Self.kinds.filter { object[$0] != nil }
        guard present.count <= 1 else {
            throw PurchaseVerificationError(.malformed, "the notification is of several kinds at once")
        }
        guard let name = present.first else {
            let known: Set<String> = ["version", "packageName", "eventTimeMillis"]
            let other = object.keys.filter { !known.contains($0) }.sorted().first
            self.kind = .other(other.map(GoogleBase64.printable) ?? "")
            return
        }
        guard let body = object[name] as? [String: Any] else {
            throw PurchaseVerificationError(.malformed, "the notification's \(name) is not an object")
        }
        func text(_ key: String) throws(PurchaseVerificationError) -> String {
            guard let value = body[key] as? String, !value.isEmpty else {
                throw PurchaseVerificationError(.malformed, "the notification's \(name) has no \(key)")
            }
            return value
        }
        func number(_ key: String) throws(PurchaseVerificationError) -> Int {
            guard let value = Self.integer(body[key]), let small = Int(exactly: value) else {
                throw PurchaseVerificationError(.malformed, "the notification's \(name) has no \(key)")
            }
            return small
        }
        switch name {
        case "subscriptionNotification":
            self.kind = .subscription(
                SubscriptionNotification(
                    version: body["version"] as? String ?? "",
                    type: SubscriptionNotificationType(rawValue: try number("notificationType")),
                    purchaseToken: try text("purchaseToken"),
                    subscriptionID: body["subscriptionId"] as? String))
        case "oneTimeProductNotification":
            self.kind = .oneTimeProduct(
                OneTimeProductNotification(
                    version: body["version"] as? String ?? "",
                    type: OneTimeProductNotificationType(rawValue: try number("notificationType")),
                    purchaseToken: try text("purchaseToken"),
                    sku: try text("sku")))
        case "voidedPurchaseNotification":
            self.kind = .voidedPurchase(
                VoidedPurchaseNotification(
                    purchaseToken: try text("purchaseToken"),
                    orderID: try text("orderId"),
                    productType: .init(rawValue: try number("productType")),
                    refundType: Self.integer(body["refundType"]).flatMap { Int(exactly: $0) }))
        default:
            self.kind = .test(version: body["version"] as? String ?? "")
        }
    }

    /// A whole number written as a JSON number or as decimal text (Google writes int64 as text).
    private static func integer(_ value: Any?) -> Int64? {
        if let text = value as? String {
            guard let parsed = Int64(text) else { return nil }
            return parsed
        }
        guard let number = value as? NSNumber else { return nil }
        let double = number.doubleValue
        guard double.rounded() == double else { return nil }
        return Int64(exactly: double)
    }
}
