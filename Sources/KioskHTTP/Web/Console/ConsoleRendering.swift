import Hummingbird
import KioskConfig

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

    static func page(_ status: HTTPResponse.Status, template: String, title: String, language: WebLanguage,
                     frame: Frame?, content: Any, configuration: KioskConfiguration) -> Response {
        let html = WebTemplates.render(template, Page(lang: language.rawValue, t: language.consoleStrings, title: title,
                                                      frame: frame, content: content))
        return Response(status: status, headers: [
            .contentType: "text/html; charset=utf-8", .cacheControl: "private, no-store",
            .contentLanguage: language.rawValue, .vary: "Accept-Language, Cookie",
            .contentSecurityPolicy: "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; "
                + "script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            .xContentTypeOptions: "nosniff",
        ], body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}
