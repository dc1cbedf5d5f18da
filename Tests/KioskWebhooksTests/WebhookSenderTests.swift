import KioskTestSupport
import Foundation
import KioskModels
import NIOSSL
import Testing
@testable import KioskWebhooks

/// The sender against a real endpoint on loopback that verifies with the Standard Webhooks reference
/// library (`Tests/Clients/webhook_receiver.py`).
@Suite struct WebhookSenderTests {
    static let secretA = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let secretB = WebhookSecret.generate().text
    static let event = KioskEvent(id: 42, type: .issuePublished, time: 1_764_133_200,
                                  body: EventBody(app: "quiosc", edition: 1, date: "2025-06-02", revision: 1))

    /// Loopback is refused unless allowed: the tests allow it by name, as an operator would.
    static func sender(timeout: Duration = .seconds(15), answerLimit: Int = 1_024, resolver: any HostResolver = SystemHostResolver(),
                       allow: [String] = ["127.0.0.1"], tls: TLSConfiguration? = nil) -> WebhookSender {
        WebhookSender(policy: DestinationPolicy(allowHosts: allow, resolver: resolver),
                      options: .init(timeout: timeout, answerLimit: answerLimit, tlsConfiguration: tls))
    }

    static func endpoint(_ url: String, secrets: [String] = [secretA]) -> WebhookEndpoint {
        WebhookEndpoint(id: 7, source: .file, name: "publisher", owner: "admin", url: url, secrets: secrets, createdAt: 0)
    }

    static var now: Int64 { Int64(Date().timeIntervalSince1970.rounded(.down)) }

    @Test func aDeliveryIsVerifiedByTheReferenceLibrary() async throws {
        try await WebhookReceiver.run(secrets: [Self.secretA]) { receiver in
            let timestamp = Self.now
            let result = await Self.sender().send(Self.event, to: Self.endpoint(receiver.baseURL + "/answer/200"), timestamp: timestamp)
            #expect(result.outcome == .delivered)
            #expect(result.status == 200)
            #expect(result.answer == "answered 200\n")
            let received = try await receiver.deliveries()
            #expect(received.count == 1)
            let delivery = try #require(received.first)
            #expect(delivery.verified == [0], "standardwebhooks refused it: \(delivery.errors)")
            #expect(delivery.id == "evt_42")
            #expect(delivery.timestamp == String(timestamp))
            #expect(delivery.body == Self.event.json())
            #expect(delivery.contentType == "application/json")
            #expect(delivery.userAgent?.hasPrefix("Kiosk") == true)
            #expect(delivery.signature?.split(separator: " ").count == 1)
        }
    }

    @Test func duringARotationEitherSecretVerifies() async throws {
        try await WebhookReceiver.run(secrets: [Self.secretA, Self.secretB]) { receiver in
            let endpoint = Self.endpoint(receiver.baseURL + "/answer/204", secrets: [Self.secretB, Self.secretA])
            let result = await Self.sender().send(Self.event, to: endpoint, timestamp: Self.now)
            #expect(result.outcome == .delivered)
            let delivery = try #require(await receiver.deliveries().first)
            #expect(delivery.verified == [0, 1], "standardwebhooks refused: \(delivery.errors)")
            #expect(delivery.signature?.split(separator: " ").count == 2)
        }
    }

    @Test func aWrongSecretIsRefusedByTheReferenceLibrary() async throws {
        try await WebhookReceiver.run(secrets: [Self.secretB]) { receiver in
            _ = await Self.sender().send(Self.event, to: Self.endpoint(receiver.baseURL + "/answer/200"), timestamp: Self.now)
            let delivery = try #require(await receiver.deliveries().first)
            #expect(delivery.verified.isEmpty)
            #expect(delivery.errors["0"] == "No matching signature found")
        }
    }

    @Test func theSameEventKeepsItsIDAcrossTries() async throws {
        try await WebhookReceiver.run(secrets: [Self.secretA]) { receiver in
            let endpoint = Self.endpoint(receiver.baseURL + "/answer/500")
            let first = await Self.sender().send(Self.event, to: endpoint, timestamp: Self.now - 2)
            let second = await Self.sender().send(Self.event, to: endpoint, timestamp: Self.now)
            #expect(first.outcome == .failed && second.outcome == .failed)
            #expect(first.status == 500)
            let received = try await receiver.deliveries()
            #expect(received.map(\.id) == ["evt_42", "evt_42"])
            #expect(received.map(\.timestamp) != [received.first?.timestamp, received.first?.timestamp])
            #expect(received.allSatisfy { $0.verified == [0] })
        }
    }

    @Test func aRedirectIsAFailureAndIsNotFollowed() async throws {
        try await WebhookReceiver.run(secrets: [Self.secretA]) { receiver in
            let target = receiver.baseURL + "/answer/200"
            let url = receiver.baseURL + "/answer/302?location=" + (target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            let result = await Self.sender().send(Self.event, to: Self.endpoint(url), timestamp: Self.now)
            #expect(result.outcome == .failed)
            #expect(result.status == 302)
            #expect(result.answer.contains("redirect to \(target) not followed"))
            let received = try await receiver.deliveries()
            #expect(received.map(\.path) == ["/answer/302"])
        }
    }

    @Test func theTimeoutIsHonoured() async throws {
        try await WebhookReceiver.run(secrets: [Self.secretA]) { receiver in
            let start = ContinuousClock.now
            let result = await Self.sender(timeout: .seconds(1)).send(Self.event, to: Self.endpoint(receiver.baseURL + "/hang?seconds=30"),
                                                                      timestamp: Self.now)
            let elapsed = start.duration(to: .now)
            #expect(result.outcome == .failed)
            #expect(result.status == nil)
            #expect(result.answer == "no answer within 1 s")
            #expect(elapsed >= .milliseconds(950), "gave up before the timeout: \(elapsed)")
            #expect(elapsed < .seconds(6), "took far longer than the timeout: \(elapsed)")
            #expect(result.latency >= .milliseconds(950) && result.latency < .seconds(6))
            let received = try await receiver.deliveries()
            #expect(received.count == 1)
        }
    }

    @Test func retryAfterInSecondsAndAsADate() async throws {
        try await WebhookReceiver.run(secrets: [Self.secretA]) { receiver in
            let sender = Self.sender()
            let seconds = await sender.send(Self.event, to: Self.endpoint(receiver.baseURL + "/answer/429?retry_after=120"), timestamp: Self.now)
            #expect(seconds.outcome == .throttled(retryAfter: 120))
            #expect(seconds.status == 429)

            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let date = formatter.string(from: Date().addingTimeInterval(600))
            let query = date.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let dated = await sender.send(Self.event, to: Self.endpoint(receiver.baseURL + "/answer/503?retry_after=" + query), timestamp: Self.now)
            guard case .throttled(let retryAfter?) = dated.outcome else {
                Issue.record("503 with Retry-After \(date) gave \(dated.outcome)")
                return
            }
            #expect((595...601).contains(retryAfter))

            let none = await sender.send(Self.event, to: Self.endpoint(receiver.baseURL + "/answer/503"), timestamp: Self.now)
            #expect(none.outcome == .throttled(retryAfter: nil))
            let gone = await sender.send(Self.event, to: Self.endpoint(receiver.baseURL + "/answer/410"), timestamp: Self.now)
            #expect(gone.outcome == .gone)
        }
    }

    @Test func theAnswerKeptIsCapped() async throws {
        try await WebhookReceiver.run(secrets: [Self.secretA]) { receiver in
            let result = await Self.sender(answerLimit: 1_024).send(Self.event, to: Self.endpoint(receiver.baseURL + "/answer/500?body_bytes=200000"),
                                                                     timestamp: Self.now)
            #expect(result.outcome == .failed)
            #expect(result.answer == String(repeating: "x", count: 1_024) + "…")
            let exact = await Self.sender(answerLimit: 64).send(Self.event, to: Self.endpoint(receiver.baseURL + "/answer/200?body_bytes=64"),
                                                                 timestamp: Self.now)
            #expect(exact.answer == String(repeating: "x", count: 64))
        }
    }

    @Test func aRefusedDestinationIsNotContacted() async throws {
        try await WebhookReceiver.run(secrets: [Self.secretA]) { receiver in
            let result = await Self.sender(allow: []).send(Self.event, to: Self.endpoint(receiver.baseURL + "/answer/200"), timestamp: Self.now)
            #expect(result.outcome == .failed)
            #expect(result.status == nil)
            #expect(result.answer.contains("a loopback address"))
            #expect(result.answer.contains("webhooks.allow_hosts"))
            let received = try await receiver.deliveries()
            #expect(received.isEmpty)
        }
    }

    @Test func aMalformedSecretIsReportedNotSent() async throws {
        try await WebhookReceiver.run(secrets: [Self.secretA]) { receiver in
            let endpoint = Self.endpoint(receiver.baseURL + "/answer/200", secrets: ["hunter2"])
            let result = await Self.sender().send(Self.event, to: endpoint, timestamp: Self.now)
            #expect(result.outcome == .failed)
            #expect(result.answer.contains("does not start with \"whsec_\""))
            let received = try await receiver.deliveries()
            #expect(received.isEmpty)
        }
    }

    /// A name nobody's DNS knows, resolved by the policy's resolver to loopback: the request reaches the
    /// receiver only because the sender connects to the address the policy checked, never resolving again.
    @Test(arguments: [false, true])
    func theConnectionGoesToTheCheckedAddress(tls: Bool) async throws {
        try await WebhookReceiver.run(secrets: [Self.secretA], tls: tls) { receiver in
            var tlsConfiguration: TLSConfiguration?
            if tls {
                var configuration = TLSConfiguration.makeClientConfiguration()
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(receiver.caFile.path))
                tlsConfiguration = configuration
            }
            let sender = Self.sender(resolver: FixedResolver(["receiver.example": ["127.0.0.1"]]), allow: ["receiver.example"],
                                     tls: tlsConfiguration)
            let url = "\(tls ? "https" : "http")://receiver.example:\(receiver.port)/answer/200"
            let result = await sender.send(Self.event, to: Self.endpoint(url), timestamp: Self.now)
            #expect(result.outcome == .delivered, "\(result.answer)")
            let delivery = try #require(await receiver.deliveries().first)
            #expect(delivery.host == "receiver.example:\(receiver.port)")
            #expect(delivery.verified == [0])
        }
    }

    @Test func retryAfterParsing() {
        let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(RetryAfter.seconds("120", now: now) == 120)
        #expect(RetryAfter.seconds(" 0 ", now: now) == 0)
        #expect(RetryAfter.seconds("99999999999999999999", now: now) == 999_999_999_999)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:50:37 GMT", now: now) == 60)
        #expect(RetryAfter.seconds("Sunday, 06-Nov-94 08:51:37 GMT", now: now) == 120)
        #expect(RetryAfter.seconds("Sun Nov  6 08:52:37 1994", now: now) == 180)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:00:00 GMT", now: now) == 0)
        #expect(RetryAfter.seconds("-5", now: now) == nil)
        #expect(RetryAfter.seconds("soon", now: now) == nil)
        #expect(RetryAfter.seconds("Sun, 31 Feb 1994 08:50:37 GMT", now: now) == nil)
        #expect(RetryAfter.seconds("", now: now) == nil)
    }

    @Test func excerptsCutAtACharacter() {
        let text = Array("añb".utf8)  // a, ñ (2 bytes), b
        #expect(WebhookSender.excerpt(Array(text.prefix(2)), truncated: true) == "a…")
        #expect(WebhookSender.excerpt(text, truncated: false) == "añb")
    }
}
