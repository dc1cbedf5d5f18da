import Foundation

/// How many of one costly thing one client may ask for: `burst` at once, then `perMinute` (a token bucket
/// per client). The kiosk keeps two:
///
/// - searches: search answers where words are (edition, date, page) even on pages the searcher may not open,
///   so one client asking thousands of yes/no questions could rebuild a paid page's words; at the default rate
///   that takes an hour a page from one address instead of seconds. A reader typing searches never meets it.
/// - purchase checks: each purchase an app registers or restores is verified (a signature chain, or a call
///   to Google Play), so one client must not turn a few requests (a multicall of restores) into thousands of
///   verifications or calls to Google. An app restoring a reader's purchases never meets it.
///
/// The memory is one bucket per client that asked recently, at most `maxClients`: when that is
/// reached, buckets already full again are dropped, and if none are, all are (a flood from that many
/// addresses restarts everyone's budget; it cannot grow the process).
public final class ClientBudget: @unchecked Sendable {
    public let burst: Int
    public let perMinute: Int
    public static let maxClients = 20_000

    private struct Bucket {
        var tokens: Double
        var at: Double
    }

    private let lock = NSLock()
    private var buckets: [String: Bucket] = [:]

    /// `perMinute` 0: no limit.
    public init(burst: Int, perMinute: Int) {
        self.burst = max(1, burst)
        self.perMinute = max(0, perMinute)
    }

    /// A budget that never refuses.
    public static let unlimited = ClientBudget(burst: 1, perMinute: 0)

    /// Takes one search from `client`'s budget at `now` (seconds): nil when there was one, else the
    /// whole seconds until there is. The empty client (a search made outside a request) is not limited.
    public func take(client: String, now: Double) -> Int? {
        guard perMinute > 0, !client.isEmpty else { return nil }
        let rate = Double(perMinute) / 60
        return lock.withLock {
            var bucket = buckets[client] ?? Bucket(tokens: Double(burst), at: now)
            if buckets[client] == nil, buckets.count >= Self.maxClients { makeRoom(now: now, rate: rate) }
            bucket.tokens = min(Double(burst), bucket.tokens + max(0, now - bucket.at) * rate)
            bucket.at = now
            guard bucket.tokens >= 1 else {
                buckets[client] = bucket
                return max(1, Int(exactly: ((1 - bucket.tokens) / rate).rounded(.up)) ?? 60)
            }
            bucket.tokens -= 1
            buckets[client] = bucket
            return nil
        }
    }

    /// Clients tracked now.
    public var clientCount: Int { lock.withLock { buckets.count } }

    private func makeRoom(now: Double, rate: Double) {
        let full = Double(burst)
        buckets = buckets.filter { _, bucket in
            let refilled: Double = bucket.tokens + max(0, now - bucket.at) * rate
            return refilled < full
        }
        if buckets.count >= Self.maxClients { buckets.removeAll(keepingCapacity: true) }
    }
}

/// Who the current request comes from, for limits per client (`ClientBudget`, the password checks'
/// queue): the HTTP layer sets it for each request's task; empty outside a request (the CLI, start-up).
public enum RequestClient {
    @TaskLocal public static var address: String = ""
}
