import Foundation
import KioskTestSupport
import Hummingbird
import HummingbirdTesting
import KioskEditions
import KioskModels
import KioskSQLite
import Logging
import NIOCore
import Testing
@testable import KioskServer
@testable import KioskWiring
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles
@testable import KioskPasswords

/// `GET /metrics` and what it counts, each test on its own registry (no process-wide bootstrap).
@Suite struct MetricsTests {
    /// A kiosk whose runtime records into `metrics`, served with the HTTP metrics and `/metrics`.
    struct MeteredKiosk {
        let kiosk: TestKiosk
        let metrics: KioskMetrics

        init(_ adjust: (inout KioskConfiguration) -> Void = { _ in }) async throws {
            let metrics = KioskMetrics()
            self.metrics = metrics
            kiosk = try await TestKiosk(storeObserver: metrics, adjust)
            var factory = kiosk.factory
            factory.metrics = metrics
            kiosk.runtime.replace(with: try factory.makeRuntime(kiosk.configuration))
        }

        func withServer<Value: Sendable>(_ body: @Sendable (_ port: Int) async throws -> Value) async throws -> Value {
            let app = try buildApplication(runtime: kiosk.runtime, host: "127.0.0.1", port: 0, logger: Logger(label: "test"),
                                           metrics: metrics)
            return try await app.test(.live) { client in try await body(client.port!) }
        }

        var scrape: Scrape { Scrape(String(decoding: metrics.exposition(), as: UTF8.self)) }
    }

    /// A parsed Prometheus text exposition: series by name and (sorted) labels.
    struct Scrape {
        var series: [String: Double] = [:]
        var text: String

        init(_ text: String) {
            self.text = text
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
                let key = line[..<space]
                if let brace = key.firstIndex(of: "{") {
                    var labels: [String: String] = [:]
                    for match in key[brace...].matches(of: #/(\w+)="([^"]*)"/#) { labels[String(match.1)] = String(match.2) }
                    series[Self.key(String(key[..<brace]), labels)] = value
                } else {
                    series[String(key)] = value
                }
            }
        }

        static func key(_ name: String, _ labels: [String: String]) -> String {
            labels.isEmpty ? name : name + "{" + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\($0.value)\"" }.joined(separator: ",") + "}"
        }

        /// The series' value; 0 when absent (a counter not yet created).
        subscript(_ name: String, _ labels: [String: String] = [:]) -> Double { series[Self.key(name, labels)] ?? 0 }
        func has(_ name: String, _ labels: [String: String] = [:]) -> Bool { series[Self.key(name, labels)] != nil }
    }

    static func xmlrpc(_ method: String, _ fault: String = "none") -> [String: String] { ["method": method, "fault_code": fault] }

    @Test func scrapedCountersMoveAfterRealCalls() async throws {
        let metered = try await MeteredKiosk()
        try await metered.kiosk.addIssue(edition: 1, date: "2025-06-01")
        try await metered.kiosk.addUser("anna", password: "right-password")
        let result = try await metered.withServer { port in
            try await python(port, """
                import urllib.request
                def scrape():
                    with urllib.request.urlopen("http://127.0.0.1:\(port)/metrics") as r:
                        return [r.status, r.headers["Content-Type"], r.read().decode()]
                before = scrape()
                p.epquiosc.getEdicions("quiosc", "")
                wrong = fault(lambda: p.epusuaris.registrar("quiosc", "dev-1", "anna", "wrong", {}, "iOS"))
                me = p.epusuaris.registrar("quiosc", "dev-1", "", "", {}, "iOS")
                grants = [p.epusuaris.consumirDemo("quiosc", "dev-1", me["iden_key"], {}, "iOS", 0)["servir_demo"] for _ in range(4)]
                issue = p.epquiosc.getEdicio("quiosc", me["iden_key"], "1", "2025-06-01", "", "iOS")
                not_offered = fault(lambda: p.epquiosc.getEdicio("presencia", me["iden_key"], "1", "2025-06-01", "", "iOS"))
                multi = p.system.multicall([{"methodName": "epquiosc.getEdicions", "params": ["quiosc", ""]},
                                            {"methodName": "system.listMethods", "params": []}])
                after = scrape()
                result = {"before": before, "after": after, "wrong": wrong, "grants": grants,
                          "pages": len(issue["pagines"]), "not_offered": not_offered}
                """)
        }.value as! [String: Any]
        #expect((result["wrong"] as! [String: Any])["faultCode"] as! Int == 6)
        #expect(result["grants"] as! [String] == ["1", "1", "1", "0"])
        #expect(result["pages"] as! Int == 3)
        #expect((result["not_offered"] as! [String: Any])["faultCode"] as! Int == 3)

        let beforeResponse = result["before"] as! [Any]
        #expect(beforeResponse[0] as! Int == 200)
        #expect(beforeResponse[1] as! String == "text/plain; version=0.0.4; charset=utf-8")
        let before = Scrape(beforeResponse[2] as! String)
        let after = Scrape((result["after"] as! [Any])[2] as! String)

        // Nothing had been called before the first scrape; the series that exist up front are 0.
        #expect(!before.has("kiosk_xmlrpc_requests_total", Self.xmlrpc("epquiosc.getEdicions")))
        #expect(before.has("kiosk_sign_in_failures_total", ["reason": "wrong_credentials"]))
        #expect(before["kiosk_sign_in_failures_total", ["reason": "wrong_credentials"]] == 0)
        #expect(before["kiosk_bundle_builds_total"] == 0)
        #expect(before["kiosk_http_requests_in_flight"] == 1)        // the scrape itself
        #expect(before["kiosk_http_connections_open"] >= 1)
        #expect(before.text.contains("# TYPE kiosk_bundle_build_duration_seconds histogram"))
        #expect(before.text.contains("# HELP kiosk_http_connections_open Open client connections"))

        // XML-RPC methods by method and fault code (multicall entries count one each, and the multicall itself).
        #expect(after["kiosk_xmlrpc_requests_total", Self.xmlrpc("epquiosc.getEdicions")] == 2)
        #expect(after["kiosk_xmlrpc_requests_total", Self.xmlrpc("epusuaris.registrar", "6")] == 1)
        #expect(after["kiosk_xmlrpc_requests_total", Self.xmlrpc("epusuaris.registrar")] == 1)
        #expect(after["kiosk_xmlrpc_requests_total", Self.xmlrpc("epusuaris.consumirDemo")] == 4)
        #expect(after["kiosk_xmlrpc_requests_total", Self.xmlrpc("epquiosc.getEdicio")] == 1)
        #expect(after["kiosk_xmlrpc_requests_total", Self.xmlrpc("epquiosc.getEdicio", "3")] == 1)
        #expect(after["kiosk_xmlrpc_requests_total", Self.xmlrpc("system.multicall")] == 1)
        #expect(after["kiosk_xmlrpc_requests_total", Self.xmlrpc("system.listMethods")] == 1)
        #expect(after["kiosk_xmlrpc_request_duration_seconds_count", Self.xmlrpc("epusuaris.consumirDemo")] == 4)
        #expect(after["kiosk_xmlrpc_request_duration_seconds_bucket", Self.xmlrpc("epusuaris.consumirDemo").merging(["le": "+Inf"]) { $1 }] == 4)
        #expect(after["kiosk_xmlrpc_request_duration_seconds_sum", Self.xmlrpc("epusuaris.consumirDemo")] > 0)

        // What the calls decided.
        #expect(after["kiosk_sign_in_failures_total", ["reason": "wrong_credentials"]] == 1)
        #expect(after["kiosk_sign_in_failures_total", ["reason": "locked_out"]] == 0)
        #expect(after["kiosk_demo_grants_total", ["app": "quiosc", "outcome": "granted"]] == 3)
        #expect(after["kiosk_demo_grants_total", ["app": "quiosc", "outcome": "refused"]] == 1)
        #expect(after["kiosk_issue_downloads_total", ["app": "quiosc"]] == 1)

        // HTTP by route pattern and status: 10 calls through xmlrpc.client (the multicall is one POST).
        #expect(after["kiosk_http_requests_total", ["route": "/RPC2", "method": "POST", "status": "200"]] == 10)
        #expect(after["kiosk_http_requests_total", ["route": "/metrics", "method": "GET", "status": "200"]] == 1)
        #expect(after["kiosk_http_request_duration_seconds_count", ["route": "/RPC2", "method": "POST"]] == 10)
        #expect(after["kiosk_http_connections_total"] >= 3)

        // Database time, by store operation.
        #expect(after["kiosk_database_duration_seconds_count", ["operation": "consume_demo"]] == 4)
        #expect(after["kiosk_database_duration_seconds_count", ["operation": "record_download"]] == 1)
        #expect(after["kiosk_database_duration_seconds_count", ["operation": "use_demo_grant"]] == 1)
        #expect(after["kiosk_database_duration_seconds_sum", ["operation": "consume_demo"]] > 0)
        #expect(after["kiosk_database_errors_total", ["operation": "consume_demo"]] == 0)
    }

    @Test func lockedOutSignInsAreCountedApart() async throws {
        let metered = try await MeteredKiosk { $0.signIn.maxFailures = 2 }
        try await metered.kiosk.addUser("anna", password: "right-password")
        _ = try await metered.withServer { port in
            try await python(port, """
                result = [fault(lambda: p.epusuaris.hashQuiosc("quiosc", "anna", "wrong", "portada"))["faultCode"] for _ in range(3)]
                """)
        }
        let scrape = metered.scrape
        #expect(scrape["kiosk_sign_in_failures_total", ["reason": "wrong_credentials"]] == 2)
        #expect(scrape["kiosk_sign_in_failures_total", ["reason": "locked_out"]] == 1)
        #expect(scrape["kiosk_xmlrpc_requests_total", Self.xmlrpc("epusuaris.hashQuiosc", "7")] == 1)
    }

    @Test func openConnectionsAndRequestsInFlight() async throws {
        let metered = try await MeteredKiosk()
        let result = try await metered.withServer { port in
            try await python(port, """
                import http.client, re, time
                def gauge(name, conn=None):
                    c = conn or http.client.HTTPConnection("127.0.0.1", \(port))
                    c.request("GET", "/metrics")
                    text = c.getresponse().read().decode()
                    if conn is None: c.close()
                    return float(re.search("^" + name + " (\\\\S+)$", text, re.M).group(1))
                baseline = gauge("kiosk_http_connections_open")   # this one, plus any the test harness holds
                held = []
                for _ in range(3):
                    c = http.client.HTTPConnection("127.0.0.1", \(port))
                    c.request("GET", "/healthz")
                    c.getresponse().read()
                    held.append(c)                 # keep-alive: the connection stays open
                def settle(expected, conn=None):
                    # a connection the client just closed is gone once the server has read its end
                    deadline = time.time() + 30
                    value = gauge("kiosk_http_connections_open", conn)
                    while value != expected and time.time() < deadline:
                        time.sleep(0.05)
                        value = gauge("kiosk_http_connections_open", conn)
                    return value
                open_while_held = gauge("kiosk_http_connections_open")
                in_flight = gauge("kiosk_http_requests_in_flight")
                same = settle(baseline + 2, held[0])   # over a held connection: no measuring connection
                for c in held: c.close()
                result = [baseline, open_while_held, in_flight, same, settle(baseline)]
                """)
        }.value as! [Double]
        let baseline = result[0]
        #expect(baseline >= 1)
        #expect(Array(result.dropFirst()) == [baseline + 3, 1, baseline + 2, baseline])
    }

    @Test func aClientThatLeavesMidBodyIsNotAServerError() async throws {
        let metered = try await MeteredKiosk()
        let result = try await metered.withServer { port in
            try await python(port, """
                import base64, http.client, re, socket, time
                for path, account in (("/publish/8/2025-07-01", b"publisher:publisher-secret"), ("/RPC2", b"kiosk:secret")):
                    auth = "Basic " + base64.b64encode(account).decode()
                    s = socket.create_connection(("127.0.0.1", \(port)))
                    s.sendall(("PUT" if path.startswith("/publish") else "POST").encode() + b" " + path.encode()
                              + b" HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: " + auth.encode()
                              + b"\\r\\nContent-Type: text/xml\\r\\nContent-Length: 100000\\r\\n\\r\\n" + b"x" * 1024)
                    time.sleep(0.3)
                    s.close()
                def counts():
                    c = http.client.HTTPConnection("127.0.0.1", \(port))
                    c.request("GET", "/metrics")
                    text = c.getresponse().read().decode()
                    c.close()
                    found = {}
                    for line in text.splitlines():
                        m = re.match(r'kiosk_http_requests_total\\{(.*)\\} (\\S+)$', line)
                        if m:
                            status = re.search(r'status="(\\d+)"', m.group(1)).group(1)
                            found[status] = found.get(status, 0) + float(m.group(2))
                    return found
                deadline = time.time() + 20
                seen = counts()
                while seen.get("499", 0) < 2 and time.time() < deadline:
                    time.sleep(0.1)
                    seen = counts()
                result = seen
                """)
        }.value as! [String: Double]
        #expect(result["500"] == nil, "a client going away is not a server error: \(result)")
        #expect(result["499"] == 2, "both abandoned bodies are counted as 499: \(result)")
    }

    @Test func fileDownloadsAndBytesSentThroughTheRealDelivery() async throws {
        let fixture = try await FileDeliveryTests.Fixture()
        let metered = try await MeteredKiosk()
        var delivery = FileDelivery(directory: fixture.directory, links: fixture.links(.kiosk))
        delivery.clock = TestClock(FileDeliveryTests.now)
        delivery.chunkSize = 16 << 10
        let current = metered.kiosk.runtime.runtime
        metered.kiosk.runtime.replace(with: KioskRuntime(
            configuration: current.configuration, environment: current.environment, dispatcher: current.dispatcher,
            accounts: current.accounts, delivery: delivery, publishing: current.publishing,
            readerSessions: current.readerSessions, console: current.console))
        let router = buildRouter(runtime: metered.kiosk.runtime, metrics: metered.metrics)
        let app = Application(router: router, logger: Logger(label: "test"))

        let bundle = "1/2025-06-30/r1/1-2025-06-30.zip", page = "1/2025-06-30/r1/jpgA/001.jpg"
        let bundleSize = fixture.bytes(bundle).count, pageSize = fixture.bytes(page).count
        let links = fixture.links(.kiosk)
        let bundleURL = links.path(to: bundle, now: FileDeliveryTests.now), pageURL = links.path(to: page, now: FileDeliveryTests.now)
        try await app.test(.live) { client in
            #expect(try await client.execute(uri: bundleURL, method: .get).body.readableBytes == bundleSize)
            #expect(try await client.execute(uri: bundleURL, method: .get, headers: [.range: "bytes=0-99"]).status == .partialContent)
            let head = try await client.execute(uri: bundleURL, method: .head)
            #expect(head.status == .ok)
            let etag = try #require(head.headers[.eTag])
            #expect(try await client.execute(uri: bundleURL, method: .get, headers: [.ifNoneMatch: etag]).status == .notModified)
            #expect(try await client.execute(uri: "/files/bad/0/" + bundle, method: .get).status == .forbidden)
            #expect(try await client.execute(uri: pageURL, method: .get).body.readableBytes == pageSize)
        }
        // The last body's completion is recorded just after its bytes left: let it land.
        try await eventually { metered.scrape["kiosk_http_requests_in_flight"] == 0 }
        let scrape = metered.scrape
        #expect(scrape["kiosk_file_downloads_started_total", ["kind": "bundle"]] == 2)
        #expect(scrape["kiosk_file_downloads_completed_total", ["kind": "bundle"]] == 2)
        #expect(scrape["kiosk_file_sent_bytes_total", ["kind": "bundle"]] == Double(bundleSize + 100))
        #expect(scrape["kiosk_file_downloads_started_total", ["kind": "page"]] == 1)
        #expect(scrape["kiosk_file_downloads_completed_total", ["kind": "page"]] == 1)
        #expect(scrape["kiosk_file_sent_bytes_total", ["kind": "page"]] == Double(pageSize))
        let route = try #require(scrape.series.keys.first { $0.hasPrefix("kiosk_http_requests_total{") && $0.contains("status=\"206\"") })
        #expect(!route.contains("2025-06-30"), "the route label is the pattern, not the path: \(route)")
        #expect(scrape["kiosk_http_requests_in_flight"] == 0)
    }

    @Test func bundleBuildsAreCountedOnceEach() async throws {
        let fixture = try await FileDeliveryTests.Fixture()
        let metrics = KioskMetrics()
        let service = BundleService(directory: fixture.directory, registry: fixture.store, observer: metrics)
        let bundles = service
        try FileManager.default.removeItem(atPath: fixture.directory.absolute("1/2025-06-30/r1/1-2025-06-30.zip"))
        let stale = try #require(try await fixture.store.issueContents(editionID: 1, date: FileDeliveryTests.day))
        let offered = OfferedEdition(
            line: TariffLine(appKey: "quiosc", editionID: 1, order: 1, access: .free),
            edition: Edition(id: 1, publicationID: 1, name: "Nacional", createdOn: IssueDate("2010-03-01")!),
            publicationName: "El Punt Avui")
        // Three concurrent requesters of the missing bundle: one build.
        try await withThrowingTaskGroup(of: BundleInfo.self) { group in
            for _ in 0..<3 { group.addTask { try await bundles.bundle(for: stale, offered: offered) } }
            for try await info in group { #expect(info.size > 0) }
        }
        let fresh = try #require(try await fixture.store.issueContents(editionID: 1, date: FileDeliveryTests.day))
        _ = try await bundles.bundle(for: fresh, offered: offered)          // already there: no build
        let scrape = Scrape(String(decoding: metrics.exposition(), as: UTF8.self))
        #expect(await service.buildCount == 1)
        #expect(scrape["kiosk_bundle_builds_total"] == 1)
        #expect(scrape["kiosk_bundle_build_duration_seconds_count"] == 1)
        #expect(scrape["kiosk_bundle_build_duration_seconds_sum"] > 0)
    }

    @Test func accessIsLoopbackOnlyByDefault() async throws {
        let metered = try await MeteredKiosk()
        #expect(metered.kiosk.configuration.metrics.effectiveLoopbackOnly)
        let result = try await metered.withServer { port in
            try await python(port, """
                import urllib.request, urllib.error
                def get(headers):
                    try:
                        with urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:\(port)/metrics", headers=headers)) as r:
                            return r.status
                    except urllib.error.HTTPError as e:
                        return e.code
                result = [get({}), get({"X-Forwarded-For": "203.0.113.9"}), get({"Forwarded": "for=203.0.113.9"})]
                """)
        }.value as! [Int]
        #expect(result == [200, 403, 403])
    }

    @Test func credentialsProtectTheScrapeWhenConfigured() async throws {
        let hash = try await PasswordHashing().hash("scrape-secret", cost: 4)
        let metered = try await MeteredKiosk {
            $0.metrics.credentials = [.init(username: "prometheus", passwordHash: hash)]
            $0.metrics.loopbackOnly = nil          // not set: with credentials, any peer may scrape
        }
        #expect(!metered.kiosk.configuration.metrics.effectiveLoopbackOnly)
        let result = try await metered.withServer { port in
            try await python(port, """
                import urllib.request, urllib.error, base64
                def get(user=None, headers={}):
                    headers = dict(headers)
                    if user:
                        headers["Authorization"] = "Basic " + base64.b64encode(user.encode()).decode()
                    try:
                        with urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:\(port)/metrics", headers=headers)) as r:
                            return [r.status, ""]
                    except urllib.error.HTTPError as e:
                        return [e.code, e.headers.get("WWW-Authenticate", "")]
                result = [get(), get("prometheus:wrong"), get("kiosk:secret"), get("prometheus:scrape-secret"),
                          get("prometheus:scrape-secret", {"X-Forwarded-For": "203.0.113.9"})]
                """)
        }.value as! [[Any]]
        #expect(result.map { $0[0] as! Int } == [401, 401, 401, 200, 200])
        #expect(result[0][1] as! String == "Basic realm=\"kiosk metrics\"")

        // Both rules apply when both are set.
        let both = try await MeteredKiosk {
            $0.metrics.credentials = [.init(username: "prometheus", passwordHash: hash)]
            $0.metrics.loopbackOnly = true
        }
        let statuses = try await both.withServer { port in
            try await python(port, """
                import urllib.request, urllib.error, base64
                auth = "Basic " + base64.b64encode(b"prometheus:scrape-secret").decode()
                def get(headers):
                    try:
                        with urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:\(port)/metrics", headers=headers)) as r:
                            return r.status
                    except urllib.error.HTTPError as e:
                        return e.code
                result = [get({"Authorization": auth}), get({"Authorization": auth, "X-Forwarded-For": "203.0.113.9"}), get({})]
                """)
        }.value as! [Int]
        #expect(statuses == [200, 403, 401])
    }

    @Test func metricsConfigurationIsValidatedByKey() async throws {
        let directory = temporaryDirectory()
        let open = try writeTestConfiguration(in: directory.appendingPathComponent("open")) {
            $0.replacingOccurrences(of: "  loopback_only: true", with: "  loopback_only: false")
        }
        #expect(throws: ConfigurationError.self) { try KioskConfiguration.load(from: open) }
        do { _ = try KioskConfiguration.load(from: open) } catch {
            #expect("\(error)".contains("metrics.loopback_only: false without metrics.credentials"))
        }
        let badHash = try writeTestConfiguration(in: directory.appendingPathComponent("hash")) {
            $0.replacingOccurrences(of: "  loopback_only: true", with: "  credentials: [{ username: prometheus, password_hash: plain }]")
        }
        do { _ = try KioskConfiguration.load(from: badHash); Issue.record("a plain password was accepted") } catch {
            #expect("\(error)".contains("metrics.credentials[0].password_hash: must be a bcrypt hash"))
        }
        let hash = try await PasswordHashing().hash("scrape-secret", cost: 4)
        let fine = try writeTestConfiguration(in: directory.appendingPathComponent("fine")) {
            $0.replacingOccurrences(of: "  loopback_only: true", with: """
                  credentials:
                    - { username: prometheus, password_hash: "\(hash)" }
                """)
        }
        let configuration = try KioskConfiguration.load(from: fine)
        #expect(configuration.metrics.credentials.map(\.username) == ["prometheus"])
        #expect(configuration.metrics.loopbackOnly == nil)
        #expect(!configuration.metrics.effectiveLoopbackOnly)
        #expect(try KioskConfiguration.load(from: TestKiosk.repositoryRoot + "/Config/kiosk.yaml").metrics.effectiveLoopbackOnly)
    }

    @Test func loopbackPeers() throws {
        let request = { (headers: HTTPFields) in
            Request(head: .init(method: .get, scheme: "http", authority: "x", path: "/metrics", headerFields: headers),
                    body: RequestBody(buffer: ByteBuffer()))
        }
        let plain = request([:])
        #expect(MetricsController.isLoopback(plain, peer: try SocketAddress(ipAddress: "127.0.0.1", port: 1)))
        #expect(MetricsController.isLoopback(plain, peer: try SocketAddress(ipAddress: "127.8.9.10", port: 1)))
        #expect(MetricsController.isLoopback(plain, peer: try SocketAddress(ipAddress: "::1", port: 1)))
        #expect(!MetricsController.isLoopback(plain, peer: try SocketAddress(ipAddress: "10.0.0.1", port: 1)))
        #expect(!MetricsController.isLoopback(plain, peer: try SocketAddress(ipAddress: "2001:db8::1", port: 1)))
        #expect(!MetricsController.isLoopback(plain, peer: nil))
        #expect(!MetricsController.isLoopback(request([.init("X-Forwarded-For")!: "10.0.0.1"]),
                                              peer: try SocketAddress(ipAddress: "127.0.0.1", port: 1)))
    }
}

/// Waits (up to 5 s) until `condition` holds; fails the test otherwise.
func eventually(_ condition: @Sendable () async throws -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let deadline = ContinuousClock.now + .seconds(5)
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition still false after 5 s", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}
