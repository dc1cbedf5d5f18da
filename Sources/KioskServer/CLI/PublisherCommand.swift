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
            let configuration = try options.loadConfiguration()
            guard configuration.catalogueSource == .console else {
                throw ValidationError("the configuration file owns the accounts (catalogue_source: file): set publications and editions under its publishers entry")
            }
            let store = try await StoreOptions.openStore(configuration)
            var catalogue = try await store.catalogue()
            guard let index = catalogue.accounts.firstIndex(where: { $0.kind == .publisher && $0.username == username }) else {
                throw ValidationError("no publisher account \(username)")
            }
            let before = catalogue.accounts[index].scope.map(\.description) ?? "every edition"
            catalogue.accounts[index].scope = every ? nil : PublisherScope(publications: Set(publications), editions: Set(editions))
            try configuration.replacingCatalogue(with: catalogue).validate(file: "command line")
            for change in try await store.syncCatalogue(catalogue, dryRun: false) { printOutput(change) }
            let after = catalogue.accounts[index].scope.map(\.description) ?? "every edition"
            try await store.recordAudit(AuditEntry(time: SystemClock().now, actor: "command line", action: "account.scope",
                                                   subject: catalogue.accounts[index].label, before: before, after: after))
        }
    }
}
