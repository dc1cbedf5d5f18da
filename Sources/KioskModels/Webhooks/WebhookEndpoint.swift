import Foundation

/// A destination for events in a publisher's systems, owned by an operator: the events of `types` (all
/// when empty) are posted to `url`, signed with `secrets` (Standard Webhooks).
public struct WebhookEndpoint: Sendable, Hashable {
    /// The store's id; 0 before it is first saved.
    public var id: Int64
    /// Configured in the file (by `name`, replaced at each reload) or made in the console.
    public var source: Source
    /// The file's name for it; for the console's, a label the operator chose.
    public var name: String
    /// The operator who owns it (the console shows an operator their own).
    public var owner: String
    public var url: String
    /// The events it receives; empty: every type but `webhook.test`, which is only sent on request.
    public var types: Set<EventType>
    /// `whsec_…` secrets, the current first. During a rotation there are two and each delivery carries a
    /// signature by each.
    public var secrets: [String]
    public var enabled: Bool
    /// Why it was disabled (`410 Gone`, failing for days, by an operator); nil while enabled.
    public var disabledReason: String?
    /// When its deliveries started failing without a success since (Unix seconds); nil while they succeed.
    public var failingSince: Int64?
    public var createdAt: Int64

    public enum Source: String, Sendable, Hashable, Codable {
        case file
        case console
    }

    public init(id: Int64 = 0, source: Source, name: String, owner: String, url: String, types: Set<EventType> = [],
                secrets: [String], enabled: Bool = true, disabledReason: String? = nil, failingSince: Int64? = nil,
                createdAt: Int64) {
        self.id = id; self.source = source; self.name = name; self.owner = owner; self.url = url; self.types = types
        self.secrets = secrets; self.enabled = enabled; self.disabledReason = disabledReason
        self.failingSince = failingSince; self.createdAt = createdAt
    }

    /// Whether an event of `type` is offered to it.
    public func receives(_ type: EventType) -> Bool {
        type != .webhookTest && (types.isEmpty || types.contains(type))
    }
}

/// One event on its way to one endpoint. It keeps its event's id (the `webhook-id`) across retries.
public struct WebhookDelivery: Sendable, Hashable {
    public var id: Int64
    public var endpoint: WebhookEndpoint
    public var event: KioskEvent
    /// Attempts already made.
    public var attempts: Int

    public init(id: Int64, endpoint: WebhookEndpoint, event: KioskEvent, attempts: Int) {
        self.id = id; self.endpoint = endpoint; self.event = event; self.attempts = attempts
    }
}

/// One try at a delivery, as the console's delivery log shows it.
public struct DeliveryAttempt: Sendable, Hashable {
    public var deliveryID: Int64
    public var endpointID: Int64
    public var eventID: Int64
    public var eventType: EventType
    /// 1 for the first try.
    public var attempt: Int
    /// When it was made, Unix seconds.
    public var time: Int64
    /// The HTTP status answered; nil when none was (refused, timed out, not allowed).
    public var status: Int?
    public var latencyMilliseconds: Int64
    /// The answer's first bytes, or what went wrong when there was no answer.
    public var answer: String

    public init(deliveryID: Int64, endpointID: Int64, eventID: Int64, eventType: EventType, attempt: Int, time: Int64,
                status: Int?, latencyMilliseconds: Int64, answer: String) {
        self.deliveryID = deliveryID; self.endpointID = endpointID; self.eventID = eventID; self.eventType = eventType
        self.attempt = attempt; self.time = time; self.status = status; self.latencyMilliseconds = latencyMilliseconds
        self.answer = answer
    }
}

extension WebhookEndpoint {
    /// What is wrong with `url` as a destination, before any address is looked up; nil when it will do:
    /// `http` or `https`, a host, no user name or password, no fragment, at most 2000 characters.
    public static func urlProblem(_ url: String) -> String? {
        guard url.utf8.count <= 2_000 else { return "must be at most 2000 characters" }
        guard !url.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } == true }) else {
            return "must not contain spaces or control characters"
        }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https" else {
            return "must be an http:// or https:// URL, got \"\(url)\""
        }
        guard let host = components.host, !host.isEmpty else { return "must name a host" }
        guard components.user == nil, components.password == nil else { return "must not carry a user name or password" }
        guard components.fragment == nil else { return "must not have a #fragment" }
        return nil
    }
}
