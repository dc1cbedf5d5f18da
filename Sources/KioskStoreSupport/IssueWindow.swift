import KioskModels

/// Which published issues a listing (`KioskStore.issues`) reads: without a date the newest, whichever
/// the direction; with one, those on or before it, newest first, or those on or after it, oldest first.
package enum IssueWindow: Sendable, Hashable {
    case newest
    case upTo(IssueDate)
    case from(IssueDate)

    package init(from date: IssueDate?, direction: ListingDirection) {
        switch (date, direction) {
        case (nil, _): self = .newest
        case (let date?, .descending): self = .upTo(date)
        case (let date?, .ascending): self = .from(date)
        }
    }
}
