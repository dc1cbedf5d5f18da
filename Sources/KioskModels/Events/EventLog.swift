/// The outbox as its readers see it. Events are appended by the stores inside the changes they report
/// (publishing, the catalogue, readers, subscriptions, purchases); this port reads them back in commit
/// order and keeps the log from growing without bound. Every call is safe across connections,
/// processes and instances.
public protocol EventLog: Sendable {
    /// Events after position `after`, oldest first, at most `limit`; only `types` when given.
    func events(after: Int64, types: Set<EventType>?, limit: Int) async throws -> [KioskEvent]
    /// The positions of the oldest and newest events kept; nil when none is.
    func eventBounds() async throws -> ClosedRange<Int64>?
    /// Appends an event that reports no other change (an operator's test event), in its own transaction.
    func appendEvent(_ event: NewEvent, at time: Int64) async throws -> KioskEvent
    /// Deletes the events older than `time` (Unix seconds) that every webhook endpoint has been offered;
    /// returns how many went.
    func pruneEvents(before time: Int64) async throws -> Int
}
