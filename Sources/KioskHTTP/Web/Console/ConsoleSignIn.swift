import KioskRPC
import Foundation
import Hummingbird
import KioskConfig
import KioskIntegers
import KioskModels

/// The console's sign-in: a form whose CSRF token is bound to a nonce cookie, the stored operators'
/// bcrypt hashes (`StoredAccounts`), and the readers' lock-out policy (failures counted under
/// `operator:<name>` in the same table, so every instance counts them together).
struct ConsoleSignIn {
    static let nonceCookie = "kiosk_console_nonce"
    let context: KioskRequestContext
    let language: WebLanguage
    let nonce: String?

    init(request: Request, context: KioskRequestContext) async throws {
        self.context = context
        language = WebLanguage(acceptLanguage: request.headers[.acceptLanguage])
        nonce = request.cookies[Self.nonceCookie]?.value
    }

    private var sessions: WebSessions { context.runtime.console.sessions }

    func form(problem: String?, status: HTTPResponse.Status = .ok) async throws -> Response {
        let nonce = formNonce
        var response = ConsoleRendering.page(status, template: "console_sign_in", title: language.consoleStrings["sign_in"] ?? "",
                                             language: language, frame: nil,
                                             content: SignInView(csrf: sessions.csrfToken(binding: nonce), problem: problem))
        setNonceCookie(nonce, on: &response)
        return response
    }

    /// The nonce a signed-out form's CSRF token is bound to: the request's cookie's, or a new one.
    var formNonce: String { nonce.flatMap { $0.utf8.count == 43 ? $0 : nil } ?? Self.newNonce() }

    /// Sets the nonce cookie a signed-out form's answer carries.
    func setNonceCookie(_ nonce: String, on response: inout Response) {
        response.setCookie(Cookie(name: Self.nonceCookie, value: nonce, maxAge: 3600, path: "/admin",
                                  secure: sessions.secure, httpOnly: true, sameSite: .strict))
    }

    /// Whether a posted signed-out form carries the CSRF token bound to the request's nonce cookie.
    func acceptsCSRF(of form: WebForm) -> Bool {
        guard let nonce else { return false }
        return sessions.acceptsCSRF(form.text("csrf"), binding: nonce)
    }

    func signIn(_ request: Request) async throws -> Response {
        let form = try await WebForm(request)
        guard acceptsCSRF(of: form) else {
            throw KioskHTTPError.forbidden("the sign-in form's CSRF token is missing or stale; reload the page and try again")
        }
        let username = form.text("username"), password = form["password"] ?? ""
        let service = context.environment.service
        let policy = service.signInPolicy, now = service.clock.now
        let store = service.store
        let text = language.consoleStrings
        guard let attempt = try await store.beginSignInAttempt(
            username: "operator:" + username, deviceKey: nil, since: now - Int64(widening: policy.windowSeconds),
            maxFailures: policy.maxFailures, at: now)
        else { return try await self.form(problem: text["locked_out"], status: .tooManyRequests) }
        let entry = try await context.runtime.accounts.current().operators[username]
        let matches: Bool
        do {
            matches = try await service.passwords.verify(password, against: entry?.passwordHash, username: "operator:" + username)
        } catch KioskError.tooManySignInAttempts {
            return try await self.form(problem: text["locked_out"], status: .tooManyRequests)
        }
        guard matches, let entry, !password.isEmpty else {
            return try await self.form(problem: text["wrong_credentials"], status: .unauthorized)
        }
        try await store.forgetSignInAttempt(attempt)
        var response = Response(status: .seeOther, headers: [.location: "/admin", .cacheControl: "no-store"])
        response.setCookie(sessions.signIn(WebSessions.payload(entry.username, passwordHash: entry.passwordHash), now: now))
        return response
    }

    static func newNonce() -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        return Base64URL.encode(bytes)
    }
}

struct SignInView {
    var csrf: String
    var problem: String?
}
