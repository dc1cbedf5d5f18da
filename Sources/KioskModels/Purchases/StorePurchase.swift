/// Where a store purchase stands (`estat` on the wire).
public enum PurchaseState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Grants what it bought: a subscription paid (or in its grace period), an issue or a pack not refunded.
    case active = "activa"
    /// A subscription no longer paid: under `period` it keeps the issues of its paid periods, nothing new.
    case expired = "caducada"
    /// Refunded, or revoked by the store (family sharing ended): grants nothing until a reversal.
    case revoked = "revocada"
}

/// An issue, named as the wire names it: an edition and a date.
public struct IssueRef: Sendable, Hashable, Codable, Comparable {
    public var editionID: Int
    public var date: IssueDate
    public init(editionID: Int, date: IssueDate) { self.editionID = editionID; self.date = date }
    public static func < (lhs: IssueRef, rhs: IssueRef) -> Bool { (lhs.date, lhs.editionID) < (rhs.date, rhs.editionID) }
}

/// A time a subscription was paid for, in Unix seconds: `start` inclusive, `end` exclusive.
public struct PaidPeriod: Sendable, Hashable, Codable {
    public var start: Int64
    public var end: Int64
    public init(start: Int64, end: Int64) { self.start = start; self.end = end }

    /// Whether an issue dated `date` falls inside: dated from the day it starts through the day it ends (UTC).
    public func covers(_ date: IssueDate) -> Bool {
        IssueDate(unixTime: start) <= date && date <= IssueDate(unixTime: end > start ? end - 1 : start)
    }
}

/// Why a change to a purchase was refused.
public enum PurchaseRuleError: Error, Sendable, Equatable {
    /// The pack has no credit left to spend.
    case noCreditLeft
    /// Only a `credits` purchase has credits to spend.
    case notAPack
    /// The purchase is refunded or revoked.
    case revoked
}

/// A store purchase as Kiosk keeps it, whatever the store, and the rules of what it grants.
///
/// Its state is derived from what the stores said (paid periods, grace, revocation) and the time asked
/// about, so replaying the stores' notifications in any order that keeps the newest of each fact gives the
/// same answers.
public struct StorePurchase: Sendable, Hashable {
    public var store: Storefront
    /// The store's lasting name for it: Apple's `originalTransactionId`, Google's purchase token.
    public var originalID: String
    public var product: StoreProduct
    /// Refunded or revoked; a reversal clears it.
    public var revoked: Bool
    /// A subscription's paid periods: their issues stay open for good under `period`.
    public var paidPeriods: [PaidPeriod]
    /// A subscription's free periods (trials): their issues open only while the period lasts.
    public var freePeriods: [PaidPeriod] = []
    /// A subscription whose renewal failed keeps access until this time (Unix seconds); nil: no grace.
    public var graceUntil: Int64?
    /// The issues bought (`issue`) or opened with credits (`credits`), for good.
    public var issues: [IssueRef]

    public init(store: Storefront, originalID: String, product: StoreProduct, revoked: Bool = false,
                paidPeriods: [PaidPeriod] = [], graceUntil: Int64? = nil, issues: [IssueRef] = []) {
        self.store = store; self.originalID = originalID; self.product = product; self.revoked = revoked
        self.paidPeriods = paidPeriods; self.graceUntil = graceUntil; self.issues = issues
    }

    /// Where it stands at `now` (Unix seconds).
    public func state(at now: Int64) -> PurchaseState {
        if revoked { return .revoked }
        guard product.kind == .subscription else { return .active }
        return now < accessEnd ? .active : .expired
    }

    /// Until when a subscription gives access (Unix seconds): the end of its last paid or free period, or of
    /// its grace.
    public var accessEnd: Int64 {
        max(paidPeriods.map(\.end).max() ?? 0, freePeriods.map(\.end).max() ?? 0, graceUntil ?? 0)
    }

    /// Until when a subscription's paid periods run (Unix seconds): what it keeps under `period` once lapsed.
    public var paidEnd: Int64 {
        paidPeriods.map(\.end).max() ?? 0
    }

    /// Credits a pack has left: its size less the issues opened with it; zero for the other kinds.
    public var unspentCredits: Int {
        product.kind == .credits ? max(0, product.credits - issues.count) : 0
    }

    /// Whether it opens `issue` at `now`, the app's subscriber lines being `subscriberEditions`.
    public func grants(_ issue: IssueRef, at now: Int64, subscriberEditions: [Int]) -> Bool {
        if revoked { return false }
        switch product.kind {
        case .issue, .credits:
            return issues.contains(issue)
        case .subscription:
            guard product.coveredEditions(subscriberEditions: subscriberEditions).contains(issue.editionID) else { return false }
            switch product.scope {
            case .all:
                return state(at: now) == .active
            case .period:
                if paidPeriods.contains(where: { $0.covers(issue.date) }) { return true }
                // A free period opens its issues while it lasts.
                if freePeriods.contains(where: { now < $0.end && $0.covers(issue.date) }) { return true }
                // In a grace period, the issues dated since the last paid period ended open too, until the grace ends.
                guard let graceUntil, now < graceUntil, let lastEnd = paidPeriods.map(\.end).max() else { return false }
                return PaidPeriod(start: lastEnd, end: graceUntil).covers(issue.date)
            }
        }
    }

    /// Spends one credit of a pack on `issue`; spending again on an issue already opened changes nothing.
    public mutating func spendCredit(on issue: IssueRef) throws(PurchaseRuleError) {
        guard product.kind == .credits else { throw .notAPack }
        guard !revoked else { throw .revoked }
        if issues.contains(issue) { return }
        guard unspentCredits > 0 else { throw .noCreditLeft }
        issues.append(issue)
    }
}
