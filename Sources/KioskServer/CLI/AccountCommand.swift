import ArgumentParser
import Foundation
import KioskConfig
import KioskModels
import KioskPasswords

extension AccountKind: ExpressibleByArgument {}
extension OperatorRole: ExpressibleByArgument {}

/// `KioskServer account …`: the API clients, publishers and operators stored in the database, listed, and
/// changed as the console's accounts page changes them (`AccountAdministration`) when the database owns
/// them (`catalogue_source: console`).
struct AccountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account", abstract: "List and change API client, publisher and operator accounts.",
        discussion: """
            Changes need catalogue_source: console (with file, the configuration's api_clients, publishers and \
            operators are the accounts). Every change is audited as made from the command line; a password is \
            read from standard input (--password-stdin) or generated and printed once (--generate).
            """,
        subcommands: [List.self, Add.self, Password.self, Role.self, Remove.self])

    /// The use case on the configuration's database, as the command line.
    static func administration(_ options: StoreOptions) async throws -> AccountAdministration {
        let configuration = try options.loadConfiguration()
        let store = try await StoreOptions.openStore(configuration)
        _ = try await configuration.syncCatalogue(into: store)   // a new database is seeded from the file first
        return AccountAdministration(configuration: configuration, database: store, passwords: PasswordHashing(), actor: "command line")
    }

    /// Applies a change and prints the sync's report; a refusal prints its reason and fails.
    static func apply(_ change: AccountAdministration.Change, _ options: StoreOptions) async throws {
        do {
            for line in try await administration(options).apply(change) { printOutput(line) }
        } catch let refused as AccountAdministration.Refused {
            printError("error: \(refused.description); nothing changed")
            throw ExitCode.failure
        }
    }

    /// The new password: from standard input, or generated (and printed once).
    struct PasswordOptions: ParsableArguments {
        @Flag(help: "Read the password from standard input (one line).") var passwordStdin = false
        @Flag(help: "Generate a password and print it once.") var generate = false

        func password() throws -> String {
            guard passwordStdin != generate else { throw ValidationError("give one of --password-stdin and --generate") }
            if generate { return AccountAdministration.generatedPassword() }
            return try UserCommand.passwordFromStandardInput(true)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the stored accounts: kind, username, role or scope.")
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let configuration = try options.loadConfiguration()
            let store = try await StoreOptions.openStore(configuration)
            _ = try await configuration.syncCatalogue(into: store)
            let accounts = try await store.catalogue().accounts
            for account in accounts { printOutput(AccountAdministration.describe(account)) }
            if !accounts.contains(where: { $0.kind == .operator }) {
                printError("no operator: the console at /admin cannot be signed in to; add one with `account add --kind operator`"
                           + (configuration.catalogueSource == .console ? "" : " (with catalogue_source: console) or under operators in the file"))
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add an account.")
        @OptionGroup var options: StoreOptions
        @Option(help: "api_client, publisher or operator.") var kind: AccountKind
        @Option var username: String
        @Option(help: "An operator's role: operator or editor (default editor).") var role: OperatorRole?
        @OptionGroup var passwordOptions: PasswordOptions

        func run() async throws {
            if role != nil, kind != .operator { throw ValidationError("--role is for an operator") }
            let password = try passwordOptions.password()
            try await AccountCommand.apply(.add(kind, username: username, password: password, role: role), options)
            if passwordOptions.generate { printOutput("password of \(kind.rawValue):\(username): \(password)") }
        }
    }

    struct Password: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Give an account a new password; the old one stops working at once.")
        @OptionGroup var options: StoreOptions
        @Option(help: "api_client, publisher or operator.") var kind: AccountKind
        @Option var username: String
        @OptionGroup var passwordOptions: PasswordOptions

        func run() async throws {
            let password = try passwordOptions.password()
            try await AccountCommand.apply(.password(kind, username: username, password: password), options)
            if passwordOptions.generate { printOutput("password of \(kind.rawValue):\(username): \(password)") }
        }
    }

    struct Role: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set an operator's role: operator or editor.")
        @OptionGroup var options: StoreOptions
        @Option var username: String
        @Option var role: OperatorRole

        func run() async throws {
            try await AccountCommand.apply(.role(operator: username, role), options)
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an account.")
        @OptionGroup var options: StoreOptions
        @Option(help: "api_client, publisher or operator.") var kind: AccountKind
        @Option var username: String

        func run() async throws {
            try await AccountCommand.apply(.remove(kind, username: username), options)
        }
    }
}
