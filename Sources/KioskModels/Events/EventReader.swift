/// Who reads the event stream, and which events each may see: an operator every event, a publisher the
/// issues and editions it may publish to (all of them when it has no scope). A test event sent to one
/// webhook endpoint is never in the stream.
public enum EventReader: Sendable, Hashable {
    case `operator`
    case publisher(scope: PublisherScope?)

    /// The types this reader may see at all.
    public var visibleTypes: Set<EventType> {
        switch self {
        case .operator:
            Set(EventType.allCases).subtracting([.webhookTest])
        case .publisher:
            [.issuePublished, .issueRepublished, .issueWithdrawn, .issueRestored, .editionAdded, .editionChanged]
        }
    }

    /// Whether it may see `event`; `publicationOf` gives an edition's publication (nil when unknown).
    public func maySee(_ event: KioskEvent, publicationOf: (Int) -> Int?) -> Bool {
        guard visibleTypes.contains(event.type) else { return false }
        guard case .publisher(let scope?) = self else { return true }
        guard let edition = event.body.edition else { return false }
        return scope.allows(editionID: edition, publicationID: publicationOf(edition))
    }
}
