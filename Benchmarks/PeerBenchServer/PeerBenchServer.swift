import ArgumentParser
import KioskWiring
import Logging

/// The Kiosk of the peer comparison: `KioskServer serve` (the same composition, runtime, metrics and
/// instrumentation) on the reference data set, with the peer's `/zip` route, so the shared load.py runs
/// against it unchanged (`--server "kiosk=PeerBenchServer --data {data} --port {port} --log-level warning"`).
@main
struct PeerBenchServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the reference benchmark data set (gen_data.py's DIR/dataset.json) as KioskServer serve does.")

    @Option(help: ArgumentHelp("The data set's directory, also the editions directory; the database and configuration go to DIR/kiosk-swift.",
                               valueName: "DIR"))
    var data: String

    @Option(help: "Port to listen on; 0 picks a free one (default: server.port of the configuration).")
    var port: Int?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    @Option(help: "The configuration whose catalogue the data set's replaces.")
    var config = "Config/kiosk.yaml"

    func run() async throws {
        let dataset = try ReferenceDataset.load(directory: data)
        let file = try DatasetConfiguration(dataset: dataset, directory: data).write(basedOn: config)
        var server = ServeComposition(source: ConfigurationSource(file: file), port: port, logLevel: logLevel)
        let editions = data
        server.prepare = { database, logger in
            try await dataset.importIssues(into: database, editions: editions) { logger.info("benchmark data set: \($0)") }
        }
        let route = PeerBundleRoute(appKeysByEdition: dataset.appKeysByEdition)
        server.apiClientRoutes = { route.addRoutes(to: $0) }
        try await server.run()
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
