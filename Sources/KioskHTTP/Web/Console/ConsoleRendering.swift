import Hummingbird

/// Turns a console template and its view into an answer, inside the console's frame.
enum ConsoleRendering {
    struct Frame {
        struct Link { var href: String; var label: String; var current: Bool }
        var operatorName: String
        var role: String
        var csrf: String
        var links: [Link]
        var notice: String?
    }

    struct Page {
        var lang: String
        var t: [String: String]
        var title: String
        var frame: Frame?
        var content: Any
    }

    /// Images may come from `imageOrigin` too (the signed links' `public_url`, for an issue's pages).
    static func contentSecurityPolicy(imageOrigin: String) -> String {
        "default-src 'none'; img-src 'self' data: \(imageOrigin); style-src 'unsafe-inline'; "
            + "script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    static func page(_ status: HTTPResponse.Status, template: String, title: String, language: WebLanguage,
                     frame: Frame?, content: Any, imageOrigin: String = "") -> Response {
        WebTemplates.response(status, template: template,
                              context: Page(lang: language.rawValue, t: language.consoleStrings, title: title, frame: frame, content: content),
                              language: language, contentSecurityPolicy: contentSecurityPolicy(imageOrigin: imageOrigin))
    }
}
