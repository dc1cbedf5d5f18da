import Foundation

/// The APNs request body and the headers that depend on the message only, made once per send.
struct APNsPayload: Sendable {
    /// Apple's limit for a regular (not VoIP) notification.
    static let maximumBytes = 4096

    let body: [UInt8]
    /// `alert` or `background`.
    let pushType: String
    /// 10 (now) for an alert, 5 (when power allows) for a background push.
    let priority: String
    /// `apns-expiration`: seconds since 1970, 0 for "now or never".
    let expiration: String
    let collapseID: String?

    init(_ message: PushMessage) throws(PushMessageError) {
        try message.validate()
        var aps: [String: Any] = [:]
        var root: [String: Any] = [:]
        for (key, value) in message.data {
            root[key] = value
        }
        if let alert = message.alert {
            aps["alert"] = ["title": alert.title, "body": alert.body]
            if let image = alert.imageURL {
                // For the app's notification service extension, which downloads the cover.
                aps["mutable-content"] = 1
                root["cover"] = image
            }
        }
        if message.background {
            aps["content-available"] = 1
        }
        root["aps"] = aps
        let data: Data
        do {
            data = try JSONSerialization.data(withJSONObject: root, options: [.sortedKeys, .withoutEscapingSlashes])
        } catch {
            throw .payloadTooLarge(service: .apns, bytes: 0, limit: Self.maximumBytes)
        }
        guard data.count <= Self.maximumBytes else {
            throw .payloadTooLarge(service: .apns, bytes: data.count, limit: Self.maximumBytes)
        }
        body = Array(data)
        pushType = message.alert != nil ? "alert" : "background"
        priority = message.alert != nil ? "10" : "5"
        if let expiration = message.expiration, let seconds = Int64(exactly: max(expiration.timeIntervalSince1970, 1).rounded(.down)) {
            self.expiration = String(seconds)
        } else {
            expiration = "0"
        }
        collapseID = message.collapseID
    }
}
