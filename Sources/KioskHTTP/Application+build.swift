import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import KioskIntegers
import KioskModels
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import KioskConfig
import KioskFiles

/// Routes a program embedding the server adds to the product's own. They get a group behind the same
/// middleware as every route (the runtime pinned, HTTP metrics, request logging) and the API clients'
/// Basic authentication: an embedding program adds no route anyone may call.
public typealias APIClientRoutes = @Sendable (RouterGroup<KioskRequestContext>) -> Void

/// The routes of the server, on the runtime in `runtime`; with `metrics`, HTTP metrics and `GET /metrics`;
/// with `apiClientRoutes`, the embedding program's routes too.
package func buildRouter(runtime: RuntimeBox, metrics: KioskMetrics? = nil,
                         apiClientRoutes: APIClientRoutes? = nil) -> Router<KioskRequestContext> {
    let router = Router(context: KioskRequestContext.self)
    router.add(middleware: RuntimeMiddleware(current: runtime))
    if let metrics { router.add(middleware: HTTPMetricsMiddleware(metrics: metrics)) }
    router.add(middleware: LogRequestsMiddleware(.debug))
    HealthController().addRoutes(to: router.group())
    if let metrics { MetricsController(metrics: metrics).addRoutes(to: router.group()) }
    RPCController(paths: runtime.runtime.configuration.rpcRoutes)
        .addRoutes(to: router.group().add(middleware: BasicAuthenticationMiddleware.apiClients))
    SSOController().addRoutes(to: router.group())
    StoreNotificationsController().addRoutes(to: router.group())
    ReaderKioskController().addRoutes(to: router.group())
    ConsoleController().addRoutes(to: router.group())
    // The prefix is fixed at start; the delivery and endpoint follow reloads through the request's runtime.
    FileDeliveryController(prefix: runtime.runtime.configuration.links.prefix) { $0.runtime.delivery }
        .addRoutes(to: router.group())
    PublishController(endpoint: { $0.runtime.publishing }, scopes: { $0.runtime })
        .addRoutes(to: router.group().add(middleware: BasicAuthenticationMiddleware.publishers))
    EventStreamController().addRoutes(to: router.group().add(middleware: BasicAuthenticationMiddleware.eventReaders))
    apiClientRoutes?(router.group().add(middleware: BasicAuthenticationMiddleware.apiClients))
    return router
}

/// The HTTP application: routes, listener, TLS when configured, and the extra services it runs
/// (configuration reload on SIGHUP).
package func buildApplication(
    runtime: RuntimeBox, host: String, port: Int, logger: Logger,
    metrics: KioskMetrics? = nil,
    apiClientRoutes: APIClientRoutes? = nil,
    services: [any Service] = [],
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) throws -> some ApplicationProtocol {
    let configuration = runtime.runtime.configuration
    let serverName = "Kiosk"
    let keptAnswers = KeptRPCAnswers(runtime: runtime, paths: configuration.rpcRoutes, metrics: metrics,
                                     serverName: serverName, logger: logger)
    let http1 = HTTPServerBuilder.kioskHTTP1(
        configuration: .init(additionalChannelHandlers: [CloseAfterResponseHandler()],
                             idleTimeout: .seconds(Int64(widening: configuration.server.idleTimeoutSeconds))),
        keptAnswers: keptAnswers, metrics: metrics)
    let server: HTTPServerBuilder
    if let tls = configuration.server.tls {
        var tlsConfiguration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(tls.certificate).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: tls.key, format: .pem)))
        tlsConfiguration.minimumTLSVersion = .tlsv12
        server = try .tls(http1, tlsConfiguration: tlsConfiguration)
    } else {
        server = http1
    }
    return Application(
        router: buildRouter(runtime: runtime, metrics: metrics, apiClientRoutes: apiClientRoutes),
        server: server,
        configuration: .init(address: .hostname(host, port: port), serverName: serverName),
        services: services,
        onServerRunning: onServerRunning,
        logger: logger)
}
