import XMLRPC
import Prometheus
import KioskModels
import KioskConfig
import HTTPTypes
import KioskRPC
import Logging
import NIOCore

/// The XML-RPC calls a connection answers on its own event loop (`KeptAnswerHandler`), without the
/// router: a catalogue call whose answer is kept in memory (`KioskMethods.keptAnswer`), when everything
/// the usual way would check is known at once and agrees.
///
/// That is: `POST` on an XML-RPC path with a declared body of at most `bodyLimit` bytes, nothing that
/// asks for more than an answer (`Expect`, a `Connection` other than `keep-alive`, a chunked body), an `Authorization` header
/// already accepted for the API clients of the store's catalogue version read now
/// (`KioskStore.catalogueVersionAtOnce`), and an answer kept under that same version. Anything else,
/// faults included, goes the usual way, which also keeps the answers. Metrics count such an answer as
/// the router would (HTTP request, method call, answer-cache hit), and with request logging on (debug)
/// each is logged as the router's `LogRequestsMiddleware` logs it: the answers are the same at every level.
package struct KeptRPCAnswers: Sendable {
    /// The runtime in force (`RuntimeBox`).
    package let runtime: RuntimeBox
    /// The router's XML-RPC paths (`KioskConfiguration.rpcRoutes`, fixed at start), with the HTTP
    /// metrics of a `200` answer to a `POST` on each.
    private let paths: [String: KioskMetrics.TimedSeries?]
    private let metrics: KioskMetrics?
    /// The `Server` header the application sets.
    private let serverName: String
    /// Where a request answered here is logged at `debug`, as the router logs every request.
    private let logger: Logger

    package init(runtime: RuntimeBox, paths: [String], metrics: KioskMetrics?, serverName: String, logger: Logger) {
        self.runtime = runtime
        self.paths = Dictionary(paths.map { ($0, metrics?.httpSeries(route: $0, method: "POST", status: 200)) },
                                uniquingKeysWith: { first, _ in first })
        self.metrics = metrics
        self.serverName = serverName
        self.logger = logger
    }

    /// The largest body collected to be answered here.
    package static let bodyLimit = 16 * 1024

    /// Whether a request with this head may be answered here; its body is then collected.
    func mayAnswer(_ request: HTTPRequest) -> Bool {
        guard request.method == .post, let path = request.path, paths[path] != nil else { return false }
        var length: Int?, authorized = false
        for field in request.headerFields {
            switch field.name {
            case .contentLength: length = Int(field.value, radix: 10)
            case .authorization: authorized = true
            case .connection: if field.value.lowercased() != "keep-alive" { return false }
            case .expect, .transferEncoding: return false
            default: continue
            }
        }
        return authorized && (length ?? .max) <= Self.bodyLimit
    }

    /// An `Authorization` header a connection saw accepted, and by which API clients: while the clients
    /// are the same (their accounts unchanged), the same header is accepted again without a look-up.
    package struct Accepted {
        let header: String
        let clients: BasicAuthenticator
    }

    /// The response to the request, if its answer is kept and may be given now (see the type).
    /// `accepted` is the connection's last accepted `Authorization`, checked and updated here.
    func answer(_ request: HTTPRequest, body: ByteBuffer, date: String, accepted: inout Accepted?) -> (head: HTTPResponse, body: ByteBuffer)? {
        let start = ContinuousClock.now
        let runtime = runtime.runtime
        guard body.readableBytes <= runtime.configuration.limits.maxBodyBytes,
              let authorization = request.headerFields.onlyValue(of: .authorization),
              let version = runtime.environment.service.store.catalogueVersionAtOnce(),
              let clients = runtime.accounts.snapshot(ofVersion: version)?.apiClients
        else { return nil }
        let known = accepted.map { $0.header == authorization && $0.clients === clients } ?? false
        guard known || clients.acceptedUsername(authorization: authorization) != nil else { return nil }
        if !known { accepted = Accepted(header: authorization, clients: clients) }
        let encoding = RPCController.charset(of: request.headerFields)
        guard let result = body.withUnsafeReadableBytes({ bytes in
            runtime.dispatcher.respondImmediately(to: bytes, encoding: encoding) { call in
                KioskMethods.keptAnswer(to: call, catalogueVersion: version, env: runtime.environment)
            }
        }) else { return nil }
        logger.debug("Request", metadata: [
            "hb.request.path": .string(request.path ?? ""), "hb.request.method": .string(request.method.rawValue),
            "kiosk.answered_on_connection": "true",
        ])
        if let metrics, let path = request.path, let series = paths[path] ?? nil {
            metrics.rpcAnsweredOnConnection.increment()
            series.observe(start.duration(to: .now))
        }
        let head = HTTPResponse(status: .ok, headerFields: [
            .contentType: RPCController.responseContentType, .contentLength: String(result.body.readableBytes),
            .date: date, .server: serverName,
        ])
        return (head, result.body)
    }
}
