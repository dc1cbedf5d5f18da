import Foundation

/// A device to notify: its push token and the app it belongs to.
public struct PushDevice: Sendable, Hashable {
    /// The APNs device token (hexadecimal) or the FCM registration token.
    public var token: String
    /// The app's bundle id (the APNs topic) or Android package name (FCM's `restricted_package_name`).
    public var app: String

    public init(token: String, app: String) {
        self.token = token
        self.app = app
    }
}

/// What became of one device's notification.
public enum PushOutcome: Sendable, Hashable {
    /// The service accepted it.
    case sent
    /// The service says the token will never work again (uninstalled app, bad or foreign token): forget it.
    /// `reason` is the service's word (`Unregistered`, `BadDeviceToken`, `UNREGISTERED`, …).
    case deadToken(reason: String)
    /// Not sent: refused for another reason, or still failing after the retries. `status` is the last HTTP
    /// status, nil when no answer came.
    case failed(reason: String, status: Int?)
}

/// One device's outcome, with how many requests it took and how long from its first request to its answer.
public struct PushResult: Sendable, Hashable {
    public let device: PushDevice
    public let outcome: PushOutcome
    public let attempts: Int
    public let latency: Duration

    public init(device: PushDevice, outcome: PushOutcome, attempts: Int, latency: Duration) {
        self.device = device
        self.outcome = outcome
        self.attempts = attempts
        self.latency = latency
    }
}

/// Counts of one send, by outcome.
public struct PushCounts: Sendable, Hashable {
    public var sent = 0
    public var dead = 0
    public var failed = 0
    /// Requests beyond each device's first.
    public var retries = 0

    public init() {}

    public var total: Int { sent + dead + failed }

    public mutating func add(_ result: PushResult) {
        switch result.outcome {
        case .sent: sent += 1
        case .deadToken: dead += 1
        case .failed: failed += 1
        }
        retries += max(result.attempts - 1, 0)
    }
}

/// Told of every device's result and of each whole send, for metrics. Called from many tasks at once: keep
/// it quick and never block.
public protocol PushObserver: Sendable {
    /// One device's result, as soon as it is known.
    func pushed(_ result: PushResult, service: PushService)
    /// A whole send finished: its counts and how long it took.
    func finished(_ counts: PushCounts, service: PushService, duration: Duration)
}

extension PushObserver {
    public func pushed(_ result: PushResult, service: PushService) {}
    public func finished(_ counts: PushCounts, service: PushService, duration: Duration) {}
}

/// Observes nothing.
public struct NoPushObserver: PushObserver {
    public init() {}
}

/// Sends one notification to many devices of one service: the seam the publish fan-out uses.
public protocol PushSender: Sendable {
    var service: PushService { get }
    /// Sends `message` to every device, a bounded number at a time, and returns one result per device in
    /// the order given (a device listed twice is sent to twice). Throws only when the message itself cannot
    /// be sent (too large, bad collapse id), before anything is sent.
    func send(_ message: PushMessage, to devices: [PushDevice]) async throws(PushMessageError) -> [PushResult]
}

/// How often and how patiently a request that met a passing failure (429, 5xx, no answer) is tried again.
public struct PushRetryPolicy: Sendable, Hashable {
    /// Requests per device at most, the first included.
    public var maximumAttempts: Int
    /// The wait before the second request; doubled before each next one, with up to 50 % random added.
    public var initialBackoff: Duration
    /// No wait is longer, a service's `Retry-After` included.
    public var maximumBackoff: Duration

    public init(maximumAttempts: Int = 3, initialBackoff: Duration = .milliseconds(500), maximumBackoff: Duration = .seconds(30)) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.initialBackoff = max(initialBackoff, .zero)
        self.maximumBackoff = max(maximumBackoff, .zero)
    }

    /// The wait before request `attempt + 1`, after `attempt` requests failed; `retryAfter` when the service
    /// asked for it.
    func delay(afterAttempt attempt: Int, retryAfter: Duration?) -> Duration {
        if let retryAfter {
            return min(max(retryAfter, .zero), maximumBackoff)
        }
        var wait = initialBackoff
        for _ in 1..<max(attempt, 1) where wait < maximumBackoff {
            wait *= 2
        }
        wait = min(wait, maximumBackoff)
        return min(wait + wait * Double.random(in: 0..<0.5), maximumBackoff)
    }
}

/// Runs `body` for every device, at most `limit` at a time, and returns the results in the devices' order.
func fanOut(
    _ devices: [PushDevice], limit: Int, service: PushService, observer: any PushObserver,
    _ body: @escaping @Sendable (Int, PushDevice) async -> PushResult
) async -> [PushResult] {
    let clock = ContinuousClock()
    let start = clock.now
    var results = [PushResult?](repeating: nil, count: devices.count)
    var counts = PushCounts()
    await withTaskGroup(of: (Int, PushResult).self) { group in
        var next = 0
        func addNext() {
            let index = next
            let device = devices[index]
            next += 1
            group.addTask { (index, await body(index, device)) }
        }
        while next < devices.count && next < max(limit, 1) {
            addNext()
        }
        while let (index, result) = await group.next() {
            results[index] = result
            counts.add(result)
            observer.pushed(result, service: service)
            if next < devices.count {
                addNext()
            }
        }
    }
    observer.finished(counts, service: service, duration: clock.now - start)
    return zip(devices, results).map { device, result in
        result ?? PushResult(device: device, outcome: .failed(reason: "not sent", status: nil), attempts: 0, latency: .zero)
    }
}
