/// Google could not answer now: its token endpoint or an API is unreachable, slow, overloaded (5xx, 429),
/// or refused our own credentials (the service account's assertion or access token).
///
/// It says nothing about what was asked: the caller tries again later. `message` names the endpoint and the
/// cause, never a token or key.
public struct GoogleUnavailable: Error, Sendable, CustomStringConvertible {
    /// The HTTP status Google answered, or nil when no answer came (connection, timeout, unreadable answer).
    public let status: Int?
    public let message: String

    public init(status: Int?, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { message }
}
