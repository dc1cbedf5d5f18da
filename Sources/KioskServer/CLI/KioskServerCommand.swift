import ArgumentParser
import KioskConfig
import KioskHTTP

/// `KioskServer`: the server and its operator commands.
@main
struct KioskServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "KioskServer",
        abstract: "The backend of digital newspaper kiosks (XML-RPC for reader apps, signed file links, bundles).",
        subcommands: [ServeCommand.self, PublishCommand.self, WithdrawCommand.self, RestoreCommand.self, UserCommand.self, AccountCommand.self, PublisherCommand.self, IdentityCommand.self, ConfigCommand.self,
                      StatsCommand.self, DatabaseCommand.self, HashPasswordCommand.self],
        defaultSubcommand: nil)
}
