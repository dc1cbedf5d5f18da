import KioskTestSupport
import Crypto
import Foundation
import KioskPush
import KioskPushStandIn
import Testing

@Suite("APNs over HTTP/2 with token authentication, against the stand-in", .serialized)
struct APNsSenderTests {
    @Test("an alert with a cover goes out with Apple's headers and payload")
    func alertHeadersAndPayload() async throws {
        try await APNsFixture.run { standIn, sender in
            let results = try await sender.send(APNsFixture.message, to: APNsFixture.devices(0..<3))
            #expect(results.map(\.outcome) == [.sent, .sent, .sent])
            #expect(results.map(\.attempts) == [1, 1, 1])
            let snapshot = standIn.snapshot()
            #expect(snapshot.requests == 3)
            #expect(snapshot.refusals.isEmpty)
            let request = try #require(snapshot.recorded.first)
            #expect(request.headers["apns-push-type"] == "alert")
            #expect(request.headers["apns-priority"] == "10")
            #expect(request.headers["apns-topic"] == APNsFixture.topic)
            #expect(request.headers["apns-collapse-id"] == "edition-1")
            #expect(request.headers["apns-expiration"] == "0")
            let payload = try #require(try JSONSerialization.jsonObject(with: Data(request.payload)) as? [String: Any])
            let aps = try #require(payload["aps"] as? [String: Any])
            #expect((aps["alert"] as? [String: String]) == ["title": "Nacional", "body": "The issue of 2 June is out"])
            #expect(aps["mutable-content"] as? Int == 1)
            #expect(aps["content-available"] as? Int == 1)
            #expect(payload["cover"] as? String == "https://kiosk.example/cover/1.jpg")
            #expect(payload["edition"] as? String == "1")
            #expect(payload["date"] as? String == "2025-06-02")
        }
    }

    @Test("a background push is type background, priority 5, content-available only")
    func backgroundPush() async throws {
        try await APNsFixture.run { standIn, sender in
            let expiry = Date(timeIntervalSince1970: 1_900_000_000)
            let message = PushMessage.newIssue(edition: "8", date: "2025-05-31", alert: nil, expiration: expiry)
            let results = try await sender.send(message, to: APNsFixture.devices(0..<1))
            #expect(results.map(\.outcome) == [.sent])
            let request = try #require(standIn.snapshot().recorded.first)
            #expect(request.headers["apns-push-type"] == "background")
            #expect(request.headers["apns-priority"] == "5")
            #expect(request.headers["apns-expiration"] == "1900000000")
            let payload = try #require(try JSONSerialization.jsonObject(with: Data(request.payload)) as? [String: Any])
            #expect((payload["aps"] as? [String: Int]) == ["content-available": 1])
        }
    }

    @Test("one provider token serves many sends; a new one is made after the reuse window, never sooner")
    func providerTokenReuse() async throws {
        // The stand-in judges ages by the real clock: starting 50 minutes back keeps every token it sees young.
        let clock = MovingDateClock(Date().addingTimeInterval(-50 * 60))
        try await APNsFixture.run(clock: clock.function) { standIn, sender in
            _ = try await sender.send(APNsFixture.message, to: APNsFixture.devices(0..<200))
            _ = try await sender.send(APNsFixture.message, to: APNsFixture.devices(200..<400))
            #expect(sender.tokens.made == 1)
            #expect(standIn.snapshot().providerTokens == 1)

            clock.advance(by: 30 * 60)
            _ = try await sender.send(APNsFixture.message, to: APNsFixture.devices(0..<100))
            #expect(sender.tokens.made == 1)

            clock.advance(by: 11 * 60)
            let results = try await sender.send(APNsFixture.message, to: APNsFixture.devices(0..<100))
            #expect(results.allSatisfy { $0.outcome == .sent })
            #expect(sender.tokens.made == 2)
            let snapshot = standIn.snapshot()
            #expect(snapshot.providerTokens == 2)
            #expect(snapshot.refusals.isEmpty)
            #expect(snapshot.requests == 600)
        }
    }

    @Test("senders sharing one token source (Production and Sandbox) share one provider token")
    func sharedTokens() async throws {
        let key = P256.Signing.PrivateKey()
        let tokens = try APNsTokens(key: APNsSigningKey(p8: key.pemRepresentation, keyID: APNsFixture.keyID, teamID: APNsFixture.teamID))
        var configuration = APNsStandIn.Configuration(
            teamID: APNsFixture.teamID, keyID: APNsFixture.keyID, publicKey: key.publicKey, topics: [APNsFixture.topic])
        configuration.record = false
        let standIn = try await APNsStandIn.start(configuration)
        let senders = try [APNsConfiguration.Environment.production, .sandbox].map { environment in
            try APNsSender(tokens: tokens, configuration: APNsConfiguration(
                environment: environment, baseURL: standIn.baseURL, timeout: .seconds(60), tls: standIn.authority.clientTLS))
        }
        async let first = senders[0].send(APNsFixture.message, to: APNsFixture.devices(0..<300))
        async let second = senders[1].send(APNsFixture.message, to: APNsFixture.devices(300..<600))
        let all = try await first + second
        for sender in senders { try await sender.shutdown() }
        try await standIn.stop()
        #expect(all.allSatisfy { $0.outcome == .sent })
        #expect(tokens.made == 1)
        #expect(standIn.snapshot().providerTokens == 1)
    }

    @Test("410 and 400 BadDeviceToken / DeviceTokenNotForTopic are dead tokens; a token that is not hex is never sent")
    func deadTokens() async throws {
        let (gone, bad, foreign) = (APNsFixture.token(1), APNsFixture.token(2), APNsFixture.token(3))
        try await APNsFixture.run(standIn: {
            $0.unregistered = [gone]
            $0.badTokens = [bad]
            $0.otherTopicTokens = [foreign]
        }) { standIn, sender in
            var devices = APNsFixture.devices(0..<4)
            devices.append(PushDevice(token: "not-a-token/../x", app: APNsFixture.topic))
            let results = try await sender.send(APNsFixture.message, to: devices)
            #expect(results.map(\.outcome) == [
                .sent, .deadToken(reason: "Unregistered"), .deadToken(reason: "BadDeviceToken"),
                .deadToken(reason: "DeviceTokenNotForTopic"), .deadToken(reason: "BadDeviceToken"),
            ])
            #expect(results.last?.attempts == 0)
            #expect(standIn.snapshot().requests == 4)
        }
    }

    @Test("429 and 5xx are tried again with backoff, a bounded number of times")
    func retries() async throws {
        let (throttled, failing, broken) = (APNsFixture.token(1), APNsFixture.token(2), APNsFixture.token(3))
        try await APNsFixture.run(standIn: {
            $0.throttled = [throttled: 2]
            $0.failing = [failing: 1, broken: 10]
        }) { standIn, sender in
            let results = try await sender.send(APNsFixture.message, to: APNsFixture.devices(1..<4))
            #expect(results[0].outcome == .sent)
            #expect(results[0].attempts == 3)
            #expect(results[1].outcome == .sent)
            #expect(results[1].attempts == 2)
            guard case .failed(_, let status) = results[2].outcome else {
                Issue.record("expected a failure, got \(results[2].outcome)")
                return
            }
            #expect(status == 500)
            #expect(results[2].attempts == 3)
            let snapshot = standIn.snapshot()
            #expect(snapshot.answered[broken] == 3)
            #expect(snapshot.refusals["TooManyRequests"] == 2)
        }
    }

    @Test("403 ExpiredProviderToken makes a new provider token once and tries again")
    func expiredProviderToken() async throws {
        // The first token is signed 61 minutes back: the stand-in calls it expired; the next ones are now.
        let calls = Counter()
        let clock: @Sendable () -> Date = { calls.next() == 0 ? Date().addingTimeInterval(-61 * 60) : Date() }
        try await APNsFixture.run(clock: clock) { standIn, sender in
            let results = try await sender.send(APNsFixture.message, to: APNsFixture.devices(0..<1))
            #expect(results.map(\.outcome) == [.sent])
            #expect(results.first?.attempts == 2)
            #expect(sender.tokens.made == 2)
            #expect(standIn.snapshot().refusals == ["ExpiredProviderToken": 1])
        }
    }

    @Test("any other refusal is a failure with Apple's reason")
    func otherRefusals() async throws {
        try await APNsFixture.run { standIn, sender in
            let results = try await sender.send(APNsFixture.message, to: APNsFixture.devices(0..<1, app: "com.example.other"))
            #expect(results.map(\.outcome) == [.failed(reason: "TopicDisallowed", status: 400)])
            #expect(results.first?.attempts == 1)
        }
    }

    @Test("a payload over 4096 bytes and a collapse id over 64 bytes are refused before anything is sent")
    func limits() async throws {
        try await APNsFixture.run { standIn, sender in
            try await Self.checkLimits(standIn, sender)
        }
    }

    private static func checkLimits(_ standIn: APNsStandIn, _ sender: APNsSender) async throws {
        var big = APNsFixture.message
        big.alert?.body = String(repeating: "x", count: 4000)
        let refused = await Self.error(sending: big, with: sender)
        guard case .payloadTooLarge(.apns, let bytes, 4096) = refused else {
            Issue.record("expected payloadTooLarge, got \(String(describing: refused))")
            return
        }
        #expect(bytes > 4096)
        #expect(refused?.description.contains("shorten") == true)

        var fits = APNsFixture.message
        fits.alert?.body = String(repeating: "x", count: 3800)
        #expect(try await sender.send(fits, to: APNsFixture.devices(0..<1)).map(\.outcome) == [.sent])

        var long = APNsFixture.message
        long.collapseID = String(repeating: "c", count: 65)
        #expect(await Self.error(sending: long, with: sender) == .collapseIDLength(bytes: 65, limit: 64))
        long.collapseID = String(repeating: "c", count: 64)
        #expect(try await sender.send(long, to: APNsFixture.devices(0..<1)).map(\.outcome) == [.sent])
        #expect(standIn.snapshot().requests == 2)
    }

    /// The error `send` refuses `message` with, nil when it sends.
    private static func error(sending message: PushMessage, with sender: APNsSender) async -> PushMessageError? {
        do throws(PushMessageError) {
            _ = try await sender.send(message, to: APNsFixture.devices(0..<3))
            return nil
        } catch {
            return error
        }
    }

    @Test("Production and Sandbox select Apple's two hosts; a base URL overrides them")
    func environments() throws {
        #expect(APNsConfiguration(environment: .production).baseURL == "https://api.push.apple.com")
        #expect(APNsConfiguration(environment: .sandbox).baseURL == "https://api.sandbox.push.apple.com")
        #expect(APNsConfiguration.Environment(rawValue: "sandbox") == .sandbox)
        #expect(APNsConfiguration(environment: .production, baseURL: "https://127.0.0.1:2197").baseURL == "https://127.0.0.1:2197")
        let key = P256.Signing.PrivateKey()
        let tokens = try APNsTokens(key: APNsSigningKey(p8: key.pemRepresentation, keyID: APNsFixture.keyID, teamID: APNsFixture.teamID))
        #expect(throws: APNsConfigurationError.baseURL("http://api.push.apple.com")) {
            _ = try APNsSender(tokens: tokens, configuration: APNsConfiguration(environment: .production, baseURL: "http://api.push.apple.com"))
        }
        #expect(throws: APNsConfigurationError.key) { _ = try APNsSigningKey(p8: "not a key", keyID: "KEY1234567", teamID: "TEAM123456") }
        #expect(throws: APNsConfigurationError.teamID) { _ = try APNsSigningKey(p8: key.pemRepresentation, keyID: "KEY1234567", teamID: "") }
    }

    @Test("a publish to 5 000 devices answers every device exactly once")
    func publishSize() async throws {
        let dead = Set((0..<20).map { APNsFixture.token($0 * 241) })
        let throttled = Dictionary(uniqueKeysWithValues: (0..<20).map { (APNsFixture.token($0 * 239 + 1), 1) })
        let observer = CountingObserver()
        try await APNsFixture.run(standIn: {
            $0.unregistered = dead
            $0.throttled = throttled
            $0.record = false
        }, sender: {
            $0.connections = 2
            $0.maximumConcurrentSends = 400
        }, observer: observer, ownEventLoops: true) { standIn, sender in
            let devices = APNsFixture.devices(0..<5_000)
            let results = try await sender.send(APNsFixture.message, to: devices)
            #expect(results.count == 5_000)
            #expect(results.map(\.device) == devices)
            let snapshot = standIn.snapshot()
            #expect(snapshot.delivered.count == 5_000 - dead.count)
            #expect(snapshot.delivered.values.allSatisfy { $0 == 1 })
            #expect(snapshot.answered.count == 5_000)
            for device in devices {
                let expected = throttled[device.token] != nil ? 2 : 1
                if snapshot.answered[device.token] != expected {
                    Issue.record("\(device.token) answered \(snapshot.answered[device.token] ?? 0) times")
                    break
                }
            }
            #expect(results.filter { $0.outcome == .deadToken(reason: "Unregistered") }.count == dead.count)
            #expect(results.filter { $0.outcome == .sent }.count == 5_000 - dead.count)
            #expect(snapshot.providerTokens == 1)
            #expect(snapshot.connections <= 2)
            let seen = observer.snapshot
            #expect(seen.results == 5_000)
            #expect(seen.finished.count == 1)
            #expect(seen.finished.first?.sent == 5_000 - dead.count)
            #expect(seen.finished.first?.dead == dead.count)
            #expect(seen.finished.first?.retries == throttled.count)
        }
    }
}

/// Counts calls, from any thread.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    /// The count before this call.
    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value - 1
    }
}
