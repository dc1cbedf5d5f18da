import ArgumentParser
import Logging
import KioskWiring

/// `KioskServer serve`: runs the server until SIGTERM or SIGINT (in-flight requests finish); SIGHUP reloads the configuration.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the server.")

    @OptionGroup var options: StoreOptions

    @Option(help: "Address to listen on (default: server.host of the configuration).")
    var host: String?

    @Option(help: "Port to listen on; 0 picks a free one (default: server.port of the configuration).")
    var port: Int?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func run() async throws {
        try await ServeComposition(source: options.source, host: host, port: port, logLevel: logLevel).run()
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
