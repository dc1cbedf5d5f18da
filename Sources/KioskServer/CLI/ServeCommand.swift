import ArgumentParser
import Foundation
import Hummingbird
import KioskModels
import Logging
import Metrics
import NIOCore
import Prometheus
import ServiceLifecycle
import UnixSignals
import KioskConfig
import KioskHTTP

/// `KioskServer serve`: runs the server until SIGTERM or SIGINT (in-flight requests finish); SIGHUP reloads the configuration.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the server.")

    @OptionGroup var options: StoreOptions

    @Option(help: "Address to listen on (default: server.host of the configuration).")
    var host: String?

    @Option(help: "Port to listen on; 0 picks a free one (default: server.port of the configuration).")
    var port: Int?

    @Option(help: ArgumentHelp("Serve the reference benchmark data set in DIR (gen_data.py's dataset.json).",
                               valueName: "DIR"))
    var data: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func run() async throws {
        var configuration = try options.loadConfiguration()
        if let host { configuration.server.host = host }
        if let port { configuration.server.port = port }
        if data != nil, options.database != nil {
            throw ValidationError("--data serves the data set from its own SQLite database; leave out --database")
        }
        let dataset = try data.map { try BenchmarkDataset.load(directory: $0) }
        if let dataset, let data { dataset.configure(&configuration, directory: data) }
        LoggingSetup.bootstrap(json: configuration.server.jsonLogs, level: logLevel)
        let logger = Logger(label: "kiosk")

        let store = try await StoreOptions.openStore(configuration)
        let changes = try await store.syncCatalogue(configuration.catalogue, dryRun: false)
        for change in changes { logger.info("configuration: \(change)") }
        try await dataset?.importIssues(into: store, editions: configuration.server.editions) { logger.info("benchmark data set: \($0)") }
        let secrets = try Secrets.load(configuration: configuration, database: try DatabaseLocation(configuration.server.database),
                                       logger: logger)
        let metrics = KioskMetrics()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics.registry))   // once per process: here
        let editions = try EditionsServices(configuration: configuration, store: store, logger: logger, bundleObserver: metrics)
        try await editions.cleanUp()
        try await editions.publishSamplesIfEmpty(configuration)
        var factory = RuntimeFactory(store: store, editions: editions, secrets: secrets, logger: logger)
        factory.metrics = metrics
        let runtime = RuntimeBox(try factory.makeRuntime(configuration))
        let runtimeFactory = factory
        try await StartupChecks.warnAboutDevelopmentCredentials(configuration, logger: logger)

        let reloader = ConfigurationReloader(options: options, host: configuration.server.host,
                                             port: configuration.server.port, factory: factory, runtime: runtime,
                                             logger: logger)
        let server = configuration.server
        var peerRoutes: APIClientRoutes?
        if data != nil { peerRoutes = { BenchmarkPeerRoutes().addRoutes(to: $0) } }
        let app = try buildApplication(
            runtime: runtime, host: configuration.server.host, port: configuration.server.port, logger: logger,
            metrics: metrics, apiClientRoutes: peerRoutes, services: [reloader],
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? server.port
                if server.port == 0, server.publicURL == nil {
                    // Links carry the port: once a free one is picked, hand out that one.
                    var bound = runtime.runtime.configuration
                    bound.server.port = port
                    if let rebuilt = try? runtimeFactory.makeRuntime(bound) { runtime.replace(with: rebuilt) }
                }
                logger.notice("Kiosk listening", metadata: [
                    "rpc": .string("http\(server.tls == nil ? "" : "s")://\(server.host):\(port)\(server.rpcPaths[0])"),
                    "rpc_paths": .string(server.rpcPaths.joined(separator: " ")),
                    "database": .string(server.database),
                    "editions": .string(server.editions),
                    "secret": .string(secrets.source),
                ])
            })
        try await app.runService()
        await store.close()
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Re-reads the configuration on SIGHUP and swaps it in; a bad file is reported and the old one kept.
struct ConfigurationReloader: Service {
    let options: StoreOptions
    let host: String
    let port: Int
    let factory: RuntimeFactory
    let runtime: RuntimeBox
    let logger: Logger

    func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            do {
                var configuration = try options.loadConfiguration()
                configuration.server.host = host
                configuration.server.port = runtime.runtime.configuration.server.port   // the bound one
                let changes = try await factory.store.syncCatalogue(configuration.catalogue, dryRun: false)
                runtime.replace(with: try factory.makeRuntime(configuration))
                factory.metrics?.configurationReloaded(ok: true)
                logger.notice("configuration reloaded", metadata: ["changes": .string(changes.isEmpty ? "none" : changes.joined(separator: "; "))])
            } catch {
                factory.metrics?.configurationReloaded(ok: false)
                logger.error("configuration reload failed; keeping the previous one", metadata: ["error": .string("\(error)")])
            }
        }
    }
}

/// Warnings an operator must see at start.
enum StartupChecks {
    /// The password the repository's development API client uses (see README).
    static let developmentPassword = "secret"

    static func warnAboutDevelopmentCredentials(_ configuration: KioskConfiguration, logger: Logger) async throws {
        let loopback = ["127.0.0.1", "::1", "localhost"].contains(configuration.server.host)
        for client in configuration.apiClients
        where await PasswordHashing().verify(developmentPassword, against: client.passwordHash) {
            let message: Logger.Message = loopback
                ? "API client uses the development password; change it before exposing the server"
                : "API client uses the development password and the server listens beyond loopback: anyone can call it"
            logger.warning(message, metadata: ["client": .string(client.username), "host": .string(configuration.server.host)])
        }
    }
}
