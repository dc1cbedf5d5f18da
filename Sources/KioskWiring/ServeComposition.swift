import UnixSignals
import Hummingbird
import KioskConfig
import KioskFiles
import KioskHTTP
import KioskModels
import Logging
import Metrics
import NIOCore
import Prometheus
import ServiceLifecycle

/// The running server `KioskServer serve` starts: the database opened and its catalogue synced, the
/// secrets, metrics, editions and runtime of the configuration, reloaded on SIGHUP, until SIGTERM or SIGINT
/// (in-flight requests finish). A program embedding the server may add routes and a start-up step.
public struct ServeComposition: Sendable {
    public var source: ConfigurationSource
    /// Overrides `server.host`.
    public var host: String?
    /// Overrides `server.port`; 0 picks a free one.
    public var port: Int?
    public var logLevel: Logger.Level
    /// The embedding program's routes (see `APIClientRoutes`).
    public var apiClientRoutes: APIClientRoutes?
    /// Run once the database is open and the configuration's catalogue synced, before the editions are
    /// cleaned up and the server listens (e.g. to import issues).
    public var prepare: (@Sendable (_ database: any KioskDatabase, _ logger: Logger) async throws -> Void)?

    public init(source: ConfigurationSource, host: String? = nil, port: Int? = nil, logLevel: Logger.Level = .info) {
        self.source = source
        self.host = host
        self.port = port
        self.logLevel = logLevel
    }

    /// Runs the server in one service group (SIGTERM and SIGINT shut it down gracefully): the database's
    /// services (PostgreSQL's pool and catalogue listener) first, then `serve`, which they outlive.
    public func run() async throws {
        MemoryArenas.limitToProcessors()
        var configuration = try source.load()
        if let host { configuration.server.host = host }
        if let port { configuration.server.port = port }
        LoggingSetup.bootstrap(json: configuration.server.jsonLogs, level: logLevel)
        let logger = Logger(label: "kiosk")
        let metrics = KioskMetrics()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics.registry))   // once per process: here
        let database = try DatabaseWiring.prepare(configuration, observer: metrics)
        let serving = Serving { [self, configuration] in try await serve(configuration, database: database, metrics: metrics, logger: logger) }
        let group = ServiceGroup(configuration: .init(services: database.services + [serving],
                                                      gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            await database.store.close()
            throw error
        }
        await database.store.close()
    }

    /// The server once the database's services run: migrated and synced, then listening until shut down.
    private func serve(_ configuration: KioskConfiguration, database: DatabaseWiring.Prepared, metrics: KioskMetrics,
                       logger: Logger) async throws {
        let pdfSandbox = try await BlockingExecutor.shared.run { [pdf = configuration.pdf] in try StartupChecks.pdfSandbox(pdf) }
        StartupChecks.log(pdfSandbox, logger: logger)

        try await database.migrate()
        let store = database.store
        let endpoints = try WebhookWiring.fileEndpoints(configuration, at: SystemClock().now)
        CatalogueSyncReport.log(try await configuration.syncCatalogue(into: store), logger: logger)
        try await store.syncFileEndpoints(endpoints)
        try await prepare?(store, logger)
        let secrets = try Secrets.load(configuration: configuration, database: try DatabaseLocation(configuration.server.database),
                                       logger: logger)
        let editions = try EditionsServices(configuration: configuration, store: store, logger: logger, bundleObserver: metrics)
        try await editions.cleanUp()
        try await editions.publishSamplesIfEmpty(configuration)
        var factory = RuntimeFactory(store: store, editions: editions, secrets: secrets, logger: logger)
        factory.metrics = metrics
        factory.pdfSandbox = pdfSandbox.sandbox
        let runtime = RuntimeBox(try factory.makeRuntime(configuration))
        try await StartupChecks.warnAboutDevelopmentCredentials(configuration, store: store, logger: logger)
        try await StartupChecks.warnAboutUnscopedPublishers(store: store, logger: logger)
        let offerSetup = try await StartupChecks.noOperator(configuration, store: store, logger: logger)
            && configuration.catalogueSource == .console

        let server = configuration.server
        let reloader = ConfigurationReloader(source: source, host: configuration.server.host, factory: factory,
                                             runtime: runtime, logger: logger)
        var services: [any Service] = [reloader, WebhookWiring.worker(configuration, database: store, metrics: metrics, logger: logger)]
        if let push = try PushWiring.service(configuration, database: store, links: editions.links(configuration, secrets: secrets),
                                             metrics: metrics, logger: logger) {
            services.append(push)
        }
        let app = try buildApplication(
            runtime: runtime, host: configuration.server.host, port: configuration.server.port, logger: logger,
            metrics: metrics, apiClientRoutes: apiClientRoutes,
            services: services,
            onServerRunning: { [factory] channel in
                Self.listening(on: channel, server: server, runtime: runtime, factory: factory,
                               secrets: secrets, logger: logger)
                if offerSetup { Self.offerSetupLink(on: channel, runtime: runtime, factory: factory, logger: logger) }
            })
        try await app.run()
    }

    /// The server's own service in the group: its start-up, then the application until shut down.
    private struct Serving: Service, CustomStringConvertible {
        let body: @Sendable () async throws -> Void
        func run() async throws { try await body() }
        /// What the service group logs: the name alone, never what the closure holds.
        var description: String { "Serving" }
    }

    /// Prints the one-time link that creates the first operator (`FirstOperatorSetup`).
    private static func offerSetupLink(on channel: any Channel, runtime: RuntimeBox, factory: RuntimeFactory, logger: Logger) {
        let configuration = runtime.runtime.configuration
        let base = configuration.server.publicURL
            ?? "http://\(configuration.server.host):\(channel.localAddress?.port ?? configuration.server.port)"
        let token = factory.firstOperator.offer()
        logger.notice("no operator yet: open the set-up link once, from this machine or over TLS, to create the first one",
                      metadata: ["link": .string("\(base)/admin/setup?token=\(token)")])
    }

    /// Once bound: links carry the port, so a picked free one replaces 0 in the runtime; then the start-up line.
    private static func listening(on channel: any Channel, server: KioskConfiguration.Server, runtime: RuntimeBox,
                                  factory: RuntimeFactory, secrets: Secrets, logger: Logger) {
        let port = channel.localAddress?.port ?? server.port
        if server.port == 0, server.publicURL == nil {
            var bound = runtime.runtime.configuration
            bound.server.port = port
            if let rebuilt = try? factory.makeRuntime(bound) { runtime.replace(with: rebuilt) }
        }
        logger.notice("Kiosk listening", metadata: [
            "rpc": .string("http\(server.tls == nil ? "" : "s")://\(server.host):\(port)\(server.rpcPaths[0])"),
            "rpc_paths": .string(server.rpcPaths.joined(separator: " ")),
            "database": .string((try? DatabaseLocation(server.database).description) ?? "(unreadable)"),
            "editions": .string(server.editions),
            "secret": .string(secrets.source),
        ])
    }
}
