import Hummingbird
import Mustache

/// The web pages' Mustache templates, compiled once. They live in `Web/Templates/*.swift` as Swift
/// string literals so the one executable carries them (the deployment is a single static binary).
package enum WebTemplates {
    package static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        let templates = ["layout": layout, "shelf": shelf, "archive": archive, "issue": issue,
                         "account": account, "message": message, "search": search,
                         "console_layout": consoleLayout, "console_sign_in": consoleSignIn, "console_setup": consoleSetup, "console_dashboard": consoleDashboard,
                         "console_apps": consoleApps, "console_issues": consoleIssues, "console_issue": consoleIssue, "console_readers": consoleReaders,
                         "console_audit": consoleAudit, "console_accounts": consoleAccounts,
                         "console_purchases": consolePurchases, "console_purchase": consolePurchase,
                         "console_webhooks": consoleWebhooks, "console_webhook": consoleWebhook]
        for (name, text) in templates {
            // A template that does not parse is a programming error caught by the first test that renders it.
            do { try library.register(text, named: name) } catch { preconditionFailure("template \(name): \(error)") }
        }
        return library
    }()

    /// Renders the page `name` with `context` (HTML-escaped by Mustache wherever `{{…}}` is used).
    package static func render(_ name: String, _ context: Any) -> String {
        guard let html = library.render(context, withTemplate: name) else { preconditionFailure("no template \(name)") }
        return html
    }

    /// A rendered page as the answer every web page gives: HTML, never cached by shared caches, in its
    /// language, under `contentSecurityPolicy`.
    package static func response(_ status: HTTPResponse.Status, template: String, context: Any, language: WebLanguage,
                                 contentSecurityPolicy: String) -> Response {
        Response(status: status, headers: [
            .contentType: "text/html; charset=utf-8", .cacheControl: "private, no-store",
            .contentLanguage: language.rawValue, .vary: "Accept-Language, Cookie",
            .contentSecurityPolicy: contentSecurityPolicy, .xContentTypeOptions: "nosniff",
        ], body: ResponseBody(byteBuffer: ByteBuffer(string: render(template, context))))
    }
}
