import Hummingbird
import Foundation
import KioskEditions
import KioskFiles
import KioskIntegers
import KioskModels
import KioskRPC
import KioskSQLite
import Logging
import XMLRPC
import KioskConfig
import KioskHTTP
import KioskPasswords

/// Builds a `KioskRuntime` from a configuration: the one place where the parts are wired together.
struct RuntimeFactory: Sendable {
    let store: any KioskDatabase
    let editions: EditionsServices
    let secrets: Secrets
    let logger: Logger
    /// Tests give their own.
    var clock: any KioskClock = SystemClock()
    /// Where XML-RPC calls, store calls and bundle builds are recorded (nil: nowhere).
    var metrics: KioskMetrics?
    /// Password checks of every runtime this factory makes (so their admission limits hold across reloads).
    let passwords = PasswordHashing(admission: CheckAdmission(perUsername: 2, perClient: 4))
    /// The first operator's set-up link, kept across reloads.
    let firstOperator = FirstOperatorSetup()
    /// The stores' checks, made again on every reload (their HTTP clients kept).
    let storeWiring = StoreWiring()
    /// Where the PDF tools run (nil: as the server's user); found once at start.
    var pdfSandbox: Sandbox?

    func makeRuntime(_ configuration: KioskConfiguration) throws -> KioskRuntime {
        let service = KioskService(
            store: store, identityKeys: IdentityKeyIssuer(secret: secrets.identityKey), passwords: passwords,
            signInPolicy: SignInPolicy(maxFailures: configuration.signIn.maxFailures,
                                       windowSeconds: configuration.signIn.windowSeconds),
            clock: clock, catalogueMemo: CatalogueMemo(byteLimit: configuration.limits.answerCacheBytes / 4, observer: metrics),
            searchBudget: ClientBudget(burst: configuration.limits.searchBurst, perMinute: configuration.limits.searchesPerMinute),
            observer: metrics ?? UnobservedKioskService(),
            stores: try storeWiring.checks(configuration), anonymousDeviceLimit: configuration.stores.anonymousDeviceLimit,
            purchaseCheckBudget: ClientBudget(burst: configuration.limits.purchaseCheckBurst,
                                              perMinute: configuration.limits.purchaseChecksPerMinute))
        let links = editions.links(configuration, secrets: secrets)
        var delivery = FileDelivery(directory: editions.directory, links: links)
        delivery.clock = clock
        let environment = KioskRPCEnvironment(
            service: service, links: links,
            bundles: editions.bundles,
            ownWebKiosks: configuration.publicURL + "/web", webKioskTokens: WebKioskTokenSigner(secret: secrets.webKioskKey),
            webKioskTokenLifetime: configuration.webKioskTokenLifetimeSeconds,
            observer: metrics ?? UnobservedKioskRPC(),
            answers: AnswerCache(name: "answers", byteLimit: configuration.limits.answerCacheBytes - configuration.limits.answerCacheBytes / 4,
                                 observer: metrics))
        var dispatcher = XMLRPCDispatcher<KioskRequestContext>()
        KioskMethods.register(into: &dispatcher)
        PurchaseMethods.register(into: &dispatcher)
        PushMethods.register(into: &dispatcher)
        let logger = self.logger
        dispatcher.onInternalError = { error, method in
            logger.error("internal error in XML-RPC method", metadata: ["method": .string(method), "error": .string("\(error)")])
        }
        if let metrics {
            dispatcher.observer = { method, fault, seconds in metrics.observeXMLRPC(method: method, faultCode: fault?.code, seconds: seconds) }
        }
        let publishing = PublishEndpoint(publisher: editions.publisher(), pdfOptions: configuration.pdf.importOptions(sandbox: pdfSandbox),
                                         maxUploadBytes: Int64(widening: configuration.limits.maxUploadBytes), logger: logger)
        return KioskRuntime(
            configuration: configuration, environment: environment, dispatcher: dispatcher,
            accounts: StoredAccounts(store: store, verifier: passwords),
            delivery: delivery, publishing: publishing,
            readerSessions: WebSessions(
                cookieName: "kiosk_reader", path: "/web", secret: secrets.webSessionKey,
                lifetimeSeconds: configuration.webSessionLifetimeSeconds, secure: configuration.servesTLS),
            console: ConsoleServices(
                sessions: WebSessions(cookieName: "kiosk_operator", path: "/admin", secret: secrets.consoleSessionKey,
                                      lifetimeSeconds: configuration.consoleSessionLifetimeSeconds, secure: configuration.servesTLS,
                                      sameSite: .strict),
                database: store, firstOperator: firstOperator, webhooks: WebhookWiring.ConsoleTools()))
    }
}
