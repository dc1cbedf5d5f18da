import KioskConfig
import KioskModels
import Logging
import ServiceLifecycle
import UnixSignals
import KioskHTTP

/// Re-reads the configuration on SIGHUP and swaps it in; a bad file is reported and the old one kept.
struct ConfigurationReloader: Service, CustomStringConvertible {
    /// What the service group logs: the name alone, never the factory's secrets.
    var description: String { "ConfigurationReloader" }

    let source: ConfigurationSource
    let host: String
    let factory: RuntimeFactory
    let runtime: RuntimeBox
    let logger: Logger

    func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            do {
                var configuration = try source.load()
                configuration.server.host = host
                configuration.server.port = runtime.runtime.configuration.server.port   // the bound one
                let endpoints = try WebhookWiring.fileEndpoints(configuration, at: factory.clock.now)   // before changing anything
                let outcome = try await configuration.syncCatalogue(into: factory.store)
                try await factory.store.syncFileEndpoints(endpoints)
                runtime.replace(with: try factory.makeRuntime(configuration))
                factory.metrics?.configurationReloaded(ok: true)
                logger.notice("configuration reloaded", metadata: [
                    "changes": .string(outcome.applied.isEmpty ? "none" : outcome.applied.joined(separator: "; "))])
                CatalogueSyncReport.log(CatalogueSyncOutcome(keptFromConsole: outcome.keptFromConsole), logger: logger)
            } catch {
                factory.metrics?.configurationReloaded(ok: false)
                logger.error("configuration reload failed; keeping the previous one", metadata: ["error": .string("\(error)")])
            }
        }
    }
}
