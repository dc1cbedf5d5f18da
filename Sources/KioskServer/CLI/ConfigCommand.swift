import KioskModels
import ArgumentParser
import KioskConfig
import KioskHTTP
import KioskPasswords
import KioskWiring

/// `KioskServer config check`: validates the configuration and shows what a start would change.
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Work with the configuration.", subcommands: [Check.self, Export.self, Apply.self])

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate the configuration and print what syncing it into the database would change.")

        @OptionGroup var options: StoreOptions

        func run() async throws {
            let configuration = try options.loadConfiguration()
            try StoreWiring.checkFiles(configuration)
            _ = try WebhookWiring.fileEndpoints(configuration, at: 0)
            try PushWiring.checkFiles(configuration)
            printOutput("\(options.config): valid (\(configuration.publications.count) publications, "
                        + "\(configuration.catalogue.editions.count) editions, \(configuration.apps.count) apps, "
                        + "\(configuration.apiClients.count) API clients, \(configuration.publishers.count) publishers)")
            let store = try await StoreOptions.openStore(configuration)
            let changes = try await store.syncCatalogue(configuration.catalogue, dryRun: true)
            printOutput(changes.isEmpty ? "database \(configuration.server.database): up to date"
                                        : "database \(configuration.server.database) would change:")
            for change in changes { printOutput("  " + change) }
        }
    }
}

extension ConfigCommand {
    /// `config export`: the database's catalogue (what the console edits) as the file's YAML sections.
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the database's catalogue (publications, apps, tariff lines, demo quotas, web kiosks, accounts) as YAML for the configuration file.")
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let configuration = try options.loadConfiguration()
            let store = try await StoreOptions.openStore(configuration)
            printOutput(try configuration.replacingCatalogue(with: try await store.catalogue()).catalogueYAML())
        }
    }

    /// `config apply`: makes the database's catalogue the file's, whatever `catalogue_source` says.
    struct Apply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make the database's catalogue the configuration file's (undoes console edits of the catalogue).")
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let configuration = try options.loadConfiguration()
            let store = try await StoreOptions.openStore(configuration)
            let outcome = try await configuration.syncCatalogue(into: store, force: true)
            printOutput(outcome.applied.isEmpty ? "database \(configuration.server.database): up to date"
                                                : "database \(configuration.server.database) changed:")
            for change in outcome.applied { printOutput("  " + change) }
        }
    }
}

/// `KioskServer hash-password`: a bcrypt hash for the configuration's `password_hash` keys.
struct HashPasswordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash-password", abstract: "Read a password on standard input and print its bcrypt hash.")

    @Option(help: "bcrypt cost (log2 rounds).")
    var cost: UInt8 = PasswordHashing.defaultCost

    func run() async throws {
        let password = try UserCommand.passwordLine()
        guard (4...31).contains(cost) else { throw ValidationError("--cost must be 4-31") }
        printOutput(try await PasswordHashing().hash(password, cost: cost))
    }
}
