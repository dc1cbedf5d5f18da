import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One exchange with a Google endpoint: the request and its whole answer within a time limit, every failure
/// to get an answer turned into `GoogleUnavailable`.
package enum GoogleHTTP {
    /// No Google answer we read comes near this; a bigger one is not Google's.
    package static let maximumAnswerSize = 1 << 20

    package struct Answer: Sendable {
        package let status: Int
        package let body: Data

        package init(status: Int, body: Data) {
            self.status = status
            self.body = body
        }
    }

    /// Sends `request` and reads the answer, all within `timeout` (the client's deadline covers only the
    /// answer's head, so the body read is raced against a timer too). `endpoint` names the endpoint in
    /// messages; the URL is never quoted because a purchase token can be part of it.
    package static func send(
        _ request: HTTPClientRequest, with client: HTTPClient, timeout: Duration, endpoint: String
    ) async throws -> Answer {
        let deadline = NIODeadline.now() + timeAmount(timeout)
        do {
            return try await withThrowingTaskGroup(of: Answer?.self) { group in
                group.addTask {
                    let response = try await client.execute(request, deadline: deadline)
                    let body = try await response.body.collect(upTo: maximumAnswerSize)
                    return Answer(status: Int(exactly: response.status.code) ?? 0, body: Data(body.readableBytesView))
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let answer = first else {
                    throw GoogleUnavailable(status: nil, "\(endpoint) did not answer in time")
                }
                return answer
            }
        } catch let error as GoogleUnavailable {
            throw error
        } catch let error as HTTPClientError {
            throw GoogleUnavailable(status: nil, "\(endpoint) could not be reached (\(error))")
        } catch {
            throw GoogleUnavailable(status: nil, "\(endpoint) could not be reached (\(type(of: error)))")
        }
    }

    /// `duration` for NIO, negative taken as zero and anything over a year as a year.
    package static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        let whole = min(max(seconds, 0), 31_536_000)
        return .nanoseconds(whole * 1_000_000_000 + max(attoseconds, 0) / 1_000_000_000)
    }

    /// The short machine word of a Google error answer (`error.errors[0].reason`, `error.status`, or the
    /// OAuth `error`), for messages: letters, digits and `_` only, at most 64 of them, never the free text.
    package static func errorWord(in body: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return nil }
        var word: String?
        if let error = object["error"] as? [String: Any] {
            if let errors = error["errors"] as? [[String: Any]], let reason = errors.first?["reason"] as? String {
                word = reason
            } else {
                word = error["status"] as? String
            }
        } else {
            word = object["error"] as? String
        }
        guard let word, !word.isEmpty, word.count <= 64,
            word.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") })
        else { return nil }
        return word
    }

    /// `status` and Google's error word, for a message: "HTTP 404, purchaseTokenNotFound".
    package static func describe(_ answer: Answer) -> String {
        if let word = errorWord(in: answer.body) {
            return "HTTP \(answer.status), \(word)"
        }
        return "HTTP \(answer.status)"
    }
}
