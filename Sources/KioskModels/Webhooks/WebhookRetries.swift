/// What follows one try at a delivery: the rules of retries, backoff and disabling, with no I/O.
///
/// Tries come immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h after the
/// previous one (about three days in all), each delay stretched by up to `jitter` of itself so that
/// endpoints that failed together do not retry together. `429` and `503` with `Retry-After` wait at least
/// what it says (capped at a day); `410 Gone` disables the endpoint; an endpoint failing without a
/// success for `disableAfter` is disabled.
public struct WebhookRetries: Sendable, Hashable {
    /// Seconds from one try to the next: after the first try, the second waits `delays[0]`.
    public var delays: [Int64]
    /// The largest share of a delay added at random, 0 to 1.
    public var jitter: Double
    /// An endpoint whose deliveries have failed for this long, without a success between, is disabled (seconds).
    public var disableAfter: Int64

    public init(delays: [Int64] = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400],
                jitter: Double = 0.1, disableAfter: Int64 = 5 * 86_400) {
        self.delays = delays; self.jitter = min(max(jitter, 0), 1); self.disableAfter = disableAfter
    }

    /// How a try ended.
    public enum Outcome: Sendable, Hashable {
        /// A 2xx answer.
        case delivered
        /// `410 Gone`: the endpoint does not want more.
        case gone
        /// `429` or `503`; `retryAfter` seconds when the answer said.
        case throttled(retryAfter: Int64?)
        /// Any other answer, no answer, a timeout, a refused destination.
        case failed
    }

    /// What the delivery does next.
    public enum Next: Sendable, Hashable {
        /// Delivered: nothing more.
        case done
        /// Tried again at this time (Unix seconds).
        case retry(at: Int64)
        /// Every try was made: the delivery stays in the log as failed.
        case givenUp
    }

    /// What becomes of the endpoint.
    public enum EndpointChange: Sendable, Hashable {
        case none
        /// Its deliveries succeed again: `failingSince` is cleared.
        case recovered
        /// The first failure since the last success: `failingSince` becomes `now`.
        case startedFailing
        /// Disabled, with the reason the console shows.
        case disable(reason: String)
    }

    /// The decision after try number `attempt` (1 for the first) ended with `outcome` at `now`, the endpoint
    /// failing since `failingSince` (nil: it was not); `random` is in 0..<1.
    public func after(attempt: Int, _ outcome: Outcome, now: Int64, failingSince: Int64?,
                      random: Double) -> (next: Next, endpoint: EndpointChange) {
        switch outcome {
        case .delivered:
            return (.done, failingSince == nil ? .none : .recovered)
        case .gone:
            return (.givenUp, .disable(reason: "the endpoint answered 410 Gone"))
        case .throttled, .failed:
            let endpoint: EndpointChange
            if let failingSince {
                endpoint = now - failingSince >= disableAfter
                    ? .disable(reason: "deliveries failing since \(KioskEvent.timestamp(failingSince))") : .none
            } else {
                endpoint = .startedFailing
            }
            guard attempt >= 1, attempt <= delays.count else { return (.givenUp, endpoint) }
            let base = delays[attempt - 1]
            let extra = Int64(exactly: (Double(base) * jitter * min(max(random, 0), 1)).rounded(.towardZero)) ?? 0
            var wait = Self.sum(base, extra)
            if case .throttled(let retryAfter?) = outcome { wait = max(wait, min(max(retryAfter, 0), 86_400)) }
            return (.retry(at: Self.sum(now, wait)), endpoint)
        }
    }

    /// `a + b`, held at the bounds instead of trapping when it does not fit.
    private static func sum(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }

    /// The outcome of an HTTP answer with `status` and its `Retry-After` header, if any (seconds or an HTTP date
    /// already turned into seconds from now by the caller).
    public static func outcome(status: Int, retryAfter: Int64?) -> Outcome {
        switch status {
        case 200..<300: .delivered
        case 410: .gone
        case 429, 503: .throttled(retryAfter: retryAfter)
        default: .failed
        }
    }
}
