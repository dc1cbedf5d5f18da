import Hummingbird
import KioskModels
import KioskEditions
import NIOCore

/// Every HTTP answer that is not a success, in one place: the status, a message a person can act on,
/// and whether the connection closes because the request's body may be left unread. Routes throw it;
/// Hummingbird turns it into the answer.
public struct KioskHTTPError: HTTPResponseError {
    public let status: HTTPResponse.Status
    package let message: String
    package var headers: HTTPFields = [:]
    /// Close the connection after the answer instead of reading what is left of the body.
    package var closesConnection = false
    /// A body other than the plain-text message, with its content type (e.g. the readiness report).
    package var body: (contentType: String, bytes: ByteBuffer)?

    package init(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:], closesConnection: Bool = false) {
        self.status = status
        self.message = message
        self.headers = headers
        self.closesConnection = closesConnection
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        let bytes: ByteBuffer
        if let body {
            headers[.contentType] = body.contentType
            bytes = body.bytes
        } else {
            headers[.contentType] = "text/plain; charset=utf-8"
            bytes = ByteBuffer(string: message.hasSuffix("\n") ? message : message + "\n")
        }
        if closesConnection { headers[.connection] = "close" }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: bytes))
    }

    // MARK: The answers

    /// 401 with the Basic challenge of `realm` (the 2012 app sends credentials only after it).
    package static func unauthorized(realm: String, _ message: String, closesConnection: Bool = false) -> Self {
        Self(.unauthorized, message, headers: [.wwwAuthenticate: "Basic realm=\"\(realm)\""], closesConnection: closesConnection)
    }

    package static func forbidden(_ message: String) -> Self { Self(.forbidden, message) }
    public static func notFound(_ message: String, closesConnection: Bool = false) -> Self {
        Self(.notFound, message, closesConnection: closesConnection)
    }
    package static func gone(_ message: String) -> Self { Self(.gone, message) }
    package static func badRequest(_ message: String, closesConnection: Bool = false) -> Self {
        Self(.badRequest, message, closesConnection: closesConnection)
    }
    /// 413; by default the connection closes without reading the rest of the body.
    package static func tooLarge(_ message: String, closesConnection: Bool = true) -> Self {
        Self(.contentTooLarge, message, closesConnection: closesConnection)
    }
    package static func unprocessable(_ message: String) -> Self { Self(.unprocessableContent, message) }
    /// 416 with `Content-Range: bytes */size` among `headers`.
    package static func rangeNotSatisfiable(headers: HTTPFields) -> Self { Self(.rangeNotSatisfiable, "", headers: headers) }
    /// 507: the editions disk is full.
    package static func insufficientStorage(_ message: String) -> Self {
        Self(.init(code: 507, reasonPhrase: "Insufficient Storage"), message, closesConnection: true)
    }
    /// 503 with a JSON report of what failed.
    package static func notReady(json: ByteBuffer) -> Self {
        var error = Self(.serviceUnavailable, "", headers: [.cacheControl: "no-store"])
        error.body = ("application/json", json)
        return error
    }

    /// A refused upload or publication: over a limit (413), an unusable archive (400), or an issue the
    /// checks refuse (422); the message lists every problem.
    /// The status of a web page the kiosk's rules refuse: 403 for an issue the reader is not entitled to,
    /// 404 for anything that is not there (an unknown app, an edition not offered, no such issue), 400
    /// for a parameter that is not one (a month that is not `YYYY-MM`).
    package static func webStatus(for error: KioskError) -> HTTPResponse.Status {
        switch error {
        case .notEntitled, .invalidIdentity, .wrongCredentials, .tooManySignInAttempts: .forbidden
        case .unknownApp, .editionNotOffered, .noPublishedIssue: .notFound
        case .invalidArgument: .badRequest
        case .tooManySearches, .tooManyPurchaseChecks: .tooManyRequests
        }
    }

    /// A store notification refused: `400` when it does not verify (the store does not send it again),
    /// `503` with `Retry-After` when the store could not be asked about it (it does).
    package static func storeNotice(_ error: PurchaseError) -> Self {
        switch error {
        case .unverifiable(let reason): Self(.badRequest, "the notification cannot be verified: \(reason)")
        case .anotherAccount(let reason): Self(.badRequest, reason)
        case .noCreditLeft: Self(.badRequest, "no credit left")
        case .storeUnavailable(let reason):
            Self(.serviceUnavailable, "the store could not be asked about it; send it again (\(reason))", headers: [.retryAfter: "60"])
        }
    }

    /// A refused restore: never published (404), visible (409), its files gone (410).
    package static func refused(_ refused: IssueRestoreRefused) -> Self {
        switch refused {
        case .neverPublished: Self(.notFound, refused.description)
        case .visible: Self(.conflict, refused.description)
        case .filesGone: Self(.gone, refused.description)
        }
    }

    package static func refused(_ rejected: PublishRejected, archive: Bool) -> Self {
        if rejected.exceedsLimit { return Self(.contentTooLarge, rejected.description) }
        return Self(archive ? .badRequest : .unprocessableContent, rejected.description)
    }
}
