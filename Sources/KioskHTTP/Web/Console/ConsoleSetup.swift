import KioskRPC
import Foundation
import HTTPTypes
import Hummingbird
import KioskConfig
import KioskModels
import NIOConcurrencyHelpers

/// The one-time set-up link that creates the first operator in the browser, while the database owns the
/// accounts (`catalogue_source: console`) and holds no operator: offered at start (the token printed in
/// the log), valid once, and only to a client on this machine (a loopback peer, not forwarded by a proxy)
/// or over TLS. Used, or once an operator exists some other way (the CLI, another instance's link), it is gone.
package final class FirstOperatorSetup: Sendable {
    private let token = NIOLockedValueBox<String?>(nil)

    package init() {}

    /// A new token, replacing any earlier one.
    package func offer() -> String {
        let fresh = ConsoleSignIn.newNonce()
        token.withLockedValue { $0 = fresh }
        return fresh
    }

    /// Whether `candidate` is the token on offer (compared in constant time).
    func accepts(_ candidate: String) -> Bool {
        token.withLockedValue { current in
            guard let current, current.utf8.count == candidate.utf8.count else { return false }
            return zip(current.utf8, candidate.utf8).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
        }
    }

    /// Takes the token if it is `candidate`: true once.
    func consume(_ candidate: String) -> Bool {
        token.withLockedValue { current in
            guard let offered = current, offered == candidate else { return false }
            current = nil
            return true
        }
    }

    /// Offers `taken` again after a use that changed nothing (a refused form), unless another was offered.
    func giveBack(_ taken: String) {
        token.withLockedValue { current in if current == nil { current = taken } }
    }
}

/// `GET`/`POST /admin/setup?token=…`: the form of `FirstOperatorSetup`, with a CSRF token bound to the
/// sign-in nonce cookie; the operator made is an `operator` (every right), signed in at once.
struct ConsoleSetupPage {
    let request: Request
    let context: KioskRequestContext
    /// The signed-out forms' nonce and CSRF token, as the sign-in page has them.
    let signedOut: ConsoleSignIn

    init(request: Request, context: KioskRequestContext) async throws {
        self.request = request
        self.context = context
        signedOut = try await ConsoleSignIn(request: request, context: context)
    }

    private var setup: FirstOperatorSetup { context.runtime.console.firstOperator }
    private var sessions: WebSessions { context.runtime.console.sessions }
    private var text: [String: String] { signedOut.language.consoleStrings }

    /// Refuses unless the link may be used here and now: 403 from elsewhere than this machine without TLS,
    /// 404 for a token not on offer or once an operator exists.
    private func requireUsable(_ token: String) async throws {
        guard context.runtime.configuration.servesTLS || MetricsController.isLoopback(request, peer: context.remoteAddress) else {
            throw KioskHTTPError.forbidden("the set-up link works only from the server's own machine, or over TLS")
        }
        guard setup.accepts(token), try await context.runtime.accounts.current().operators.isEmpty else {
            throw KioskHTTPError.notFound("no such set-up link: it was used, replaced at a restart, or an operator already exists")
        }
    }

    func form(problem: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        let token = request.uri.queryParameters.get("token") ?? ""
        try await requireUsable(token)
        let nonce = signedOut.formNonce
        let view = SetupView(csrf: sessions.csrfToken(binding: nonce), token: token, problem: problem)
        var response = ConsoleRendering.page(status, template: "console_setup", title: text["setup"] ?? "",
                                             language: signedOut.language, frame: nil, content: view)
        signedOut.setNonceCookie(nonce, on: &response)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    func create() async throws -> Response {
        let form = try await WebForm(request)
        let token = request.uri.queryParameters.get("token") ?? ""
        try await requireUsable(token)
        guard signedOut.acceptsCSRF(of: form) else {
            throw KioskHTTPError.forbidden("the form's CSRF token is missing or stale; reload the page and try again")
        }
        let username = form.text("username"), password = form["password"] ?? ""
        guard password == (form["password2"] ?? "") else { return try await self.form(problem: "password: the two passwords differ", status: .unprocessableContent) }
        let service = context.environment.service
        // Taken before the change, so two forms sent at once cannot both make an operator.
        guard setup.consume(token) else { throw KioskHTTPError.notFound("the set-up link was used meanwhile") }
        let administration = AccountAdministration(configuration: context.runtime.configuration, database: context.runtime.console.database,
                                                   passwords: service.passwords, clock: service.clock, actor: "set-up link")
        do {
            try await administration.apply(.add(.operator, username: username, password: password, role: .operator))
        } catch let refused as AccountAdministration.Refused {
            setup.giveBack(token)
            return try await self.form(problem: refused.description, status: .unprocessableContent)
        } catch {
            setup.giveBack(token)
            throw error
        }
        let stored = try await context.runtime.console.database.accounts().first { $0.kind == .operator && $0.username == username }
        var response = Response(status: .seeOther, headers: [.location: "/admin", .cacheControl: "no-store"])
        if let stored {
            response.setCookie(sessions.signIn(WebSessions.payload(stored.username, passwordHash: stored.passwordHash), now: service.clock.now))
        }
        return response
    }
}

struct SetupView {
    var csrf: String
    var token: String
    var problem: String?
}
