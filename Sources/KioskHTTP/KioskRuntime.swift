import KioskModels
import KioskRPC
import NIOConcurrencyHelpers
import XMLRPC
import KioskConfig

/// Everything derived from one loaded configuration. Replaced whole on reload (SIGHUP). A class, so that
/// pinning it to a request (and every copy of the request context) is one reference, not a copy of
/// the configuration and services.
package final class KioskRuntime: Sendable {
    package let configuration: KioskConfiguration
    package let environment: KioskRPCEnvironment
    package let dispatcher: XMLRPCDispatcher<KioskRequestContext>
    /// API clients, publishers and operators, as stored (`StoredAccounts`).
    package let accounts: StoredAccounts
    /// Signed file links (`links.prefix`).
    package let delivery: FileDelivery
    /// `PUT`/`DELETE /publish/…`.
    package let publishing: PublishEndpoint
    /// The reader web kiosk's sessions (`/web/…`).
    package let readerSessions: WebSessions
    /// The operator console's sessions and database (`/admin`).
    package let console: ConsoleServices

    package init(configuration: KioskConfiguration, environment: KioskRPCEnvironment,
                 dispatcher: XMLRPCDispatcher<KioskRequestContext>, accounts: StoredAccounts,
                 delivery: FileDelivery, publishing: PublishEndpoint,
                 readerSessions: WebSessions, console: ConsoleServices) {
        self.configuration = configuration; self.environment = environment; self.dispatcher = dispatcher
        self.accounts = accounts; self.delivery = delivery; self.publishing = publishing
        self.readerSessions = readerSessions; self.console = console
    }
}

/// What the operator console works with: its sessions and the whole database (statistics, catalogue, readers, audit).
package struct ConsoleServices: Sendable {
    package let sessions: WebSessions
    package let database: any KioskDatabase
    /// The set-up link of the first operator (kept across reloads by whoever makes the runtimes).
    package let firstOperator: FirstOperatorSetup
    /// Secrets and destination checks for the webhooks page.
    package let webhooks: any WebhookTools
    package init(sessions: WebSessions, database: any KioskDatabase, firstOperator: FirstOperatorSetup = FirstOperatorSetup(),
                 webhooks: any WebhookTools) {
        self.sessions = sessions; self.database = database; self.firstOperator = firstOperator; self.webhooks = webhooks
    }
}

/// What the console's webhooks page needs of the sending half (`KioskWebhooks`, which this target does not
/// depend on); the wiring gives it.
package protocol WebhookTools: Sendable {
    /// A new signing secret, `whsec_…`.
    func newSecret() -> String
    /// Why `url` may not be a destination, `allowHosts` allowed by name: its form and its host's name, without
    /// looking the name up. Nil when it may.
    func destinationProblem(_ url: String, allowHosts: [String]) -> String?
}

/// The runtime in force; requests read it once, reloads swap it.
package final class RuntimeBox: Sendable {
    private let box: NIOLockedValueBox<KioskRuntime>
    package init(_ runtime: KioskRuntime) { box = NIOLockedValueBox(runtime) }
    package var runtime: KioskRuntime { box.withLockedValue { $0 } }
    package func replace(with runtime: KioskRuntime) { box.withLockedValue { $0 = runtime } }
}
