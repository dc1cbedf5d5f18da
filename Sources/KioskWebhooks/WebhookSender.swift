import AsyncHTTPClient
import Foundation
import KioskModels
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL

/// How one try at a delivery went.
package struct WebhookSendResult: Sendable, Hashable {
    package var outcome: WebhookRetries.Outcome
    /// The HTTP status answered; nil when there was no answer.
    package var status: Int?
    /// From the start of the try (resolution included) to its end.
    package var latency: Duration
    /// The answer's first bytes, or what went wrong when there was no usable answer.
    package var answer: String

    package init(outcome: WebhookRetries.Outcome, status: Int?, latency: Duration, answer: String) {
        self.outcome = outcome; self.status = status; self.latency = latency; self.answer = answer
    }
}

/// Makes one try at a delivery; the worker's seam.
package protocol WebhookSending: Sendable {
    /// Posts `delivery`'s event to its endpoint, signed at `timestamp` (Unix seconds). Never throws: every
    /// failure is a result.
    func send(_ delivery: WebhookDelivery, timestamp: Int64) async -> WebhookSendResult
}

/// Posts events to endpoints: the event's JSON, signed (Standard Webhooks), to a destination the policy
/// accepts, within a total timeout, without following redirects.
///
/// Connections go to the address the policy checked, never to a fresh resolution of the name: for `http`
/// the URL's host is replaced by that address and the `Host` header keeps the name; for `https` a client
/// whose `dnsOverride` maps the name to that address is made for the try (TLS still checks the name's
/// certificate) and shut down after it, since AsyncHTTPClient takes DNS overrides per client only. Plain
/// `http` and `https` to an IP address use one client kept for the process. Only the first address the
/// name resolves to is tried: when it cannot be reached, the try fails and is retried later.
package struct WebhookSender: WebhookSending {
    package struct Options: Sendable {
        /// The whole try: connecting, sending, and reading the answer's first bytes.
        package var timeout: Duration
        /// How much of the answer is kept for the log.
        package var answerLimit: Int
        package var userAgent: String
        /// TLS for `https` endpoints; nil: the system's trust roots, TLS 1.2 or newer.
        package var tlsConfiguration: TLSConfiguration?

        package init(timeout: Duration = .seconds(15), answerLimit: Int = 1_024, userAgent: String = "Kiosk-Webhooks/1.0",
                    tlsConfiguration: TLSConfiguration? = nil) {
            self.timeout = timeout; self.answerLimit = max(answerLimit, 0); self.userAgent = userAgent
            self.tlsConfiguration = tlsConfiguration
        }
    }

    package let policy: DestinationPolicy
    package let options: Options
    private let logger: Logger

    package init(policy: DestinationPolicy, options: Options = Options(), logger: Logger = Logger(label: "kiosk.webhooks")) {
        self.policy = policy; self.options = options; self.logger = logger
    }

    /// The process's client for webhooks: redirects not followed, no decompression. Kept for the process's
    /// life and never shut down, since AsyncHTTPClient traps when a client that was not shut down is released.
    static let sharedClient: HTTPClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration(tls: nil))

    static func clientConfiguration(tls: TLSConfiguration?, pinning: [String: String] = [:]) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.timeout = .init(connect: .seconds(10))
        configuration.tlsConfiguration = tls ?? {
            var standard = TLSConfiguration.makeClientConfiguration()
            standard.minimumTLSVersion = .tlsv12
            return standard
        }()
        configuration.dnsOverride = pinning
        return configuration
    }

    package func send(_ delivery: WebhookDelivery, timestamp: Int64) async -> WebhookSendResult {
        await send(delivery.event, to: delivery.endpoint, timestamp: timestamp)
    }

    /// Posts `event` to `endpoint`, signed at `timestamp`.
    package func send(_ event: KioskEvent, to endpoint: WebhookEndpoint, timestamp: Int64) async -> WebhookSendResult {
        let start = ContinuousClock.now
        let failed = { (answer: String) in
            WebhookSendResult(outcome: .failed, status: nil, latency: start.duration(to: .now), answer: answer)
        }
        let signer: WebhookSigner
        do {
            signer = try WebhookSigner(secrets: endpoint.secrets)
        } catch {
            return failed("not sent: \(error)")
        }
        let destination: WebhookDestination
        do {
            destination = try await policy.check(endpoint.url)
        } catch {
            return failed("not sent: \(error)")
        }
        let body = Array(event.json().utf8)
        var request = HTTPClientRequest(url: "")
        request.method = .POST
        request.headers.add(name: "host", value: destination.url.hostHeader)
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "user-agent", value: options.userAgent)
        for (name, value) in signer.headers(id: event.publicID, timestamp: timestamp, body: body) {
            request.headers.add(name: name, value: value)
        }
        request.body = .bytes(ByteBuffer(bytes: body))

        let pinned: HTTPClient?
        if destination.url.scheme == .https, IPAddress(destination.url.host) == nil {
            request.url = destination.url.url
            let configuration = Self.clientConfiguration(tls: options.tlsConfiguration,
                                                         pinning: [destination.url.host: destination.address.description])
            pinned = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        } else {
            request.url = destination.url.url(connectingTo: destination.address)
            if destination.url.scheme == .https { request.tlsConfiguration = options.tlsConfiguration }
            pinned = nil
        }
        let result = await exchange(request, client: pinned ?? Self.sharedClient, start: start)
        if let pinned {
            do {
                try await pinned.shutdown()
            } catch {
                logger.warning("webhook client for one try did not shut down cleanly", metadata: ["error": "\(error)"])
            }
        }
        return result
    }

    /// The request and the answer's first bytes, within the timeout.
    private func exchange(_ request: HTTPClientRequest, client: HTTPClient, start: ContinuousClock.Instant) async -> WebhookSendResult {
        let timeout = options.timeout
        let limit = options.answerLimit
        let deadline = NIODeadline.now() + .nanoseconds(Self.nanoseconds(timeout))
        let logger = self.logger
        let answer: Answer
        do {
            answer = try await withThrowingTaskGroup(of: Answer?.self) { group in
                group.addTask {
                    let response = try await client.execute(request, deadline: deadline, logger: logger)
                    var excerpt: [UInt8] = []
                    var truncated = false
                    for try await chunk in response.body {
                        let room = limit - excerpt.count
                        if chunk.readableBytes > room {
                            excerpt.append(contentsOf: chunk.readableBytesView.prefix(room))
                            truncated = true
                            break
                        }
                        excerpt.append(contentsOf: chunk.readableBytesView)
                    }
                    return Answer(status: Int(clamping: response.status.code), headers: response.headers, excerpt: excerpt, truncated: truncated)
                }
                group.addTask {
                    try await Task.sleep(until: start + timeout, clock: .continuous)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let answer = first else { throw TimedOut() }
                return answer
            }
        } catch {
            return WebhookSendResult(outcome: .failed, status: nil, latency: start.duration(to: .now),
                                     answer: Self.describe(error, timeout: timeout))
        }
        let latency = start.duration(to: .now)
        let retryAfter = answer.headers.first(name: "retry-after").flatMap { RetryAfter.seconds($0, now: Date()) }
        let outcome = WebhookRetries.outcome(status: answer.status, retryAfter: retryAfter)
        var text = Self.excerpt(answer.excerpt, truncated: answer.truncated)
        if (300..<400).contains(answer.status) {
            let location = answer.headers.first(name: "location").map { " to \($0)" } ?? ""
            text = "redirect\(location) not followed (change the endpoint's URL)" + (text.isEmpty ? "" : ": " + text)
        }
        return WebhookSendResult(outcome: outcome, status: answer.status, latency: latency, answer: text)
    }

    private struct Answer: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var excerpt: [UInt8]
        var truncated: Bool
    }

    private struct TimedOut: Error {}

    static func describe(_ error: any Error, timeout: Duration) -> String {
        if error is TimedOut || (error as? HTTPClientError) == .deadlineExceeded {
            let milliseconds = nanoseconds(timeout) / 1_000_000
            return "no answer within " + (milliseconds % 1_000 == 0 ? "\(milliseconds / 1_000) s" : "\(milliseconds) ms")
        }
        if let error = error as? HTTPClientError { return "\(error)" }
        if error is CancellationError { return "cancelled (the server is stopping)" }
        return "\(error)"
    }

    /// The bytes as text, cut at a character boundary, with `…` when more followed.
    static func excerpt(_ bytes: [UInt8], truncated: Bool) -> String {
        var end = bytes.count
        // Drop a character cut in the middle: up to 3 trailing bytes of an unfinished UTF-8 sequence.
        for back in 0..<min(4, bytes.count + 1) {
            if String(validating: bytes[..<(bytes.count - back)], as: UTF8.self) != nil { end = bytes.count - back; break }
        }
        let text = String(decoding: bytes[..<end], as: UTF8.self)
        return truncated || end < bytes.count ? text + "…" : text
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? Int64.max : whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}

/// The `Retry-After` header: seconds, or an HTTP date.
enum RetryAfter {
    /// Seconds from `now` (at least 0); nil when the value is neither form.
    static func seconds(_ value: String, now: Date) -> Int64? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return Int64(text.prefix(12)) ?? Int64.max
        }
        guard let date = HTTPDate.parse(text) else { return nil }
        let seconds = date.timeIntervalSince(now).rounded(.up)
        return seconds <= 0 ? 0 : Int64(exactly: min(seconds, 1e12)) ?? 0
    }
}

/// HTTP dates (RFC 9110): IMF-fixdate, and the obsolete RFC 850 and asctime forms.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    static func parse(_ text: String) -> Date? {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
        if words.count == 6, words[0].hasSuffix(","), words[5] == "GMT" {
            return make(day: words[1], month: words[2], year: words[3], time: words[4])
        }
        // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
        if words.count == 4, words[0].hasSuffix(","), words[3] == "GMT" {
            let parts = words[1].split(separator: "-").map(String.init)
            guard parts.count == 3, let short = Int(parts[2]), parts[2].count == 2 else { return nil }
            return make(day: parts[0], month: parts[1], year: String(short < 70 ? 2000 + short : 1900 + short), time: words[2])
        }
        // asctime: Sun Nov  6 08:49:37 1994
        if words.count == 5 {
            return make(day: words[2], month: words[1], year: words[4], time: words[3])
        }
        return nil
    }

    private static func make(day: String, month: String, year: String, time: String) -> Date? {
        let clock = time.split(separator: ":").map { Int(String($0)) }
        guard let day = Int(day), (1...31).contains(day), let monthIndex = months.firstIndex(of: month.lowercased()),
              let year = Int(year), year.description.count == 4, clock.count == 3,
              let hour = clock[0], let minute = clock[1], let second = clock[2],
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        var components = DateComponents()
        components.calendar = Calendar(identifier: .gregorian)
        components.timeZone = TimeZone(identifier: "GMT")
        components.year = year; components.month = monthIndex + 1; components.day = day
        components.hour = hour; components.minute = minute; components.second = second
        guard components.isValidDate, let date = components.date else { return nil }
        return date
    }
}
