import Logging
import ServiceLifecycle
import UnixSignals
import KioskHTTP

/// Re-reads the configuration on SIGHUP and swaps it in; a bad file is reported and the old one kept.
struct ConfigurationReloader: Service {
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
