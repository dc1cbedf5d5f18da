import KioskEditions
import KioskRPC
import NIOConcurrencyHelpers
import Prometheus
import KioskConfig
import KioskFiles

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

    private let xmlrpcRequests: Family<Counter>
    private let xmlrpcDuration: Family<DurationHistogram>
    private let httpRequests: Family<Counter>
    private let httpDuration: Family<DurationHistogram>
    private let signInFailures: Family<Counter>
    private let demoGrants: Family<Counter>
    private let issueDownloads: Family<Counter>
    private let fileDownloadsStarted: Family<Counter>
    private let fileDownloadsCompleted: Family<Counter>
    private let fileBytesSent: Family<Counter>
    private let databaseDuration: Family<DurationHistogram>
    private let databaseErrors: Family<Counter>
    private let configurationReloads: Family<Counter>
    private let unknownSections: Family<Counter>
    private let answerCache: Family<Counter>

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

        xmlrpcRequests = Family(registry, .counter(name(
            "xmlrpc_requests", "total", "XML-RPC methods executed, by method and fault code (none: success); system.multicall entries count one each.")))
        xmlrpcDuration = Family(registry, .histogram(name(
            "xmlrpc_request_duration", "seconds", "Time to execute an XML-RPC method, by method and fault code."), Self.latencyBuckets))
        httpRequests = Family(registry, .counter(name(
            "http_requests", "total", "HTTP requests answered, by route pattern, method and status.")))
        httpDuration = Family(registry, .histogram(name(
            "http_request_duration", "seconds", "Time to answer an HTTP request (until the handler returned the response), by route pattern and method."),
            Self.latencyBuckets))
        signInFailures = Family(registry, .counter(name(
            "sign_in_failures", "total", "Refused reader sign-ins (registrar, consumirDemo, hashQuiosc): wrong_credentials (fault 6) or locked_out (fault 7).")))
        demoGrants = Family(registry, .counter(name(
            "demo_grants", "total", "consumirDemo answers by app: granted or refused (quota used up).")))
        issueDownloads = Family(registry, .counter(name(
            "issue_downloads", "total", "Issues handed out by getEdicio (recorded downloads), by app.")))
        fileDownloadsStarted = Family(registry, .counter(name(
            "file_downloads_started", "total", "Signed-link file responses started (200 or 206 with a body), by kind: bundle or page.")))
        fileDownloadsCompleted = Family(registry, .counter(name(
            "file_downloads_completed", "total", "Signed-link file responses whose body was sent completely, by kind.")))
        fileBytesSent = Family(registry, .counter(name(
            "file_sent", "bytes_total", "Body bytes sent for signed-link files, by kind.")))
        databaseDuration = Family(registry, .histogram(name(
            "database_duration", "seconds", "Time spent in store calls, by operation."), Self.databaseBuckets))
        databaseErrors = Family(registry, .counter(name(
            "database_errors", "total", "Store calls that failed, by operation.")))
        configurationReloads = Family(registry, .counter(name(
            "configuration_reloads", "total", "Configuration reloads on SIGHUP, by outcome: ok or failed.")))

        unknownSections = Family(registry, .counter(name(
            "web_kiosk_unknown_sections", "total",
            "hashQuiosc calls whose seccioQ named no section or alias of the app's web kiosk (the default section was opened), by app.")))

        answerCache = Family(registry, .counter(name(
            "answer_cache", "total",
            "Catalogue answers found kept (hit) or made (miss), by method (getEdicio.pagines: the signed page list; "
                + "getEdicio.offer and getEdicio.issue: the catalogue reads of getEdicio).")))

        for reason in ["wrong_credentials", "locked_out"] { _ = signInFailures.counter(["reason": reason]) }
        for method in ["getEdicions", "getDarrersEdicio", "getEdicio.pagines", "getEdicio.offer", "getEdicio.issue"] {
            for result in ["hit", "miss"] { _ = answerCache.counter(["method": method, "result": result]) }
        }
        for kind in FileKind.allCases {
            _ = fileDownloadsStarted.counter(["kind": kind.rawValue])
            _ = fileDownloadsCompleted.counter(["kind": kind.rawValue])
            _ = fileBytesSent.counter(["kind": kind.rawValue])
        }
        for outcome in ["ok", "failed"] { _ = configurationReloads.counter(["outcome": outcome]) }
    }

    // MARK: Recording

    /// One executed XML-RPC method (the dispatcher's `observer`).
    package func observeXMLRPC(method: String, faultCode: Int?, seconds: Double) {
        let labels: KeyValuePairs = ["method": method, "fault_code": faultCode.map(String.init) ?? "none"]
        xmlrpcRequests.counter(labels).increment()
        xmlrpcDuration.histogram(labels).record(.seconds(max(0, seconds)))
        switch faultCode {
        case 6: signInFailures.counter(["reason": "wrong_credentials"]).increment()
        case 7: signInFailures.counter(["reason": "locked_out"]).increment()
        default: break
        }
    }

    /// One answered HTTP request. `route` is the router's pattern (e.g. `/files/**`), never the raw path.
    package func observeHTTP(route: String, method: String, status: Int, duration: Duration) {
        httpSeries(route: route, method: method, status: status).observe(duration)
    }

    /// The series `observeHTTP` records into for one route, method and status, found once by a caller
    /// that records them often.
    package func httpSeries(route: String, method: String, status: Int) -> HTTPSeries {
        HTTPSeries(requests: httpRequests.counter(["route": route, "method": method, "status": String(status)]),
                   duration: httpDuration.histogram(["route": route, "method": method]))
    }

    /// The HTTP request counter and duration histogram of one route, method and status.
    package struct HTTPSeries: Sendable {
        let requests: Counter
        let duration: DurationHistogram
        package func observe(_ elapsed: Duration) {
            requests.increment()
            duration.record(elapsed)
        }
    }

    package func demoConsumed(appKey: String, granted: Bool) {
        demoGrants.counter(["app": appKey, "outcome": granted ? "granted" : "refused"]).increment()
    }

    package func issueDownloaded(appKey: String) {
        issueDownloads.counter(["app": appKey]).increment()
    }

    package enum FileKind: String, CaseIterable, Sendable {
        case bundle, page
        /// Bundles are the `.zip` files; everything else under the editions directory is a page file.
        package init(path: String) { self = path.hasSuffix(".zip") ? .bundle : .page }
    }

    package func fileDownloadStarted(_ kind: FileKind) { fileDownloadsStarted.counter(["kind": kind.rawValue]).increment() }
    package func fileDownloadCompleted(_ kind: FileKind) { fileDownloadsCompleted.counter(["kind": kind.rawValue]).increment() }
    package func fileBytesSent(_ kind: FileKind, _ bytes: Int) {
        guard bytes > 0 else { return }
        fileBytesSent.counter(["kind": kind.rawValue]).increment(by: Int64(bytes))
    }

    package func bundleBuilt(duration: Duration) {
        bundleBuilds.increment()
        bundleBuildDuration.record(duration)
    }

    package func observeDatabase(operation: String, duration: Duration, failed: Bool) {
        databaseDuration.histogram(["operation": operation]).record(duration)
        if failed { databaseErrors.counter(["operation": operation]).increment() }
    }

    package func configurationReloaded(ok: Bool) {
        configurationReloads.counter(["outcome": ok ? "ok" : "failed"]).increment()
    }

    package func unknownSection(appKey: String) {
        unknownSections.counter(["app": appKey]).increment()
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

/// One metric name with labels: its series, remembered by label values so that recording costs a
/// dictionary look-up under a lock, not the registry's name and label validation.
private final class Family<Metric: AnyObject & Sendable>: Sendable {
    package enum Kind: @unchecked Sendable {   // MetricNameDescriptor is a plain value of strings.
        case counter(MetricNameDescriptor)
        case histogram(MetricNameDescriptor, [Duration])
    }

    private let registry: PrometheusCollectorRegistry
    private let kind: Kind
    private let series = NIOLockedValueBox<[[String]: Metric]>([:])

    package init(_ registry: PrometheusCollectorRegistry, _ kind: Kind) {
        self.registry = registry
        self.kind = kind
    }

    package func get(_ labels: KeyValuePairs<String, String>) -> Metric {
        let values = labels.map(\.value)
        if let metric = series.withLockedValue({ $0[values] }) { return metric }
        let pairs = labels.map { ($0.key, $0.value) }
        let made: AnyObject
        switch kind {
        case .counter(let descriptor): made = registry.makeCounter(descriptor: descriptor, labels: pairs)
        case .histogram(let descriptor, let buckets):
            made = registry.makeDurationHistogram(descriptor: descriptor, labels: pairs, buckets: buckets)
        }
        let metric = made as! Metric
        series.withLockedValue { $0[values] = metric }
        return metric
    }
}

extension Family where Metric == Counter {
    func counter(_ labels: KeyValuePairs<String, String>) -> Counter { get(labels) }
}

extension Family where Metric == DurationHistogram {
    func histogram(_ labels: KeyValuePairs<String, String>) -> DurationHistogram { get(labels) }
}

/// The wire methods' events, counted. The app key is one the configuration lists (`hashQuiosc` checks
/// it first); the unknown section name itself is logged, never used as a label.
extension KioskMetrics: KioskRPCObserver {
    package func unknownSection(appKey: String, section: String) { unknownSection(appKey: appKey) }
    package func answerCache(method: String, hit: Bool) {
        answerCache.counter(["method": method, "result": hit ? "hit" : "miss"]).increment()
    }
}

/// Bundle builds, counted and timed as the bundle service reports them.
extension KioskMetrics: BundleObserver {
    package func bundleBuilt(path: String, bytes: Int64, duration: Duration) { bundleBuilt(duration: duration) }
}
