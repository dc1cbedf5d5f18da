import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// What both senders read off HTTP.
enum PushHTTP {
    /// `duration` for NIO, negative taken as zero and anything over a day as a day.
    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        let whole = min(max(seconds, 0), 86_400)
        return .nanoseconds(whole * 1_000_000_000 + max(attoseconds, 0) / 1_000_000_000)
    }

    /// `Retry-After` in seconds (the form Google sends); nil when absent or another form.
    static func retryAfter(_ headers: HTTPHeaders) -> Duration? {
        guard let value = headers.first(name: "retry-after"), let seconds = Int(value.trimmingCharacters(in: .whitespaces)), seconds >= 0 else {
            return nil
        }
        return .seconds(min(seconds, 86_400))
    }

    /// An error with no answer, for a message: AsyncHTTPClient's own description, or the error's type.
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            return "\(error)"
        }
        return "\(type(of: error))"
    }
}
