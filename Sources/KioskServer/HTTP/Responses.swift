import Hummingbird

/// The plain answers every route shares.
extension Response {
    /// A plain-text answer (the message as given, end of line included); `close` when the request body
    /// may be left unread, so the connection is not reused.
    static func text(_ status: HTTPResponse.Status, _ message: String, close: Bool = false) -> Response {
        var headers: HTTPFields = [.contentType: "text/plain; charset=utf-8"]
        if close { headers[.connection] = "close" }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: message)))
    }

    /// 401 with the Basic challenge the 2012 app waits for before sending credentials.
    static func unauthorized(realm: String = "kiosk", _ message: String = "authentication required\n",
                             close: Bool = false) -> Response {
        var response = text(.unauthorized, message, close: close)
        response.headers[.wwwAuthenticate] = "Basic realm=\"\(realm)\""
        return response
    }

    static func tooLarge(limit: Int) -> Response {
        text(.contentTooLarge, "request body over the limit of \(limit) bytes\n", close: true)
    }
}
