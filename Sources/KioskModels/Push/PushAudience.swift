/// Who hears of a new issue: the registrations of a batch that asked for its edition by name, and those
/// that asked for every edition and may read the issue (a free line, a subscription, a store purchase).
public struct PushAudience: Sendable {
    /// The events that fan out: a first publication (an alert and/or a background push) and a republication
    /// (a background push only, so that apps fetch the corrected issue without telling the reader again).
    public static let types: Set<EventType> = [.issuePublished, .issueRepublished]

    public let store: any KioskStore

    public init(store: any KioskStore) { self.store = store }

    /// The issue an event reports; nil when it reports none.
    public static func issue(of event: KioskEvent) -> IssueRef? {
        guard types.contains(event.type), let edition = event.body.edition, let text = event.body.date,
              let date = IssueDate(text) else { return nil }
        return IssueRef(editionID: edition, date: date)
    }

    /// The registrations of `batch` to notify, in the batch's order.
    public func recipients(of batch: PushBatch, at time: Int64) async throws -> [PushRegistration] {
        guard let issue = Self.issue(of: batch.event) else { return [] }
        var recipients: [PushRegistration] = []
        for target in batch.targets where try await wants(target, issue: issue, at: time) {
            recipients.append(target.registration)
        }
        return recipients
    }

    private func wants(_ target: PushTarget, issue: IssueRef, at time: Int64) async throws -> Bool {
        let registration = target.registration
        if !registration.editions.isEmpty { return registration.names(editionID: issue.editionID) }
        if target.access == .free || target.subscribed { return true }
        guard target.holdsPurchases else { return false }
        return try await store.purchasesGrant(issue, appKey: registration.appKey, userID: registration.userID,
                                              deviceKey: registration.deviceKey, at: time)
    }
}
