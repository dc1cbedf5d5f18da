import KioskEditions
import KioskIntegers
import KioskModels
import KioskRPC
import NIOConcurrencyHelpers
import Prometheus

/// The server's metrics, in one Prometheus registry that is passed explicitly (never a process-wide
/// global), so that every test can have its own. `serve` also bootstraps swift-metrics' `MetricsSystem`
/// with this registry, so metrics of libraries that use swift-metrics land in the same `/metrics`.
///
/// Names follow the Prometheus conventions: the `kiosk_` prefix, `_total` for counters, base units
/// (`_seconds`, `_bytes`), and labels of bounded cardinality only (method names the server registered,
/// fault codes, route patterns, configured app keys; never a client's free text).
package final class KioskMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry

    // Fixed series, created up front so they are scraped (as 0) before anything happens.
    package let httpRequestsInFlight: Gauge
    package let httpConnectionsOpen: Gauge
    package let httpConnectionsTotal: Counter
    package let bundleBuilds: Counter
    package let bundleBuildDuration: DurationHistogram
    package let rpcAnsweredOnConnection: Counter
    package let catalogueListenerUp: Gauge
    package let catalogueListenerLosses: Counter
    package let webhookDeliveryDuration: DurationHistogram
    package let webhooksWaiting: Gauge
    package let webhookQueueAge: Gauge
    package let pushFanOutDuration: DurationHistogram

    private let xmlrpcCalls: Family<XMLRPCOutcome, TimedSeries>
    private let httpRequests: Family<HTTPOutcome, TimedSeries>
    private let signInFailures: Family<String, Counter>
    private let demoGrants: Family<Pair<String, Bool>, Counter>
    private let issueDownloads: Family<String, Counter>
    private let sightingsUnrecorded: Family<String, Counter>
    private let fileDownloadsStarted: Family<FileKind, Counter>
    private let fileDownloadsCompleted: Family<FileKind, Counter>
    private let fileBytesSent: Family<FileKind, Counter>
    private let databaseDuration: Family<StoreOperation, DurationHistogram>
    private let databaseErrors: Family<StoreOperation, Counter>
    private let configurationReloads: Family<Bool, Counter>
    private let unknownSections: Family<String, Counter>
    private let answerCache: Family<Pair<String, Bool>, Counter>
    private let cacheEvictions: Family<Pair<String, CacheEviction>, Counter>
    private let purchasesRegistered: Family<[String], Counter>
    private let creditsSpent: Family<String, Counter>
    private let storeNotices: Family<[String], Counter>
    private let storeConfirmationsFailed: Family<String, Counter>
    private let webhookDeliveries: Family<String, Counter>
    private let pushSent: Family<[String], Counter>
    private let pushTokensRemoved: Family<String, Counter>

    /// Request and XML-RPC latency buckets (seconds).
    package static let latencyBuckets: [Duration] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
        .map { Duration.seconds($0) }
    /// Database call buckets (seconds): most calls are well under a millisecond.
    package static let databaseBuckets: [Duration] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5]
        .map { Duration.seconds($0) }
    /// Bundle build buckets (seconds).
    package static let bundleBuckets: [Duration] = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]
        .map { Duration.seconds($0) }

    package init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        func name(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(namespace: "kiosk", metricName: name, unitName: unit, helpText: help)
        }
        httpRequestsInFlight = registry.makeGauge(descriptor: name(
            "http_requests_in_flight", "", "HTTP requests being answered (headers received; until a streamed or file body is sent, or an answer in memory is handed to the connection)."))
        httpConnectionsOpen = registry.makeGauge(descriptor: name(
            "http_connections_open", "", "Open client connections (HTTP/1.1 keep-alive included, TLS or not)."))
        httpConnectionsTotal = registry.makeCounter(descriptor: name(
            "http_connections", "total", "Client connections accepted since start."))
        bundleBuilds = registry.makeCounter(descriptor: name(
            "bundle_builds", "total", "Issue ZIP bundles built by this process."))
        bundleBuildDuration = registry.makeDurationHistogram(descriptor: name(
            "bundle_build_duration", "seconds", "Time to build an issue's ZIP bundle."), buckets: Self.bundleBuckets)
        rpcAnsweredOnConnection = registry.makeCounter(descriptor: name(
            "rpc_answered_on_connection", "total",
            "XML-RPC calls answered from a kept answer on the connection's event loop, without the router (also counted in the HTTP, XML-RPC and answer-cache series)."))

        catalogueListenerUp = registry.makeGauge(descriptor: name(
            "catalogue_listener_up", "",
            "PostgreSQL: 1 while the connection listening for catalogue changes is up (the version known at once), 0 while every call reads it."))
        catalogueListenerLosses = registry.makeCounter(descriptor: name(
            "catalogue_listener_losses", "total", "PostgreSQL: times the connection listening for catalogue changes was lost."))

        let xmlrpcRequests = name(
            "xmlrpc_requests", "total", "XML-RPC methods executed, by method and fault code (none: success); system.multicall entries count one each.")
        let xmlrpcDuration = name(
            "xmlrpc_request_duration", "seconds", "Time to execute an XML-RPC method, by method and fault code.")
        xmlrpcCalls = Family { outcome in
            let labels = [("method", outcome.method), ("fault_code", outcome.faultCode.map(String.init) ?? "none")]
            return TimedSeries(requests: registry.makeCounter(descriptor: xmlrpcRequests, labels: labels),
                               duration: registry.makeDurationHistogram(descriptor: xmlrpcDuration, labels: labels, buckets: Self.latencyBuckets))
        }
        let httpRequests = name(
            "http_requests", "total", "HTTP requests answered, by route pattern, method and status.")
        let httpDuration = name(
            "http_request_duration", "seconds", "Time to answer an HTTP request (until the handler returned the response), by route pattern and method.")
        self.httpRequests = Family { outcome in
            TimedSeries(
                requests: registry.makeCounter(descriptor: httpRequests, labels: [
                    ("route", outcome.route), ("method", outcome.method), ("status", String(outcome.status))]),
                duration: registry.makeDurationHistogram(descriptor: httpDuration, labels: [
                    ("route", outcome.route), ("method", outcome.method)], buckets: Self.latencyBuckets))
        }
        signInFailures = .counters(registry, name(
            "sign_in_failures", "total", "Refused reader sign-ins (registrar, consumirDemo, hashQuiosc): wrong_credentials (fault 6) or locked_out (fault 7).")
        ) { [("reason", $0)] }
        demoGrants = .counters(registry, name(
            "demo_grants", "total", "consumirDemo answers by app: granted or refused (quota used up).")
        ) { [("app", $0.first), ("outcome", $0.second ? "granted" : "refused")] }
        sightingsUnrecorded = .counters(registry, name(
            "activity_unrecorded", "total", "Identity keys the listings saw but did not record: the app already had its most for the day.")
        ) { [("app", $0)] }
        issueDownloads = .counters(registry, name(
            "issue_downloads", "total", "Issues handed out by getEdicio (recorded downloads), by app.")
        ) { [("app", $0)] }
        fileDownloadsStarted = .counters(registry, name(
            "file_downloads_started", "total", "Signed-link file responses started (200 or 206 with a body), by kind: bundle or page.")
        ) { [("kind", $0.rawValue)] }
        fileDownloadsCompleted = .counters(registry, name(
            "file_downloads_completed", "total", "Signed-link file responses whose body was sent completely, by kind.")
        ) { [("kind", $0.rawValue)] }
        fileBytesSent = .counters(registry, name(
            "file_sent", "bytes_total", "Body bytes sent for signed-link files, by kind.")
        ) { [("kind", $0.rawValue)] }
        let databaseDuration = name("database_duration", "seconds", "Time spent in store calls, by operation.")
        self.databaseDuration = Family { operation in
            registry.makeDurationHistogram(descriptor: databaseDuration, labels: [("operation", operation.name)], buckets: Self.databaseBuckets)
        }
        databaseErrors = .counters(registry, name(
            "database_errors", "total", "Store calls that failed, by operation.")
        ) { [("operation", $0.name)] }
        configurationReloads = .counters(registry, name(
            "configuration_reloads", "total", "Configuration reloads on SIGHUP, by outcome: ok or failed.")
        ) { [("outcome", $0 ? "ok" : "failed")] }
        unknownSections = .counters(registry, name(
            "web_kiosk_unknown_sections", "total",
            "hashQuiosc calls whose seccioQ named no section or alias of the app's web kiosk (the default section was opened), by app.")
        ) { [("app", $0)] }
        purchasesRegistered = .counters(registry, name(
            "store_purchases_registered", "total", "Store purchases apps registered or restored (verified and stored), by app, store and kind.")
        ) { [("app", $0[0]), ("store", $0[1]), ("kind", $0[2])] }
        creditsSpent = .counters(registry, name(
            "store_credits_spent", "total", "Issues opened with a pack's credit (bescanviarCredit), by app.")
        ) { [("app", $0)] }
        storeNotices = .counters(registry, name(
            "store_notices", "total", "Store server notifications verified, by app, store and outcome: applied, recorded (changed nothing) or duplicate.")
        ) { [("app", $0[0]), ("store", $0[1]), ("outcome", $0[2])] }
        webhookDeliveries = .counters(registry, name(
            "webhook_deliveries", "total", "Tries at delivering an event to a webhook endpoint, by outcome: delivered, gone (410), throttled (429, 503), failed.")
        ) { [("outcome", $0)] }
        webhookDeliveryDuration = registry.makeDurationHistogram(descriptor: name(
            "webhook_delivery_duration", "seconds", "Time of a try at delivering an event to a webhook endpoint, answer included."),
            buckets: Self.latencyBuckets)
        webhooksWaiting = registry.makeGauge(descriptor: name(
            "webhook_deliveries_waiting", "", "Webhook deliveries waiting to be tried, due or not (all instances)."))
        webhookQueueAge = registry.makeGauge(descriptor: name(
            "webhook_queue_age", "seconds", "How long the oldest due webhook delivery has waited (0: none due)."))
        pushSent = .counters(registry, name(
            "push_sent", "total", "Devices sent a push notification, by service (apns, fcm) and outcome: sent, dead_token, failed.")
        ) { [("service", $0[0]), ("outcome", $0[1])] }
        pushTokensRemoved = .counters(registry, name(
            "push_tokens_removed", "total", "Push registrations removed because the service called their token dead, by service.")
        ) { [("service", $0)] }
        pushFanOutDuration = registry.makeDurationHistogram(descriptor: name(
            "push_fanout_duration", "seconds", "Time from an issue's publication to the end of its push fan-out (every batch sent)."),
            buckets: Self.bundleBuckets)
        storeConfirmationsFailed = .counters(registry, name(
            "store_confirmations_failed", "total", "Grants a store was not told of (Google acknowledgement or consumption), retried at the purchase's next word, by store.")
        ) { [("store", $0)] }
        answerCache = .counters(registry, name(
            "answer_cache", "total",
            "Catalogue answers found kept (hit) or made (miss), by method (getEdicio.pagines: the signed page list; "
                + "getEdicio.offer and getEdicio.issue: the catalogue reads of getEdicio).")
        ) { [("method", $0.first), ("result", $0.second ? "hit" : "miss")] }

        cacheEvictions = .counters(registry, name(
            "cache_evictions", "total",
            "Values dropped from a version-keyed cache (answers: the kept XML-RPC answers; catalogue_reads: getEdicio's "
                + "and hashQuiosc's catalogue reads), by cache and reason (full, newer_version).")
        ) { [("cache", $0.first), ("reason", $0.second.rawValue)] }

        for reason in ["wrong_credentials", "locked_out"] { _ = signInFailures[reason] }
        for cache in ["answers", "catalogue_reads"] {
            for reason in [CacheEviction.full, .newerVersion] { _ = cacheEvictions[Pair(cache, reason)] }
        }
        for method in ["getEdicions", "getDarrersEdicio", "getEdicio.pagines", "getEdicio.offer", "getEdicio.issue"] {
            for hit in [true, false] { _ = answerCache[Pair(method, hit)] }
        }
        for kind in FileKind.allCases {
            _ = fileDownloadsStarted[kind]
            _ = fileDownloadsCompleted[kind]
            _ = fileBytesSent[kind]
        }
        for ok in [true, false] { _ = configurationReloads[ok] }
    }

    // MARK: Recording

    /// One executed XML-RPC method (the dispatcher's `observer`).
    package func observeXMLRPC(method: String, faultCode: Int?, seconds: Double) {
        xmlrpcCalls[XMLRPCOutcome(method: method, faultCode: faultCode)].observe(.seconds(max(0, seconds)))
        switch faultCode {
        case 6: signInFailures["wrong_credentials"].increment()
        case 7: signInFailures["locked_out"].increment()
        default: break
        }
    }

    /// One answered HTTP request. `route` is the router's pattern (e.g. `/files/**`), never the raw path.
    package func observeHTTP(route: String, method: String, status: Int, duration: Duration) {
        httpSeries(route: route, method: method, status: status).observe(duration)
    }

    /// The series `observeHTTP` records into for one route, method and status, found once by a caller
    /// that records them often.
    package func httpSeries(route: String, method: String, status: Int) -> TimedSeries {
        httpRequests[HTTPOutcome(route: route, method: method, status: status)]
    }

    /// A request counter and a duration histogram recorded together (HTTP requests, XML-RPC calls).
    package struct TimedSeries: Sendable {
        let requests: Counter
        let duration: DurationHistogram
        package func observe(_ elapsed: Duration) {
            requests.increment()
            duration.record(elapsed)
        }
    }

    package func demoConsumed(appKey: String, granted: Bool) {
        demoGrants[Pair(appKey, granted)].increment()
    }

    package func sightingUnrecorded(appKey: String) {
        sightingsUnrecorded[appKey].increment()
    }

    package func issueDownloaded(appKey: String) {
        issueDownloads[appKey].increment()
    }

    package enum FileKind: String, CaseIterable, Sendable {
        case bundle, page
        /// Bundles are the `.zip` files; everything else under the editions directory is a page file.
        package init(path: String) { self = path.hasSuffix(".zip") ? .bundle : .page }
    }

    package func fileDownloadStarted(_ kind: FileKind) { fileDownloadsStarted[kind].increment() }
    package func fileDownloadCompleted(_ kind: FileKind) { fileDownloadsCompleted[kind].increment() }
    package func fileBytesSent(_ kind: FileKind, _ bytes: Int) {
        guard bytes > 0 else { return }
        fileBytesSent[kind].increment(by: Int64(widening: bytes))
    }

    package func bundleBuilt(duration: Duration) {
        bundleBuilds.increment()
        bundleBuildDuration.record(duration)
    }

    package func configurationReloaded(ok: Bool) {
        configurationReloads[ok].increment()
    }

    package func unknownSection(appKey: String) {
        unknownSections[appKey].increment()
    }

    // MARK: Exposition

    /// The Prometheus text exposition format (version 0.0.4).
    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    package func exposition() -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16 << 10)
        registry.emit(into: &buffer)
        return buffer
    }
}

/// The series of one metric, by what tells them apart (`Key`, turned into label values once): after the
/// first use of a key, recording costs a dictionary look-up under a lock, not the registry's name and
/// label validation, nor an array of label values per call.
private final class Family<Key: Hashable & Sendable, Series: Sendable>: Sendable {
    private let make: @Sendable (Key) -> Series
    private let series = NIOLockedValueBox<[Key: Series]>([:])

    init(_ make: @escaping @Sendable (Key) -> Series) { self.make = make }

    subscript(key: Key) -> Series {
        series.withLockedValue { table in
            if let found = table[key] { return found }
            let made = make(key)
            table[key] = made
            return made
        }
    }
}

extension Family where Series == Counter {
    /// Counters named by `descriptor`, labelled by `labels(key)`.
    static func counters(_ registry: PrometheusCollectorRegistry, _ descriptor: MetricNameDescriptor,
                         labels: @escaping @Sendable (Key) -> [(String, String)]) -> Family {
        Family { registry.makeCounter(descriptor: descriptor, labels: labels($0)) }
    }
}

/// The labels of an XML-RPC call's series.
private struct XMLRPCOutcome: Hashable, Sendable {
    var method: String
    /// nil: success.
    var faultCode: Int?
}

/// The labels of an HTTP request's series.
private struct HTTPOutcome: Hashable, Sendable {
    var route: String
    var method: String
    var status: Int
}

/// Two label values that select a series together.
private struct Pair<First: Hashable & Sendable, Second: Hashable & Sendable>: Hashable, Sendable {
    var first: First
    var second: Second
    init(_ first: First, _ second: Second) { self.first = first; self.second = second }
}

/// The wire methods' events, counted. The app key is one the configuration lists (`hashQuiosc` checks
/// it first); the unknown section name itself is logged, never used as a label.
extension KioskMetrics: KioskRPCObserver {
    package func unknownSection(appKey: String, section: String) { unknownSection(appKey: appKey) }
}

/// The kept answers' and catalogue reads' lookups and evictions (`VersionKeyedCache`).
extension KioskMetrics: CacheObserver {
    package func cacheLookup(cache: String, lookup: String, hit: Bool) {
        answerCache[Pair(lookup, hit)].increment()
    }

    package func cacheEvicted(cache: String, entries: Int, reason: CacheEviction) {
        cacheEvictions[Pair(cache, reason)].increment(by: Int64(widening: entries))
    }
}

/// Bundle builds, counted and timed as the bundle service reports them.
extension KioskMetrics: BundleObserver {
    package func bundleBuilt(path: String, bytes: Int64, duration: Duration) { bundleBuilt(duration: duration) }
}

/// A plain value of strings (name, unit, help), kept by the families that make series on first use.
extension MetricNameDescriptor: @retroactive @unchecked Sendable {}

extension KioskMetrics: StoreObserver, KioskServiceObserver {
    package func storeOperation(_ operation: StoreOperation, duration: Duration, failed: Bool) {
        databaseDuration[operation].record(duration)
        if failed { databaseErrors[operation].increment() }
    }

    package func purchaseRegistered(appKey: String, store: Storefront, kind: ProductKind) {
        purchasesRegistered[[appKey, store.rawValue, kind.rawValue]].increment()
    }

    package func creditSpent(appKey: String) { creditsSpent[appKey].increment() }

    package func storeNoticeApplied(appKey: String, store: Storefront, outcome: KioskService.NoticeOutcome) {
        storeNotices[[appKey, store.rawValue, outcome.rawValue]].increment()
    }

    package func storeConfirmationFailed(appKey: String, store: Storefront, error: String) {
        storeConfirmationsFailed[store.rawValue].increment()
    }

    /// A try at a webhook delivery ended with `outcome` (`delivered`, `gone`, `throttled`, `failed`).
    package func webhookTried(outcome: String, duration: Duration) {
        webhookDeliveries[outcome].increment()
        webhookDeliveryDuration.record(duration)
    }

    /// A device's push ended with `outcome` (`sent`, `dead_token`, `failed`) at `service` (`apns`, `fcm`).
    package func pushed(service: String, outcome: String) {
        pushSent[[service, outcome]].increment()
    }

    /// `count` registrations removed for tokens `service` called dead.
    package func pushTokensRemoved(service: String, count: Int) {
        pushTokensRemoved[service].increment(by: Int64(widening: count))
    }

    package func webhookBacklog(waiting: Int, oldestDueAge: Duration?) {
        webhooksWaiting.set(to: Double(waiting))
        webhookQueueAge.set(to: oldestDueAge.map { Double($0.components.seconds) } ?? 0)
    }

    package func catalogueListener(connected: Bool) {
        catalogueListenerUp.set(to: connected ? 1.0 : 0.0)
        if !connected { catalogueListenerLosses.increment() }
    }
}
