import KioskPush

/// Told of each device's result (as `PushObserver`), of tokens removed and of each finished fan-out, for metrics.
public protocol PushFanOutObserver: PushObserver {
    /// Registrations removed because `service` called their tokens dead.
    func tokensRemoved(_ count: Int, service: PushService)
    /// An event's fan-out finished: the time from the event's commit to the end of its last batch.
    func fannedOut(after duration: Duration)
}

extension PushFanOutObserver {
    public func tokensRemoved(_ count: Int, service: PushService) {}
    public func fannedOut(after duration: Duration) {}
}

/// Observes nothing.
public struct UnobservedPushFanOut: PushFanOutObserver {
    public init() {}
}
