import KioskTestSupport
import Foundation
import KioskGoogleAuth
import KioskPurchases
import Testing

@Suite("Google service-account access tokens, against the stand-in's token endpoint")
struct GoogleAccessTokensTests {
    @Test("a token is fetched once, reused until shortly before it expires, then fetched again")
    func reuseThenRefresh() async throws {
        try await GoogleStandIn.run(purchases: [
            "subscriptions": ["sub-1": ["subscriptionState": "SUBSCRIPTION_STATE_ACTIVE", "lineItems": [["productId": "monthly"]]]]
        ]) { standIn in
            // The first assertion is signed 3550 s in the past (still valid for the stand-in), so moving the clock
            // to now makes the kept token (3599 s) due for refresh while the new assertion is signed at real time.
            let clock = MovingDateClock(Date().addingTimeInterval(-3550))
            let tokens = GoogleAccessTokens(account: try standIn.serviceAccount(), httpClient: standIn.httpClient, clock: clock.function)
            #expect(tokens.tokenURL == standIn.baseURL + "/token")

            let first = try await tokens.accessToken()
            #expect(try await tokens.accessToken() == first)
            clock.advance(by: 3000)
            #expect(try await tokens.accessToken() == first)
            let api = PlayDeveloperAPI(
                packageName: GoogleStandIn.packageName, tokens: tokens, baseURL: standIn.baseURL, httpClient: standIn.httpClient)
            _ = try await api.subscription(token: "sub-1")
            _ = try await api.subscription(token: "sub-1")
            #expect(try await standIn.state().tokenRequests == 1)

            clock.advance(by: 550)
            let second = try await tokens.accessToken()
            #expect(second != first)
            #expect(try await tokens.accessToken() == second)
            _ = try await api.subscription(token: "sub-1")
            let state = try await standIn.state()
            #expect(state.tokenRequests == 2)
            #expect(state.tokenRefusals.isEmpty)
        }
    }

    @Test("callers asking at the same time share one fetch")
    func concurrentCallersShareOneFetch() async throws {
        try await GoogleStandIn.run { standIn in
            let tokens = GoogleAccessTokens(account: try standIn.serviceAccount(), httpClient: standIn.httpClient)
            let got = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<16 {
                    group.addTask { try await tokens.accessToken() }
                }
                var all: Set<String> = []
                for try await token in group { all.insert(token) }
                return all
            }
            #expect(got.count == 1)
            #expect(try await standIn.state().tokenRequests == 1)
        }
    }

    @Test("a key the token endpoint refuses is 'unavailable', names the account, and shows no secret")
    func refusedKeyIsUnavailable() async throws {
        try await GoogleStandIn.run(purchases: ["subscriptions": ["sub-1": ["lineItems": []]]]) { standIn in
            let account = try standIn.serviceAccount(wrongKey: true)
            let tokens = GoogleAccessTokens(account: account, httpClient: standIn.httpClient)
            let error = await #expect(throws: GooglePlayUnavailable.self) { try await tokens.accessToken() }
            #expect(error?.status == 400)
            #expect(error?.message.contains("invalid_grant") == true)
            #expect(error?.message.contains(GoogleStandIn.clientEmail) == true)
            let keyFile = try String(contentsOf: standIn.wrongServiceAccountFile, encoding: .utf8)
            #expect(error.map { !keyFile.contains($0.message) && !$0.message.contains("PRIVATE KEY") } == true)

            let api = PlayDeveloperAPI(
                packageName: GoogleStandIn.packageName, tokens: tokens, baseURL: standIn.baseURL, httpClient: standIn.httpClient)
            await #expect(throws: GooglePlayUnavailable.self) { _ = try await api.subscription(token: "sub-1") }
            let state = try await standIn.state()
            #expect(state.tokenRefusals == ["signature", "signature"])
            #expect(state.apiCalls.isEmpty)
        }
    }

    @Test("an unreachable token endpoint is 'unavailable'")
    func unreachableTokenEndpoint() async throws {
        try await GoogleStandIn.run { standIn in
            let account = try standIn.serviceAccount()
            try await standIn.stop()
            let tokens = GoogleAccessTokens(
                account: account, tokenURL: standIn.baseURL + "/token", httpClient: standIn.httpClient, timeout: .seconds(5))
            let error = await #expect(throws: GooglePlayUnavailable.self) { try await tokens.accessToken() }
            #expect(error?.status == nil)
        }
    }

    @Test("key files that are not service account keys are refused without quoting them")
    func invalidKeyFiles() throws {
        let secretish = "-----BEGIN PRIVATE KEY-----\nTm90QVJlYWxLZXk=\n-----END PRIVATE KEY-----\n"
        let cases: [(String, String)] = [
            ("not json", "not a JSON object"),
            (#"{"type": "authorized_user", "client_email": "a@b", "private_key_id": "k", "private_key": "x"}"#, "type"),
            (#"{"type": "service_account", "private_key_id": "k", "private_key": "x"}"#, "client_email"),
            (#"{"type": "service_account", "client_email": "a@b", "private_key": "x"}"#, "private_key_id"),
            (try String(data: JSONSerialization.data(withJSONObject: [
                "type": "service_account", "client_email": "a@b", "private_key_id": "k", "private_key": secretish,
            ]), encoding: .utf8) ?? "", "not a PEM RSA private key"),
        ]
        for (json, expected) in cases {
            let error = #expect(throws: GoogleServiceAccount.InvalidKeyFile.self) {
                _ = try GoogleServiceAccount(json: Data(json.utf8))
            }
            #expect(error?.message.contains(expected) == true, "\(json)")
            #expect(error?.message.contains("Tm90") == false)
        }
    }
}
