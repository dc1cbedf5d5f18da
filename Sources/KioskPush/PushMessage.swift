import Foundation

/// One notification, the same for every device it goes to: an alert a person sees, a background push that
/// wakes the app, or both.
public struct PushMessage: Sendable, Equatable {
    /// What the notification shows. Texts come localized by the caller.
    public struct Alert: Sendable, Equatable {
        public var title: String
        public var body: String
        /// The cover image an iOS notification service extension downloads (`mutable-content: 1`), or the
        /// Android notification's image.
        public var imageURL: String?

        public init(title: String, body: String, imageURL: String? = nil) {
            self.title = title
            self.body = body
            self.imageURL = imageURL
        }
    }

    /// The alert, or nil for a background push only.
    public var alert: Alert?
    /// Wakes the app to fetch in the background (`content-available: 1`; an FCM data message).
    public var background: Bool
    /// Custom keys the app reads, e.g. `edition` and `date`.
    public var data: [String: String]
    /// Replaces an earlier notification with the same id on the device (`apns-collapse-id`,
    /// `android.collapse_key`): one per edition. At most 64 bytes of UTF-8.
    public var collapseID: String?
    /// After this time the service drops the notification if it could not deliver it; nil: delivered once
    /// now or never (APNs `apns-expiration: 0`, FCM `ttl: 0s`).
    public var expiration: Date?

    public init(
        alert: Alert? = nil, background: Bool = false, data: [String: String] = [:], collapseID: String? = nil,
        expiration: Date? = nil
    ) {
        self.alert = alert
        self.background = background
        self.data = data
        self.collapseID = collapseID
        self.expiration = expiration
    }

    /// A new issue of an edition: the alert (when given) with the cover, a background push so the app can
    /// fetch it, the edition and date as custom keys, collapsed per edition.
    public static func newIssue(
        edition: String, date: String, alert: Alert?, background: Bool = true, expiration: Date? = nil
    ) -> PushMessage {
        PushMessage(
            alert: alert, background: background, data: ["edition": edition, "date": date],
            collapseID: "edition-\(edition)", expiration: expiration)
    }

    /// The APNs limit on `apns-collapse-id`, used for FCM's `collapse_key` too.
    public static let maximumCollapseIDBytes = 64

    /// Checks what both services refuse whole, before anything is sent.
    func validate() throws(PushMessageError) {
        if alert == nil && !background {
            throw .empty
        }
        if let collapseID {
            let bytes = collapseID.utf8.count
            guard bytes > 0, bytes <= Self.maximumCollapseIDBytes else {
                throw .collapseIDLength(bytes: bytes, limit: Self.maximumCollapseIDBytes)
            }
        }
        for key in data.keys where ["aps", "from", "notification", "message_type"].contains(key) || key.hasPrefix("google.") || key.hasPrefix("gcm.") {
            throw .reservedKey(key)
        }
    }
}

/// A message that cannot be sent to anyone: nothing was sent. `description` says what to change.
public enum PushMessageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Neither an alert nor a background push.
    case empty
    /// The collapse id is empty or longer than the services accept.
    case collapseIDLength(bytes: Int, limit: Int)
    /// The payload the service would receive is over its limit.
    case payloadTooLarge(service: PushService, bytes: Int, limit: Int)
    /// A custom key the services keep for themselves.
    case reservedKey(String)

    public var description: String {
        switch self {
        case .empty:
            "the notification has neither an alert nor a background push: give it one"
        case .collapseIDLength(let bytes, let limit):
            "the collapse id is \(bytes) bytes; it must be 1 to \(limit) bytes of UTF-8"
        case .payloadTooLarge(let service, let bytes, let limit):
            "the \(service) payload is \(bytes) bytes, over its limit of \(limit): shorten the title, body or custom keys"
        case .reservedKey(let key):
            "the custom key '\(key)' is reserved by APNs or FCM: rename it"
        }
    }
}

/// The push services.
public enum PushService: String, Sendable, Hashable, CustomStringConvertible {
    case apns = "APNs"
    case fcm = "FCM"

    public var description: String { rawValue }
}
