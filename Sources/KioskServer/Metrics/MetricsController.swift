import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore

/// `GET /metrics`: the Prometheus text format, for the scrapers the configuration allows
/// (`metrics.loopback_only`, `metrics.credentials`; both apply when both are set).
///
/// A loopback peer that forwards for someone else (`Forwarded` / `X-Forwarded-For`, i.e. a reverse
/// proxy on the same machine) does not count as loopback.
struct MetricsController {
    let metrics: KioskMetrics
    private let authenticators = AuthenticatorCache()

    init(metrics: KioskMetrics) { self.metrics = metrics }

    func addRoutes(to router: Router<KioskRequestContext>) {
        router.get("/metrics") { request, context in await scrape(request, context: context) }
    }

    func scrape(_ request: Request, context: KioskRequestContext) async -> Response {
        let settings = context.runtime.configuration.metrics
        if settings.effectiveLoopbackOnly, !Self.isLoopback(request, peer: context.remoteAddress) {
            return .text(.forbidden, "/metrics is served to loopback clients only (metrics.loopback_only).\n")
        }
        if !settings.credentials.isEmpty {
            guard await authenticators.authenticator(for: settings.credentials).authenticate(request) != nil else {
                return Response(status: .unauthorized,
                                headers: [.wwwAuthenticate: "Basic realm=\"kiosk metrics\"", .contentType: "text/plain; charset=utf-8"],
                                body: ResponseBody(byteBuffer: ByteBuffer(string: "metrics credentials required\n")))
            }
        }
        return Response(status: .ok, headers: [.contentType: KioskMetrics.contentType, .cacheControl: "no-store"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
    }

    static func isLoopback(_ request: Request, peer: SocketAddress?) -> Bool {
        if request.headers[HTTPField.Name("Forwarded")!] != nil || request.headers[HTTPField.Name("X-Forwarded-For")!] != nil {
            return false
        }
        guard let peer else { return false }
        if case .unixDomainSocket = peer { return true }
        let address = peer.ipAddress ?? ""
        return address.hasPrefix("127.") || address == "::1" || address.hasPrefix("::ffff:127.")
    }
}

/// The metrics credentials' authenticator, rebuilt only when a reload changes them (it caches
/// verified credentials, so a scraper pays bcrypt once).
private final class AuthenticatorCache: Sendable {
    private let current = NIOLockedValueBox<(credentials: [KioskConfiguration.Credential], authenticator: BasicAuthenticator)?>(nil)

    func authenticator(for credentials: [KioskConfiguration.Credential]) -> BasicAuthenticator {
        current.withLockedValue { current in
            if let current, current.credentials == credentials { return current.authenticator }
            let authenticator = BasicAuthenticator(accounts: credentials)
            current = (credentials, authenticator)
            return authenticator
        }
    }
}
