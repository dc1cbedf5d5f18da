import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import KioskConfig

/// `GET /metrics`: the Prometheus text format, for the scrapers the configuration allows
/// (`metrics.loopback_only`, `metrics.credentials`; both apply when both are set).
///
/// A loopback peer that forwards for someone else (`Forwarded` / `X-Forwarded-For`, i.e. a reverse
/// proxy on the same machine) does not count as loopback.
package struct MetricsController {
    package let metrics: KioskMetrics
    private let scrapers = AuthenticatorCache()

    package init(metrics: KioskMetrics) { self.metrics = metrics }

    package func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        let scrapers = self.scrapers
        group
            .add(middleware: LoopbackOnlyMiddleware())
            .add(middleware: BasicAuthenticationMiddleware(
                realm: "kiosk metrics", message: "metrics credentials required",
                accounts: { context in
                    let credentials = context.runtime.configuration.metrics.credentials
                    return credentials.isEmpty ? nil : scrapers.authenticator(for: credentials)
                },
                drainLimit: { _ in 0 }))
            .get("/metrics") { _, _ in
                Response(status: .ok, headers: [.contentType: KioskMetrics.contentType, .cacheControl: "no-store"],
                         body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
            }
    }

    /// `403` for a scrape from beyond loopback while `metrics.loopback_only` holds.
    package struct LoopbackOnlyMiddleware: RouterMiddleware {
        package typealias Context = KioskRequestContext
        package func handle(_ request: Request, context: Context,
                    next: (Request, Context) async throws -> Response) async throws -> Response {
            if context.runtime.configuration.metrics.effectiveLoopbackOnly,
               !MetricsController.isLoopback(request, peer: context.remoteAddress) {
                throw KioskHTTPError.forbidden("/metrics is served to loopback clients only (metrics.loopback_only).")
            }
            return try await next(request, context)
        }
    }

    package static func isLoopback(_ request: Request, peer: SocketAddress?) -> Bool {
        if request.headers[.forwarded] != nil || request.headers[.xForwardedFor] != nil {
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
package final class AuthenticatorCache: Sendable {
    private let current = NIOLockedValueBox<(credentials: [KioskConfiguration.Credential], authenticator: BasicAuthenticator)?>(nil)

    package func authenticator(for credentials: [KioskConfiguration.Credential]) -> BasicAuthenticator {
        current.withLockedValue { current in
            if let current, current.credentials == credentials { return current.authenticator }
            let authenticator = BasicAuthenticator(accounts: credentials)
            current = (credentials, authenticator)
            return authenticator
        }
    }
}
