/// What `PushRegistry.claimPushBatch` is asked for.
public struct PushBatchRequest: Sendable, Hashable {
    /// The event types that fan out (`PushFanOut.types`).
    public var types: Set<EventType>
    /// Events older than this (Unix seconds) are passed over: an issue that old is no news.
    public var notBefore: Int64
    /// Registrations in one batch at most.
    public var limit: Int
    /// When the claim is made, Unix seconds.
    public var now: Int64

    public init(types: Set<EventType>, notBefore: Int64, limit: Int, now: Int64) {
        self.types = types; self.notBefore = notBefore; self.limit = max(limit, 1); self.now = now
    }
}

/// One page of a publish's fan-out: the next registrations (by id) of the apps offering the event's edition,
/// claimed for one worker. The claim is committed before the worker sends anything, so a batch is sent at
/// most once: a worker killed while sending loses the rest of its batch rather than sending it twice.
public struct PushBatch: Sendable, Hashable {
    public var event: KioskEvent
    public var targets: [PushTarget]
    /// No registration is left after these: the event's fan-out is finished.
    public var last: Bool

    public init(event: KioskEvent, targets: [PushTarget], last: Bool) {
        self.event = event; self.targets = targets; self.last = last
    }
}

/// A registration in an app offering the event's edition, with what the store knows at once about whether
/// the device may read the issue.
public struct PushTarget: Sendable, Hashable {
    public var registration: PushRegistration
    /// The app's line for the edition.
    public var access: LineAccess
    /// The registration's reader has a subscription covering the day.
    public var subscribed: Bool
    /// The reader or the device holds a store purchase in the app (whether it opens the issue is decided by
    /// `PushAudience`).
    public var holdsPurchases: Bool

    public init(registration: PushRegistration, access: LineAccess, subscribed: Bool, holdsPurchases: Bool) {
        self.registration = registration; self.access = access; self.subscribed = subscribed; self.holdsPurchases = holdsPurchases
    }
}
