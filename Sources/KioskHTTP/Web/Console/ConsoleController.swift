import Foundation
import HTTPTypes
import Hummingbird

/// The operator console at `/admin`: sign-in with a session cookie and lock-out, the dashboard, apps
/// (demo quota, tariff lines, web kiosk, store products), issues (upload with progress, withdraw, restore),
/// store purchases (find, release a device, revoke and restore), webhook endpoints and their delivery logs,
/// readers, accounts, and the audit log.
///
/// Every form carries a CSRF token bound to the session (the sign-in form, to a nonce cookie); every
/// change is validated like the configuration file, written to the database (so every instance sees it
/// at once) and to the audit log. An `editor` may see the dashboard, publish, and look after their own
/// webhook endpoints; an `operator` may do all.
package struct ConsoleController {
    package init() {}

    package func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get("/admin/sign-in", use: signInForm)
        group.post("/admin/sign-in", use: signIn)
        group.get("/admin/setup") { request, context in try await ConsoleSetupPage(request: request, context: context).form() }
        group.post("/admin/setup") { request, context in try await ConsoleSetupPage(request: request, context: context).create() }
        group.post("/admin/sign-out", use: console { page, _ in try await page.signOut() })
        group.get("/admin", use: console { page, request in try await page.dashboard(request) })
        group.get("/admin/apps", use: console { page, _ in try await page.apps() })
        group.post("/admin/apps/:app", use: console { page, request in try await page.changeApp(request) })
        group.post("/admin/catalogue", use: console { page, _ in try await page.changeCatalogue() })
        group.get("/admin/issues", use: console { page, request in try await page.issues(request) })
        group.put("/admin/issues/:edition/:date", use: console { page, request in try await page.upload(request) })
        group.get("/admin/issues/:edition/:date", use: console { page, _ in try await page.issue() })
        group.post("/admin/issues/:edition/:date/withdraw", use: console { page, _ in try await page.withdraw() })
        group.post("/admin/issues/:edition/:date/restore", use: console { page, _ in try await page.restore() })
        group.get("/admin/readers", use: console { page, request in try await page.readers(request) })
        group.post("/admin/readers", use: console { page, request in try await page.changeReader(request) })
        group.get("/admin/accounts", use: console { page, _ in try await page.accounts() })
        group.post("/admin/accounts", use: console { page, request in try await page.changeAccount(request) })
        group.post("/admin/accounts/sessions", use: console { page, _ in try await page.endOperatorSessions() })
        group.get("/admin/purchases", use: console { page, request in try await page.purchases(request) })
        group.get("/admin/purchase", use: console { page, request in try await page.purchase(request) })
        group.post("/admin/purchase", use: console { page, _ in try await page.changePurchase() })
        group.get("/admin/webhooks", use: console { page, _ in try await page.webhooks() })
        group.post("/admin/webhooks", use: console { page, _ in try await page.changeWebhook() })
        group.get("/admin/webhook", use: console { page, request in try await page.webhook(request) })
        group.get("/admin/audit", use: console { page, _ in try await page.audit() })
        group.get("/admin/console.js") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "no-cache"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: WebTemplates.consoleScript)))
        }
    }

    /// A page of a signed-in operator; without a session, the sign-in page. Form posts must carry the
    /// session's CSRF token (a field, or the `X-CSRF-Token` header for uploads).
    private func console(_ body: @escaping @Sendable (ConsolePage, Request) async throws -> Response)
        -> @Sendable (Request, KioskRequestContext) async throws -> Response {
        { request, context in
            guard var page = try await ConsolePage(request: request, context: context) else {
                if request.method == .get { return Response(status: .seeOther, headers: [.location: "/admin/sign-in"]) }
                throw KioskHTTPError.unauthorized(realm: "console", "sign in to the console first")
            }
            if request.method == .post {
                page.form = try await WebForm(request)
            }
            if request.method != .get {
                let token = request.headers[.xCSRFToken] ?? page.form?.text("csrf") ?? ""
                guard page.acceptsCSRF(token) else {
                    throw KioskHTTPError.forbidden("the form's CSRF token is missing or does not match your session; reload the page and try again")
                }
            }
            return try await body(page, request)
        }
    }

    @Sendable private func signInForm(_ request: Request, context: KioskRequestContext) async throws -> Response {
        try await ConsoleSignIn(request: request, context: context).form(problem: nil)
    }

    @Sendable private func signIn(_ request: Request, context: KioskRequestContext) async throws -> Response {
        try await ConsoleSignIn(request: request, context: context).signIn(request)
    }
}

extension HTTPField.Name {
    static let xCSRFToken = Self("X-CSRF-Token")!
}
