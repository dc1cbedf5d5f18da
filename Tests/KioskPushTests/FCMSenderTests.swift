import Foundation
import KioskGoogleAuth
import KioskPush
import Testing

@Suite("FCM HTTP v1 with a service account's token, against the Google stand-in")
struct FCMSenderTests {
    static let retry = PushRetryPolicy(maximumAttempts: 3, initialBackoff: .milliseconds(10), maximumBackoff: .seconds(5))

    /// With 60 s for each request to the stand-in, as `APNsFixture`: a Python process on a machine the whole
    /// suite keeps busy can take longer than the production 10 s to sign a token or answer a send.
    static func sender(_ standIn: FCMStandIn) throws -> FCMSender {
        let tokens = GoogleAccessTokens(
            account: try standIn.serviceAccount(), scope: GoogleAccessTokens.firebaseMessagingScope, httpClient: standIn.httpClient,
            timeout: .seconds(60))
        return try FCMSender(
            tokens: tokens,
            configuration: FCMConfiguration(projectID: FCMStandIn.project, baseURL: standIn.baseURL, retry: retry, timeout: .seconds(60)),
            httpClient: standIn.httpClient)
    }

    static func devices(_ names: [String]) -> [PushDevice] {
        names.map { PushDevice(token: $0, app: FCMStandIn.packageName) }
    }

    @Test("an alert goes to each device with its collapse key and priority, on one access token")
    func happyPath() async throws {
        try await FCMStandIn.run { standIn in
            let sender = try Self.sender(standIn)
            let results = try await sender.send(APNsFixture.message, to: Self.devices(["a1", "a2", "a3"]))
            #expect(results.map(\.outcome) == [.sent, .sent, .sent])
            let state = try standIn.state()
            #expect(state.tokenRequests == 1)
            #expect(state.received.map(\.status) == [200, 200, 200])
            #expect(Set(state.received.map(\.token)) == ["a1", "a2", "a3"])
            let message = try #require(try standIn.messages().first)
            #expect((message["notification"] as? [String: String]) == [
                "title": "Nacional", "body": "The issue of 2 June is out", "image": "https://kiosk.example/cover/1.jpg",
            ])
            #expect((message["data"] as? [String: String]) == ["edition": "1", "date": "2025-06-02"])
            let android = try #require(message["android"] as? [String: String])
            #expect(android["collapse_key"] == "edition-1")
            #expect(android["priority"] == "HIGH")
            #expect(android["restricted_package_name"] == FCMStandIn.packageName)
            #expect(android["ttl"] == "0s")
        }
    }

    @Test("a background push is a data message at normal priority")
    func background() async throws {
        try await FCMStandIn.run { standIn in
            let sender = try Self.sender(standIn)
            let message = PushMessage.newIssue(edition: "8", date: "2025-05-31", alert: nil, expiration: Date().addingTimeInterval(3600))
            #expect(try await sender.send(message, to: Self.devices(["b1"])).map(\.outcome) == [.sent])
            let sent = try #require(try standIn.messages().first)
            #expect(sent["notification"] == nil)
            let android = try #require(sent["android"] as? [String: String])
            #expect(android["priority"] == "NORMAL")
            let ttl = try #require(android["ttl"].flatMap { Int($0.dropLast()) })
            #expect((3590...3600).contains(ttl))
        }
    }

    @Test("404 UNREGISTERED and 400 INVALID_ARGUMENT on the token are dead tokens")
    func deadTokens() async throws {
        try await FCMStandIn.run(fcm: ["unregistered": ["gone"], "invalid": ["garbage"]]) { standIn in
            let results = try await Self.sender(standIn).send(APNsFixture.message, to: Self.devices(["ok", "gone", "garbage"]))
            #expect(results.map(\.outcome) == [.sent, .deadToken(reason: "UNREGISTERED"), .deadToken(reason: "INVALID_ARGUMENT")])
            #expect(results.map(\.attempts) == [1, 1, 1])
        }
    }

    @Test("429 is tried again after Retry-After; 503 every time fails after the bounded attempts")
    func retryAfter() async throws {
        try await FCMStandIn.run(fcm: ["retry": [
            "slow": ["count": 1, "status": 429, "retryAfter": 1],
            "down": ["count": 10, "status": 503, "retryAfter": 0],
        ]]) { standIn in
            let results = try await Self.sender(standIn).send(APNsFixture.message, to: Self.devices(["slow", "down"]))
            #expect(results[0].outcome == .sent)
            #expect(results[0].attempts == 2)
            #expect(results[0].latency >= .seconds(1))
            #expect(results[1].outcome == .failed(reason: "FCM answered 503 UNAVAILABLE 3 times", status: 503))
            #expect(results[1].attempts == 3)
            let times = try standIn.state().received.filter { $0.token == "slow" }.map(\.time)
            #expect(times.count == 2)
            if times.count == 2 {
                #expect(times[1] - times[0] >= 0.95)
            }
        }
    }

    @Test("tokens for another scope, a bad project id and a message refused whole are told before sending")
    func configuration() async throws {
        try await FCMStandIn.run { standIn in
            let playTokens = GoogleAccessTokens(account: try standIn.serviceAccount(), httpClient: standIn.httpClient)
            #expect(throws: FCMConfigurationError.scope(GoogleAccessTokens.androidPublisherScope)) {
                _ = try FCMSender(tokens: playTokens, configuration: FCMConfiguration(projectID: "kiosk-test"), httpClient: standIn.httpClient)
            }
            let tokens = GoogleAccessTokens(
                account: try standIn.serviceAccount(), scope: GoogleAccessTokens.firebaseMessagingScope, httpClient: standIn.httpClient)
            #expect(throws: FCMConfigurationError.projectID("Kiosk Test")) {
                _ = try FCMSender(tokens: tokens, configuration: FCMConfiguration(projectID: "Kiosk Test"), httpClient: standIn.httpClient)
            }
            #expect(try standIn.serviceAccount().projectID == FCMStandIn.project)
            var big = APNsFixture.message
            big.data["long"] = String(repeating: "y", count: 4100)
            await #expect(throws: PushMessageError.self) { _ = try await Self.sender(standIn).send(big, to: Self.devices(["x"])) }
            await #expect(throws: PushMessageError.empty) { _ = try await Self.sender(standIn).send(PushMessage(), to: Self.devices(["x"])) }
            #expect(try standIn.state().received.isEmpty)
        }
    }
}
