import AsyncHTTPClient
import Foundation
import KioskGoogleAuth
import KioskPurchases
import NIOSSL
import Testing

@Suite("The Google stand-in serves HTTPS only, and the trust the tests give the code under test is real")
struct GoogleStandInTLSTests {
    static var purchases: [String: Any] {
        ["subscriptions": ["sub-1": ["subscriptionState": "SUBSCRIPTION_STATE_ACTIVE", "lineItems": [["productId": "monthly"]]]]]
    }

    static let audience = "https://kiosk.example.com/store/google/notifications"
    static let pusher = "pubsub-push@kiosk-test.iam.gserviceaccount.com"

    /// A push token Pub/Sub would send for `audience` as `pusher`, valid now.
    static func pushToken(_ standIn: GoogleStandIn) async throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        return try await standIn.mint([
            "iss": "https://accounts.google.com", "aud": audience, "email": pusher, "email_verified": true,
            "sub": "1234567890", "iat": now, "exp": now + 3600,
        ])
    }

    static func verifier(keysURL: String, client: HTTPClient, timeout: Duration = .seconds(10)) -> PubSubPushVerifier {
        PubSubPushVerifier(audience: audience, serviceAccountEmail: pusher, keysURL: keysURL, httpClient: client, timeout: timeout)
    }

    /// Each of the three endpoints reached with `client`, at the same time: the token endpoint, the Play
    /// Developer API (with a token got through the trusted client, so only the API call uses `client`) and the
    /// OIDC keys. Each must fail as `GooglePlayUnavailable` with no HTTP status: no answer came.
    static func expectAllUnavailable(
        _ standIn: GoogleStandIn, with client: HTTPClient, baseURL: String? = nil, _ name: String
    ) async throws {
        let base = baseURL ?? standIn.baseURL
        let timeout = Duration.seconds(3)
        let account = try standIn.serviceAccount()
        let pushToken = try await Self.pushToken(standIn)
        async let token: GooglePlayUnavailable? = {
            let tokens = GoogleAccessTokens(account: account, tokenURL: base + "/token", httpClient: client, timeout: timeout)
            return await #expect(throws: GooglePlayUnavailable.self, "\(name): token endpoint") { _ = try await tokens.accessToken() }
        }()
        async let call: GooglePlayUnavailable? = {
            let trustedTokens = GoogleAccessTokens(account: account, httpClient: standIn.httpClient)
            let api = PlayDeveloperAPI(
                packageName: GoogleStandIn.packageName, tokens: trustedTokens, baseURL: base, httpClient: client, timeout: timeout)
            return await #expect(throws: GooglePlayUnavailable.self, "\(name): Play Developer API") {
                _ = try await api.subscription(token: "sub-1")
            }
        }()
        async let keys: GooglePlayUnavailable? = {
            let verifier = Self.verifier(keysURL: base + "/oauth2/v3/certs", client: client, timeout: timeout)
            return await #expect(throws: GooglePlayUnavailable.self, "\(name): OIDC keys") {
                _ = try await verifier.verify(authorization: "Bearer " + pushToken)
            }
        }()
        for error in await [token, call, keys] {
            #expect(error?.status == nil, "\(name): \(error?.message ?? "")")
        }
    }

    /// The stand-in's state once a handshake failure naming `reason` (Python's ssl error, e.g.
    /// "TLSV1_ALERT_UNKNOWN_CA") is recorded after the first `count`, or after 10 s. A client may give up (its
    /// deadline) before the stand-in's thread for that connection has run the handshake, so the failure can be
    /// recorded a little after the call returned.
    static func state(_ standIn: GoogleStandIn, failure reason: String, after count: Int) async throws -> StandInState {
        let clock = ContinuousClock()
        let start = clock.now
        while true {
            let state = try await standIn.state()
            if state.tlsFailures.dropFirst(count).contains(where: { $0.contains(reason) }) || clock.now - start > .seconds(10) {
                return state
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    @Test("only a client trusting the test authority gets through, over TLS 1.2 or newer; each other client is 'unavailable'")
    func onlyTheTestAuthorityIsTrusted() async throws {
        try await GoogleStandIn.run(purchases: Self.purchases) { standIn in
            // The harness's client reaches all three endpoints.
            let tokens = GoogleAccessTokens(account: try standIn.serviceAccount(), httpClient: standIn.httpClient)
            let api = PlayDeveloperAPI(
                packageName: GoogleStandIn.packageName, tokens: tokens, baseURL: standIn.baseURL, httpClient: standIn.httpClient)
            #expect(try await api.subscription(token: "sub-1").state == .active)
            let verifier = Self.verifier(keysURL: standIn.keysURL, client: standIn.httpClient)
            #expect(try await verifier.verify(authorization: "Bearer " + (try await Self.pushToken(standIn))).email == Self.pusher)
            var state = try await standIn.state()
            #expect(state.tokenRequests == 1)
            #expect(state.apiCalls.count == 1)
            #expect(state.jwksRequests == 1)
            #expect(!state.tlsVersions.isEmpty)
            #expect(state.tlsVersions.allSatisfy { $0 == "TLSv1.2" || $0 == "TLSv1.3" }, "\(state.tlsVersions)")
            #expect(state.tlsFailures.isEmpty, "\(state.tlsFailures)")

            // The system's trust store (the default `.shared` client): the test authority is not in it.
            var failures = state.tlsFailures.count
            try await Self.expectAllUnavailable(standIn, with: .shared, "default trust store")
            state = try await Self.state(standIn, failure: "TLSV1_ALERT_UNKNOWN_CA", after: failures)
            #expect(state.tlsFailures.dropFirst(failures).contains { $0.contains("TLSV1_ALERT_UNKNOWN_CA") },
                    "the client refused the stand-in's certificate: \(state.tlsFailures)")
            failures = state.tlsFailures.count

            // Another authority, which signed nothing the stand-in serves.
            try await GoogleStandIn.using(try GoogleStandIn.client(trusting: standIn.otherCAFile)) { client in
                try await Self.expectAllUnavailable(standIn, with: client, "another authority")
            }
            state = try await Self.state(standIn, failure: "TLSV1_ALERT_UNKNOWN_CA", after: failures)
            #expect(state.tlsFailures.dropFirst(failures).contains { $0.contains("TLSV1_ALERT_UNKNOWN_CA") }, "\(state.tlsFailures)")
            failures = state.tlsFailures.count

            // The right authority, but TLS 1.1 at most: the stand-in refuses anything older than 1.2.
            try await GoogleStandIn.using(
                try GoogleStandIn.client(trusting: standIn.caFile, minimumTLSVersion: .tlsv1, maximumTLSVersion: .tlsv11)
            ) { client in
                try await Self.expectAllUnavailable(standIn, with: client, "TLS 1.1")
            }
            state = try await Self.state(standIn, failure: "UNSUPPORTED_PROTOCOL", after: failures)
            #expect(state.tlsFailures.dropFirst(failures).contains { $0.contains("UNSUPPORTED_PROTOCOL") }, "\(state.tlsFailures)")
            failures = state.tlsFailures.count

            // Plain HTTP to the stand-in's port: it does not answer it.
            try await Self.expectAllUnavailable(
                standIn, with: standIn.httpClient, baseURL: "http://127.0.0.1:\(standIn.port)", "plain HTTP")
            state = try await Self.state(standIn, failure: "HTTP_REQUEST", after: failures)
            #expect(state.tlsFailures.dropFirst(failures).contains { $0.contains("HTTP_REQUEST") }, "\(state.tlsFailures)")

            // None of the failed clients reached an endpoint: the counts are those of the trusted client's calls
            // (one more token request, made for the API attempts through the trusted client, and no API call).
            #expect(state.tokenRequests == 5)
            #expect(state.apiCalls.count == 1)
            #expect(state.jwksRequests == 1)
            #expect(state.errors.isEmpty)
        }
    }
}
