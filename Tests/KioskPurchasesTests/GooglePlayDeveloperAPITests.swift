import Foundation
import KioskGoogleAuth
import KioskPurchases
import Testing

@Suite("Play Developer API client, against the stand-in")
struct GooglePlayDeveloperAPITests {
    /// An opaque token with characters that must be percent-encoded in a path segment.
    static let oddToken = "opaque/tok:en?#%é 1"

    static var subscription: [String: Any] {
        [
        "kind": "androidpublisher#subscriptionPurchaseV2",
        "regionCode": "DE",
        "startTime": "2026-11-01T09:30:00.123456789Z",
        "subscriptionState": "SUBSCRIPTION_STATE_ACTIVE",
        "latestOrderId": "GPA.3333-4444-5555-66666",
        "linkedPurchaseToken": "older-token",
        "acknowledgementState": "ACKNOWLEDGEMENT_STATE_PENDING",
        "externalAccountIdentifiers": ["obfuscatedExternalAccountId": "reader-42"],
        "testPurchase": [:] as [String: Any],
        "lineItems": [
            ["productId": "monthly", "expiryTime": "2026-12-01T09:30:00Z",
             "autoRenewingPlan": ["autoRenewEnabled": true, "recurringPrice": ["currencyCode": "EUR", "units": "9", "nanos": 990_000_000]],
             "offerDetails": ["basePlanId": "p1m"]],
            ["productId": "addon", "expiryTime": "2026-12-15T10:30:00+01:00", "prepaidPlan": [:] as [String: Any],
             "offerPhase": ["freeTrial": [:] as [String: Any]]],
        ],
        "futureField": ["anything": 1],
        ]
    }

    static var purchases: [String: Any] {
        [
        "subscriptions": [
            oddToken: subscription,
            "canceled": [
                "subscriptionState": "SUBSCRIPTION_STATE_CANCELED", "acknowledgementState": "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED",
                "lineItems": [["productId": "monthly", "expiryTime": "2026-12-01T09:30:00Z", "autoRenewingPlan": [
                    "recurringPrice": ["currencyCode": "JPY", "units": "9223372036854775807"]]]],
                "canceledStateContext": ["userInitiatedCancellation": ["cancelTime": "2026-11-20T08:00:00Z"]],
            ],
            "new-state": ["subscriptionState": "SUBSCRIPTION_STATE_SOMETHING_NEW", "lineItems": [["productId": "monthly"]]],
            "gone": ["_status": 410],
            "busy": ["_status": 503],
            "limited": ["_status": 429],
            "slow": ["_delay": 3, "lineItems": []],
        ],
        "products": [
            "issue-2026-48": [
                oddToken: [
                    "kind": "androidpublisher#productPurchase", "purchaseTimeMillis": "1795000000123", "purchaseState": 0,
                    "consumptionState": 0, "orderId": "GPA.1234-5678-9012-34567", "purchaseType": 0,
                    "acknowledgementState": 0, "regionCode": "FR", "obfuscatedExternalAccountId": "reader-7",
                    "quantity": 1,
                ],
                "pending": ["purchaseTimeMillis": "1795000000000", "purchaseState": 2, "acknowledgementState": 0],
                "odd-state": ["purchaseTimeMillis": 1795000000000, "purchaseState": 7, "consumptionState": 1, "acknowledgementState": 1],
            ]
        ],
        ]
    }

    static func api(_ standIn: GoogleStandIn, timeout: Int64 = 10) throws -> PlayDeveloperAPI {
        PlayDeveloperAPI(
            packageName: GoogleStandIn.packageName,
            tokens: GoogleAccessTokens(account: try standIn.serviceAccount(), httpClient: standIn.httpClient),
            baseURL: standIn.baseURL + "/", httpClient: standIn.httpClient, timeout: .seconds(timeout))
    }

    static func date(_ text: String) -> Date? { ISO8601DateFormatter().date(from: text) }

    @Test("purchases.subscriptionsv2.get is decoded; unknown states are kept")
    func subscriptionDecoded() async throws {
        try await GoogleStandIn.run(purchases: Self.purchases) { standIn in
            let api = try Self.api(standIn)

            let purchase = try await api.subscription(token: Self.oddToken)
            #expect(purchase.state == .active)
            #expect(purchase.acknowledgementState == .pending)
            #expect(purchase.latestOrderID == "GPA.3333-4444-5555-66666")
            #expect(purchase.linkedPurchaseToken == "older-token")
            #expect(purchase.obfuscatedExternalAccountID == "reader-42")
            #expect(purchase.isTestPurchase)
            #expect(purchase.regionCode == "DE")
            #expect(purchase.cancellation == nil)
            let start = try #require(purchase.startTime)
            #expect(abs(start.timeIntervalSince1970 - (try #require(Self.date("2026-11-01T09:30:00Z"))).timeIntervalSince1970 - 0.123456789) < 1e-6)
            #expect(purchase.lineItems.map(\.productID) == ["monthly", "addon"])
            #expect(purchase.lineItems.map(\.autoRenewEnabled) == [true, nil])
            #expect(purchase.lineItems.map(\.price) == [9_990, nil])
            #expect(purchase.lineItems.map(\.currency) == ["EUR", nil])
            #expect(purchase.lineItems.map(\.isFreeTrial) == [false, true])
            #expect(purchase.lineItems[0].expiryTime == Self.date("2026-12-01T09:30:00Z"))
            #expect(purchase.lineItems[1].expiryTime == Self.date("2026-12-15T09:30:00Z"))
            #expect(purchase.expiryTime == Self.date("2026-12-15T09:30:00Z"))

            let canceled = try await api.subscription(token: "canceled")
            #expect(canceled.state == .canceled)
            #expect(canceled.acknowledgementState == .acknowledged)
            #expect(canceled.isTestPurchase == false)
            #expect(canceled.lineItems.first?.autoRenewEnabled == false)
            #expect(canceled.lineItems.first?.price == nil, "a price past Int64 in thousandths is left unknown, not trapped on")
            #expect(canceled.lineItems.first?.currency == nil)
            #expect(canceled.cancellation?.initiator == "user")
            #expect(canceled.cancellation?.cancelTime == Self.date("2026-11-20T08:00:00Z"))

            let newer = try await api.subscription(token: "new-state")
            #expect(newer.state.rawValue == "SUBSCRIPTION_STATE_SOMETHING_NEW")
            #expect(newer.acknowledgementState == .unspecified)

            let calls = try await standIn.state().apiCalls
            #expect(calls.first == .init(method: "GET", segments: [GoogleStandIn.packageName, "purchases", "subscriptionsv2", "tokens", Self.oddToken], action: nil))
        }
    }

    @Test("purchases.products.get is decoded; unknown states are kept")
    func productDecoded() async throws {
        try await GoogleStandIn.run(purchases: Self.purchases) { standIn in
            let api = try Self.api(standIn)

            let purchase = try await api.product("issue-2026-48", token: Self.oddToken)
            #expect(purchase.purchaseState == .purchased)
            #expect(purchase.consumptionState == .notConsumed)
            #expect(purchase.acknowledgementState == .notAcknowledged)
            #expect(purchase.orderID == "GPA.1234-5678-9012-34567")
            #expect(purchase.purchaseTime == Date(timeIntervalSince1970: 1_795_000_000.123))
            #expect(purchase.obfuscatedExternalAccountID == "reader-7")
            #expect(purchase.quantity == 1)
            #expect(purchase.regionCode == "FR")
            #expect(purchase.purchaseType == .test)
            #expect(purchase.isTestPurchase)

            let pending = try await api.product("issue-2026-48", token: "pending")
            #expect(pending.purchaseState == .pending)
            #expect(pending.purchaseType == nil)
            #expect(pending.isTestPurchase == false)

            let odd = try await api.product("issue-2026-48", token: "odd-state")
            #expect(odd.purchaseState.rawValue == 7)
            #expect(odd.consumptionState == .consumed)
            #expect(odd.acknowledgementState == .acknowledged)
            #expect(odd.purchaseTime == Date(timeIntervalSince1970: 1_795_000_000))
        }
    }

    @Test("acknowledge and consume reach the right paths; doing them again counts as done")
    func acknowledgeAndConsume() async throws {
        try await GoogleStandIn.run(purchases: Self.purchases) { standIn in
            let api = try Self.api(standIn)

            try await api.acknowledgeSubscription("monthly", token: Self.oddToken)
            try await api.acknowledgeProduct("issue-2026-48", token: Self.oddToken)
            try await api.consumeProduct("issue-2026-48", token: Self.oddToken)
            #expect(try await api.subscription(token: Self.oddToken).acknowledgementState == .acknowledged)
            let product = try await api.product("issue-2026-48", token: Self.oddToken)
            #expect(product.acknowledgementState == .acknowledged)
            #expect(product.consumptionState == .consumed)

            // Google refuses a second acknowledgement (400 invalidPurchaseState); the client reads the purchase,
            // sees it acknowledged, and returns.
            try await api.acknowledgeSubscription("monthly", token: Self.oddToken)
            try await api.consumeProduct("issue-2026-48", token: Self.oddToken)

            // A purchase that is not acknowledged and cannot be: the refusal stands.
            await #expect(throws: PurchaseVerificationError.self) {
                try await api.acknowledgeSubscription("yearly", token: Self.oddToken)
            }

            let state = try await standIn.state()
            #expect(state.acknowledged == [
                .init(kind: "subscription", id: "monthly", token: Self.oddToken),
                .init(kind: "product", id: "issue-2026-48", token: Self.oddToken),
            ])
            #expect(state.consumed == [.init(kind: "product", id: "issue-2026-48", token: Self.oddToken)])
            let posts = state.apiCalls.filter { $0.method == "POST" }
            #expect(posts.map(\.action) == ["acknowledge", "acknowledge", "consume", "acknowledge", "consume", "acknowledge"])
            #expect(posts.first?.segments == [GoogleStandIn.packageName, "purchases", "subscriptions", "monthly", "tokens", Self.oddToken])
            #expect(posts.dropFirst().first?.segments == [GoogleStandIn.packageName, "purchases", "products", "issue-2026-48", "tokens", Self.oddToken])
            #expect(state.tokenRequests == 1)
        }
    }

    @Test("a token Google does not know, or no longer describes, is refused")
    func unknownTokenRefused() async throws {
        try await GoogleStandIn.run(purchases: Self.purchases) { standIn in
            let api = try Self.api(standIn)

            let unknown = await #expect(throws: PurchaseVerificationError.self) { _ = try await api.subscription(token: "never-sold") }
            #expect(unknown?.reason == .unknownPurchase)
            #expect(unknown?.message.contains("404") == true)
            #expect(unknown?.message.contains("never-sold") == false)
            let product = await #expect(throws: PurchaseVerificationError.self) { _ = try await api.product("issue-2026-48", token: "never-sold") }
            #expect(product?.reason == .unknownPurchase)
            let gone = await #expect(throws: PurchaseVerificationError.self) { _ = try await api.subscription(token: "gone") }
            #expect(gone?.reason == .unknownPurchase)
            await #expect(throws: PurchaseVerificationError.self) { try await api.consumeProduct("issue-2026-48", token: "never-sold") }

            let otherApp = PlayDeveloperAPI(
                packageName: "com.example.other",
                tokens: GoogleAccessTokens(account: try standIn.serviceAccount(), httpClient: standIn.httpClient),
                baseURL: standIn.baseURL, httpClient: standIn.httpClient)
            await #expect(throws: PurchaseVerificationError.self) { _ = try await otherApp.subscription(token: Self.oddToken) }
        }
    }

    @Test("503, 429, a slow answer and a closed port are 'unavailable', never 'refused'")
    func unavailable() async throws {
        try await GoogleStandIn.run(purchases: Self.purchases) { standIn in
            let api = try Self.api(standIn, timeout: 1)
            let account = try standIn.serviceAccount()

            let busy = await #expect(throws: GooglePlayUnavailable.self) { _ = try await api.subscription(token: "busy") }
            #expect(busy?.status == 503)
            let limited = await #expect(throws: GooglePlayUnavailable.self) { _ = try await api.subscription(token: "limited") }
            #expect(limited?.status == 429)
            let started = Date()
            let slow = await #expect(throws: GooglePlayUnavailable.self) { _ = try await api.subscription(token: "slow") }
            #expect(slow?.status == nil)
            #expect(Date().timeIntervalSince(started) < 2.5)
            for error in [busy, limited, slow].compactMap({ $0 }) {
                #expect(!error.message.contains("ya29."), "no access token in \(error.message)")
            }
            try await standIn.stop()

            let closed = PlayDeveloperAPI(
                packageName: GoogleStandIn.packageName, tokens: GoogleAccessTokens(account: account, httpClient: standIn.httpClient),
                baseURL: standIn.baseURL, httpClient: standIn.httpClient)
            await #expect(throws: GooglePlayUnavailable.self) { _ = try await closed.subscription(token: "busy") }
        }
    }
}
