import ArgumentParser
import KioskConfig
import KioskModels

/// `KioskServer publisher scope …`: what a publisher account may publish to, in the database (when it owns the
/// catalogue, `catalogue_source: console`); with `file`, the configuration's `publishers` entries say it.
struct PublisherCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publisher", abstract: "Manage publisher accounts.", subcommands: [Scope.self])

    struct Scope: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the publications and editions a publisher may publish to, withdraw and restore.",
            discussion: "Without --every, only the listed publications' editions and the listed editions; with nothing listed, none.")
        @OptionGroup var options: StoreOptions
        @Argument(help: "The publisher account's username.") var username: String
        @Option(name: .customLong("publication"), help: "A publication id (repeat for more).") var publications: [Int] = []
        @Option(name: .customLong("edition"), help: "An edition id (repeat for more).") var editions: [Int] = []
        @Flag(help: "Every edition (no scope).") var every = false

        func run() async throws {
            if every, !(publications.isEmpty && editions.isEmpty) { throw ValidationError("--every takes no --publication or --edition") }
            let scope = every ? nil : PublisherScope(publications: Set(publications), editions: Set(editions))
            try await AccountCommand.apply(.scope(publisher: username, scope), options)
        }
    }
}
