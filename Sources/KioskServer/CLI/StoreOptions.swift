import ArgumentParser
import Foundation
import KioskModels
import Logging
import KioskConfig
import KioskWiring

/// The options every command that touches the data shares.
struct StoreOptions: ParsableArguments {
    @Option(help: "Configuration file (YAML).")
    var config: String = KioskConfiguration.defaultPath

    @Option(help: "SQLite database file or postgres://USER@HOST[:PORT]/DATABASE URL (default: server.database of the configuration).")
    var database: String?

    @Option(help: "Editions directory (default: server.editions of the configuration).")
    var editions: String?

    var source: ConfigurationSource { ConfigurationSource(file: config, database: database, editions: editions) }

    func loadConfiguration() throws -> KioskConfiguration {
        try source.load()
    }

    /// Opens (creating and migrating if needed) the configured database.
    static func openStore(_ configuration: KioskConfiguration) async throws -> any KioskDatabase {
        try await DatabaseWiring.open(configuration)
    }
}

/// Writes a line to standard error (progress and diagnostics of CLI commands).
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Writes a line to standard output.
func printOutput(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
