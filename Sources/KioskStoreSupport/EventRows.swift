import Foundation
import KioskModels

/// An outbox event as both engines write it: the values of `outbox_events`' columns but the id, which
/// the engine gives in commit order.
package struct EventRow: Sendable, Hashable {
    package var type: String
    /// When the change committed, Unix seconds.
    package var time: Int64
    /// `EventBody.json()`.
    package var body: String

    package init(_ event: NewEvent, at time: Int64) {
        type = event.type.rawValue; self.time = time; body = event.body.json()
    }

    /// The rows of `events`, all at `time`.
    package static func rows(_ events: [NewEvent], at time: Int64) -> [EventRow] {
        events.map { EventRow($0, at: time) }
    }

    /// The time of an event whose change is given none (a restore, a catalogue sync, a subscription):
    /// this machine's clock, Unix seconds.
    package static func now() -> Int64 { Int64(exactly: Date().timeIntervalSince1970.rounded(.down)) ?? 0 }
}

extension KioskEvent {
    /// A stored row read back; nil when its type is not one this version knows. A body that is not JSON
    /// reads as an empty one.
    package init?(storedID id: Int64, type: String, time: Int64, body: String) {
        guard let type = EventType(rawValue: type) else { return nil }
        self.init(id: id, type: type, time: time, body: EventBody(json: body) ?? EventBody())
    }
}

/// A webhook endpoint's columns as both engines store them: the event types as their names in order,
/// comma-separated (empty: every type), the secrets as a JSON array.
package enum WebhookEndpointColumns {
    package static func types(_ types: Set<EventType>) -> String {
        types.map(\.rawValue).sorted().joined(separator: ",")
    }

    /// Names this version does not know are left out.
    package static func types(stored text: String) -> Set<EventType> {
        Set(text.split(separator: ",").compactMap { EventType(rawValue: String($0)) })
    }

    package static func secrets(_ secrets: [String]) -> String {
        // Encoding an array of strings cannot fail.
        (try? String(decoding: JSONEncoder().encode(secrets), as: UTF8.self)) ?? "[]"
    }

    package static func secrets(stored text: String) -> [String] {
        (try? JSONDecoder().decode([String].self, from: Data(text.utf8))) ?? []
    }

    package static func source(stored text: String) -> WebhookEndpoint.Source {
        WebhookEndpoint.Source(rawValue: text) ?? .console
    }
}

/// The states of a `webhook_deliveries` row, as stored.
package enum DeliveryState: String, Sendable {
    /// Due at `due_at`, or leased to a worker until `lease_until`.
    case waiting
    case delivered
    /// Every try was made, or the endpoint answered `410 Gone`.
    case givenUp = "given_up"

    /// The state after a try that ends with `next`, and when a retry is due (nil: none).
    package static func after(_ next: WebhookRetries.Next) -> (state: DeliveryState, due: Int64?) {
        switch next {
        case .done: (.delivered, nil)
        case .retry(let time): (.waiting, time)
        case .givenUp: (.givenUp, nil)
        }
    }
}

/// What `dispatchEvents` queues: for each event, oldest first, one delivery to each endpoint that
/// receives its type (the endpoints given are those enabled).
package func webhookDeliveries(of events: [KioskEvent], to endpoints: [WebhookEndpoint]) -> [(event: Int64, endpoint: Int64)] {
    events.flatMap { event in
        endpoints.filter { $0.enabled && $0.receives(event.type) }.map { (event: event.id, endpoint: $0.id) }
    }
}

/// What `syncFileEndpoints` changes, matched by name: the stored file endpoints no longer wanted go; a
/// wanted one already stored keeps its id, its state (enabled, why disabled, failing since) and when it
/// was made, and takes the file's owner, URL, types and secrets; a new one is added as given.
package struct FileEndpointSync: Sendable {
    package enum Change: Sendable, Hashable {
        case remove(id: Int64)
        /// Added when its id is 0, updated otherwise.
        case save(WebhookEndpoint)
    }

    package private(set) var changes: [Change] = []

    package init(stored: [WebhookEndpoint], wanted: [WebhookEndpoint]) {
        let byName = Dictionary(stored.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let wantedNames = Set(wanted.map(\.name))
        for endpoint in stored.sorted(by: { $0.id < $1.id }) where !wantedNames.contains(endpoint.name) {
            changes.append(.remove(id: endpoint.id))
        }
        var seen = Set<String>()
        for endpoint in wanted where seen.insert(endpoint.name).inserted {
            var endpoint = endpoint
            endpoint.source = .file
            if let existing = byName[endpoint.name] {
                endpoint.id = existing.id
                endpoint.enabled = existing.enabled
                endpoint.disabledReason = existing.disabledReason
                endpoint.failingSince = existing.failingSince
                endpoint.createdAt = existing.createdAt
                if endpoint != existing { changes.append(.save(endpoint)) }
            } else {
                endpoint.id = 0
                changes.append(.save(endpoint))
            }
        }
    }
}
