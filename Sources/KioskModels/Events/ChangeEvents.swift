/// The events each kind of change makes: one rule per change, used by both stores inside the change's
/// transaction, so the two engines report the same events for the same changes.
extension NewEvent {
    /// A revision went live: `replaced` is the revision it replaced (nil: the issue's first).
    public static func published(editionID: Int, date: IssueDate, revision: Int, replaced: Int?) -> NewEvent {
        NewEvent(replaced == nil ? .issuePublished : .issueRepublished,
                 EventBody(edition: editionID, date: date.description, revision: revision))
    }

    public static func withdrawn(editionID: Int, date: IssueDate) -> NewEvent {
        NewEvent(.issueWithdrawn, EventBody(edition: editionID, date: date.description))
    }

    public static func restored(editionID: Int, date: IssueDate, revision: Int) -> NewEvent {
        NewEvent(.issueRestored, EventBody(edition: editionID, date: date.description, revision: revision))
    }

    public static func readerAdded(userID: Int) -> NewEvent {
        NewEvent(.readerAdded, EventBody(reader: userID))
    }

    /// A reader's subscription to an edition set to end on `until`; `previous` is the day it ended before
    /// (nil: none). Nil when nothing changed.
    public static func subscription(userID: Int, editionID: Int, until: IssueDate, previous: IssueDate?) -> NewEvent? {
        guard previous != until else { return nil }
        return NewEvent(previous == nil ? .subscriptionGranted : .subscriptionRenewed,
                        EventBody(edition: editionID, reader: userID, until: until.description))
    }

    /// What a store purchase's change from `before` (nil: new) to `after` reports, judged at `now` (Unix seconds):
    /// granted when it first has a holder, refunded or revoked (by an operator) when it stops granting,
    /// restored when a reversal makes it grant again, renewed when a subscription is paid further, expired
    /// when a subscription stops giving access.
    public static func purchaseChange(from before: HeldPurchase?, to after: HeldPurchase, at now: Int64) -> [NewEvent] {
        let purchase = after.purchase
        var body = EventBody(app: after.appKey, store: purchase.store.rawValue, purchase: purchase.originalID,
                             product: purchase.product.id)
        if case .reader(let userID) = after.holder { body.reader = userID }
        if purchase.product.kind == .subscription, purchase.accessEnd > 0 {
            body.until = KioskEvent.timestamp(purchase.accessEnd)
        }
        var events: [NewEvent] = []
        let wasRevoked = before?.purchase.revoked ?? false
        if (before?.holder ?? .unclaimed) == .unclaimed, after.holder != .unclaimed, !purchase.revoked {
            events.append(NewEvent(.purchaseGranted, body))
        }
        if !wasRevoked, purchase.revoked {
            events.append(NewEvent(after.revokedByOperator && before?.revokedByOperator != true ? .purchaseRevoked : .purchaseRefunded, body))
        } else if wasRevoked, !purchase.revoked {
            events.append(NewEvent(.purchaseRestored, body))
        }
        if let before, purchase.product.kind == .subscription, !purchase.revoked, !before.purchase.paidPeriods.isEmpty {
            let paidBefore = before.purchase.paidPeriods.map(\.end).max() ?? 0
            let paidAfter = purchase.paidPeriods.map(\.end).max() ?? 0
            if paidAfter > paidBefore {
                events.append(NewEvent(.purchaseRenewed, body))
            } else if before.purchase.state(at: now) == .active, purchase.state(at: now) == .expired {
                events.append(NewEvent(.purchaseExpired, body))
            }
        }
        return events
    }
}
