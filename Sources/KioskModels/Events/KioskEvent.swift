import Foundation

/// Something that changed, as the outbox keeps it and every way out (webhooks, the event stream, push)
/// tells it. Written in the same transaction as the change it reports, so a change and its event are
/// kept or lost together.
public struct KioskEvent: Sendable, Hashable, Codable {
    /// The event's place in the outbox: positive, increasing in the order the changes committed, so a
    /// reader that has seen `id` resumes after it without missing or repeating one.
    public var id: Int64
    public var type: EventType
    /// When the change committed, Unix seconds.
    public var time: Int64
    public var body: EventBody

    public init(id: Int64, type: EventType, time: Int64, body: EventBody) {
        self.id = id; self.type = type; self.time = time; self.body = body
    }
}

/// An event about to be written with its change; the store gives it its id and time.
public struct NewEvent: Sendable, Hashable {
    public var type: EventType
    public var body: EventBody

    public init(_ type: EventType, _ body: EventBody) {
        self.type = type; self.body = body
    }
}

/// What an event reports. The names are the wire's (`docs/events.md`) and never change meaning.
public enum EventType: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// An issue went live for the first time (its first revision).
    case issuePublished = "issue.published"
    /// A live or withdrawn issue was replaced by a new revision.
    case issueRepublished = "issue.republished"
    case issueWithdrawn = "issue.withdrawn"
    /// A withdrawn issue went live again, as it was.
    case issueRestored = "issue.restored"
    case editionAdded = "edition.added"
    case editionChanged = "edition.changed"
    case appAdded = "app.added"
    /// Its name, demo quota, lines, web kiosk or products changed.
    case appChanged = "app.changed"
    case appRemoved = "app.removed"
    /// An operator or an import gave a reader an edition until a day.
    case subscriptionGranted = "subscription.granted"
    /// An operator or an import extended a reader's subscription.
    case subscriptionRenewed = "subscription.renewed"
    /// A store purchase gave someone the right to read: registered by an app, or a notice about one.
    case purchaseGranted = "purchase.granted"
    /// A store subscription was paid for another period.
    case purchaseRenewed = "purchase.renewed"
    /// A store subscription ended: the store said so, or a grace period ran out.
    case purchaseExpired = "purchase.expired"
    /// The store refunded or revoked a payment (including family sharing ended).
    case purchaseRefunded = "purchase.refunded"
    /// An operator revoked the purchase in the console.
    case purchaseRevoked = "purchase.revoked"
    /// A refund or revocation was reversed: the purchase grants again.
    case purchaseRestored = "purchase.restored"
    case readerAdded = "reader.added"
    /// Sent to one webhook endpoint by an operator ("send a test event"); never in the stream.
    case webhookTest = "webhook.test"

    public static func < (lhs: EventType, rhs: EventType) -> Bool { lhs.rawValue < rhs.rawValue }

    /// A comma-separated list of type names (`issue.published,issue.withdrawn`); `issue.*` names a family.
    /// Fails on the first name no event type has.
    public static func parseList(_ text: String) -> Result<Set<EventType>, UnknownEventType> {
        var types = Set<EventType>()
        for name in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !name.isEmpty {
            if name.hasSuffix(".*") {
                let family = name.dropLast(1)
                let members = allCases.filter { $0.rawValue.hasPrefix(family) }
                guard !members.isEmpty else { return .failure(UnknownEventType(name: name)) }
                types.formUnion(members)
            } else if let type = EventType(rawValue: name) {
                types.insert(type)
            } else {
                return .failure(UnknownEventType(name: name))
            }
        }
        return .success(types)
    }
}

/// A type name no event has.
public struct UnknownEventType: Error, Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var description: String {
        "unknown event type \"\(name)\" (known: \(EventType.allCases.map(\.rawValue).joined(separator: ", ")))"
    }
}

/// An event's body: ids and links, never a secret, a password hash, a device key or an identity key.
/// Fields that do not apply are left out of the JSON.
public struct EventBody: Sendable, Hashable, Codable {
    public var app: String?
    public var edition: Int?
    /// The issue's day, `yyyy-MM-dd`.
    public var date: String?
    public var revision: Int?
    /// The reader's id (`users.id`).
    public var reader: Int?
    /// `apple` or `google`.
    public var store: String?
    /// The store's lasting name for the purchase (Apple's original transaction id, Google's purchase token).
    public var purchase: String?
    /// The product's id in the app.
    public var product: String?
    /// Until when it gives access: a day (`yyyy-MM-dd`) for a subscription, RFC 3339 for a store purchase.
    public var until: String?
    /// What changed, as the console reports it (catalogue changes).
    public var summary: String?

    public init(app: String? = nil, edition: Int? = nil, date: String? = nil, revision: Int? = nil, reader: Int? = nil,
                store: String? = nil, purchase: String? = nil, product: String? = nil, until: String? = nil,
                summary: String? = nil) {
        self.app = app; self.edition = edition; self.date = date; self.revision = revision; self.reader = reader
        self.store = store; self.purchase = purchase; self.product = product; self.until = until; self.summary = summary
    }

    /// The body as stored and sent: compact JSON with sorted keys, the same bytes for the same body.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of optional strings and integers cannot fail.
        return (try? String(decoding: encoder.encode(self), as: UTF8.self)) ?? "{}"
    }

    /// A stored body; nil when it is not one.
    public init?(json: String) {
        guard let body = try? JSONDecoder().decode(EventBody.self, from: Data(json.utf8)) else { return nil }
        self = body
    }
}

extension KioskEvent {
    /// The event as the stream and webhooks send it:
    /// `{"id":"…","type":"issue.published","timestamp":"2026-11-26T05:00:00Z","data":{…}}`. The id is a
    /// string (`evt_` and the outbox position), the timestamp RFC 3339 in UTC.
    public func json() -> String {
        "{\"data\":\(body.json()),\"id\":\"\(publicID)\",\"timestamp\":\"\(Self.timestamp(time))\",\"type\":\"\(type.rawValue)\"}"
    }

    /// The id endpoints and stream readers see: `evt_` and the outbox position.
    public var publicID: String { "evt_\(id)" }

    /// Reads an id as `publicID` writes it, or a bare position; nil otherwise.
    public static func position(ofPublicID text: Substring) -> Int64? {
        let digits = text.hasPrefix("evt_") ? text.dropFirst(4) : text
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let position = Int64(digits), position >= 0 else { return nil }
        return position
    }

    /// `time` (Unix seconds) as RFC 3339 in UTC.
    public static func timestamp(_ time: Int64) -> String {
        Date(timeIntervalSince1970: TimeInterval(time)).formatted(.iso8601)
    }
}
