import KioskTestSupport
import Foundation
import KioskPurchases
import Testing

@Suite("Pub/Sub push authentication: OIDC tokens minted by the stand-in, keys served as its JWKS")
struct GooglePubSubPushVerifierTests {
    static let audience = "https://kiosk.example.com/store/google/notifications"
    static let pusher = "pubsub-push@kiosk-test.iam.gserviceaccount.com"

    static func claims(at now: Date, _ changes: [String: Any] = [:], removing: [String] = []) -> [String: Any] {
        let seconds = Int(now.timeIntervalSince1970.rounded(.down))
        var claims: [String: Any] = [
            "iss": "https://accounts.google.com", "aud": audience, "azp": "1234567890", "email": pusher,
            "email_verified": true, "sub": "1234567890", "iat": seconds, "exp": seconds + 3600,
        ]
        for (key, value) in changes { claims[key] = value }
        for key in removing { claims.removeValue(forKey: key) }
        return claims
    }

    static func verifier(_ standIn: GoogleStandIn, clock: MovingDateClock) -> PubSubPushVerifier {
        PubSubPushVerifier(
            audience: audience, serviceAccountEmail: pusher, keysURL: standIn.keysURL, httpClient: standIn.httpClient,
            timeout: .seconds(5),
            clock: clock.function)
    }

    @Test("a token Pub/Sub would send is accepted, with either issuer spelling; keys are fetched once")
    func validAccepted() async throws {
        try await GoogleStandIn.run { standIn in
            let clock = MovingDateClock()
            let verifier = Self.verifier(standIn, clock: clock)

            let token = try await standIn.mint(Self.claims(at: clock.now))
            let identity = try await verifier.verify(authorization: "Bearer " + token)
            #expect(identity.email == Self.pusher)
            #expect(identity.subject == "1234567890")
            let bare = try await standIn.mint(Self.claims(at: clock.now, ["iss": "accounts.google.com", "aud": [Self.audience]]))
            _ = try await verifier.verify(authorization: "bearer " + bare)
            clock.advance(by: 30)
            _ = try await verifier.verify(authorization: "Bearer " + token)
            #expect(try await standIn.state().jwksRequests == 1)
        }
    }

    @Test("tokens that are not our subscription's are refused, each with its reason")
    func refusals() async throws {
        try await GoogleStandIn.run { standIn in
            let clock = MovingDateClock()
            let verifier = Self.verifier(standIn, clock: clock)
            let now = clock.now
            let base = Self.claims(at: now)
            _ = try await verifier.verify(authorization: "Bearer " + (try await standIn.mint(base)))

            let cases: [(String, String?, PurchaseVerificationError.Reason)] = [
                ("wrong audience", "Bearer " + (try await standIn.mint(Self.claims(at: now, ["aud": "https://elsewhere.example/"]))), .wrongApp),
                ("wrong email", "Bearer " + (try await standIn.mint(Self.claims(at: now, ["email": "someone@example.com"]))), .wrongApp),
                ("email not verified", "Bearer " + (try await standIn.mint(Self.claims(at: now, ["email_verified": false]))), .wrongApp),
                ("no email_verified", "Bearer " + (try await standIn.mint(Self.claims(at: now, removing: ["email_verified"]))), .wrongApp),
                ("wrong issuer", "Bearer " + (try await standIn.mint(Self.claims(at: now, ["iss": "https://evil.example.com"]))), .wrongApp),
                ("expired", "Bearer " + (try await standIn.mint(Self.claims(at: now.addingTimeInterval(-7200)))), .time),
                ("issued in the future", "Bearer " + (try await standIn.mint(Self.claims(at: now.addingTimeInterval(600)))), .time),
                ("no exp", "Bearer " + (try await standIn.mint(Self.claims(at: now, removing: ["exp"]))), .malformed),
                ("lasting far longer than an hour", "Bearer " + (try await standIn.mint(Self.claims(
                    at: now, ["exp": Int(now.timeIntervalSince1970) + 86_400 * 365]))), .time),
                ("signed by another key under a published kid", "Bearer " + (try await standIn.mint(base, key: "oidc-other", kid: "oidc-a")), .signature),
                ("HS256", "Bearer " + (try await standIn.mint(base, alg: "HS256")), .algorithm),
                ("alg none", "Bearer " + (try await standIn.mint(base, alg: "none")), .algorithm),
                ("no header", nil, .malformed),
                ("not Bearer", "Basic dXNlcjpwYXNz", .malformed),
                ("garbage", "Bearer not-a-token", .malformed),
                ("too long", "Bearer " + String(repeating: "a", count: 10_000), .malformed),
            ]
            for (name, header, reason) in cases {
                let error = await #expect(throws: PurchaseVerificationError.self, "\(name)") {
                    _ = try await verifier.verify(authorization: header)
                }
                #expect(error?.reason == reason, "\(name): \(error?.message ?? "")")
            }
            // The tampered payload of a valid token fails its signature.
            let valid = try await standIn.mint(base)
            let parts = valid.split(separator: ".")
            let forged = try await standIn.mint(Self.claims(at: now, ["email": "attacker@example.com"]))
            let spliced = "\(parts[0]).\(forged.split(separator: ".")[1]).\(parts[2])"
            let error = await #expect(throws: PurchaseVerificationError.self) { _ = try await verifier.verify(authorization: "Bearer " + spliced) }
            #expect(error?.reason == .signature)
            #expect(try await standIn.state().jwksRequests == 1)
        }
    }

    @Test("an unknown kid makes one refresh, then is refused; more unknown kids within the interval fetch nothing")
    func unknownKid() async throws {
        try await GoogleStandIn.run { standIn in
            let clock = MovingDateClock()
            let verifier = Self.verifier(standIn, clock: clock)
            _ = try await verifier.verify(authorization: "Bearer " + (try await standIn.mint(Self.claims(at: clock.now))))
            #expect(try await standIn.state().jwksRequests == 1)

            clock.advance(by: 61)
            let unpublished = try await standIn.mint(Self.claims(at: clock.now), key: "oidc-b")
            let first = await #expect(throws: PurchaseVerificationError.self) { _ = try await verifier.verify(authorization: "Bearer " + unpublished) }
            #expect(first?.reason == .signature)
            #expect(try await standIn.state().jwksRequests == 2)

            for kid in ["made-up-1", "made-up-2", "made-up-3"] {
                let token = try await standIn.mint(Self.claims(at: clock.now), key: "oidc-b", kid: kid)
                let error = await #expect(throws: PurchaseVerificationError.self) { _ = try await verifier.verify(authorization: "Bearer " + token) }
                #expect(error?.reason == .signature)
            }
            #expect(try await standIn.state().jwksRequests == 2)

            // Google rotates in a new key: after the interval the next token naming it fetches the keys again.
            try await standIn.publish(kid: "oidc-b")
            await #expect(throws: PurchaseVerificationError.self) { _ = try await verifier.verify(authorization: "Bearer " + unpublished) }
            clock.advance(by: 61)
            let rotated = try await standIn.mint(Self.claims(at: clock.now), key: "oidc-b")
            #expect(try await verifier.verify(authorization: "Bearer " + rotated).email == Self.pusher)
            #expect(try await standIn.state().jwksRequests == 3)
        }
    }

    @Test("keys that cannot be fetched are 'unavailable', not a refusal")
    func keysUnreachable() async throws {
        try await GoogleStandIn.run { standIn in
            let token = try await standIn.mint(Self.claims(at: Date()))
            try await standIn.stop()
            let verifier = Self.verifier(standIn, clock: MovingDateClock())
            await #expect(throws: GooglePlayUnavailable.self) { _ = try await verifier.verify(authorization: "Bearer " + token) }
        }
    }
}

@Suite("Pub/Sub push bodies and Google Play developer notifications")
struct GooglePubSubPushMessageTests {
    static let packageName = "com.example.kiosk"

    static func body(_ notification: Any, attributes: [String: String] = [:]) throws -> Data {
        let data = try JSONSerialization.data(withJSONObject: notification).base64EncodedString()
        return try JSONSerialization.data(withJSONObject: [
            "message": ["data": data, "messageId": "136969346945", "message_id": "136969346945",
                        "publishTime": "2026-11-27T10:15:30.5Z", "attributes": attributes] as [String: Any],
            "subscription": "projects/kiosk/subscriptions/play-rtdn",
        ])
    }

    static func notification(_ kind: String, _ body: [String: Any], millis: Any = "1795000000123") -> [String: Any] {
        ["version": "1.0", "packageName": packageName, "eventTimeMillis": millis, kind: body]
    }

    static func subscription(_ notification: GoogleDeveloperNotification) -> GoogleDeveloperNotification.SubscriptionNotification? {
        guard case .subscription(let subscription) = notification.kind else { return nil }
        return subscription
    }

    static func decode(_ notification: Any) throws -> GoogleDeveloperNotification {
        try PubSubPushMessage(body: try body(notification), maximumSize: 65_536)
            .developerNotification(expectedPackageName: packageName)
    }

    @Test("the push envelope")
    func envelope() throws {
        let message = try PubSubPushMessage(
            body: try Self.body(Self.notification("testNotification", ["version": "1.0"]), attributes: ["k": "v"]),
            maximumSize: 65_536)
        #expect(message.subscription == "projects/kiosk/subscriptions/play-rtdn")
        #expect(message.messageID == "136969346945")
        #expect(message.attributes == ["k": "v"])
        #expect(message.publishTime == ISO8601DateFormatter().date(from: "2026-11-27T10:15:30Z").map { $0 + 0.5 })
    }

    @Test("each notification kind")
    func kinds() throws {
        let subscription = try Self.decode(Self.notification("subscriptionNotification", [
            "version": "1.0", "notificationType": 4, "purchaseToken": "tok-1", "subscriptionId": "monthly",
        ]))
        #expect(subscription.version == "1.0")
        #expect(subscription.packageName == Self.packageName)
        #expect(subscription.eventTime == Date(timeIntervalSince1970: 1_795_000_000.123))
        let purchased = try #require(Self.subscription(subscription))
        #expect(purchased.version == "1.0")
        #expect(purchased.type == .purchased)
        #expect(purchased.purchaseToken == "tok-1")
        #expect(purchased.subscriptionID == "monthly")

        for (raw, type) in [(1, GoogleDeveloperNotification.SubscriptionNotificationType.recovered), (2, .renewed), (3, .canceled),
                            (5, .onHold), (6, .inGracePeriod), (7, .restarted), (8, .priceChangeConfirmed), (9, .deferred),
                            (10, .paused), (11, .pauseScheduleChanged), (12, .revoked), (13, .expired), (20, .pendingPurchaseCanceled)] {
            let decoded = try Self.decode(Self.notification("subscriptionNotification", [
                "version": "1.0", "notificationType": raw, "purchaseToken": "t",
            ], millis: 1_795_000_000_000))
            #expect(Self.subscription(decoded)?.type == type)
            #expect(Self.subscription(decoded)?.subscriptionID == nil)
        }
        let future = try Self.decode(Self.notification("subscriptionNotification", ["notificationType": 99, "purchaseToken": "t"]))
        #expect(Self.subscription(future)?.type.rawValue == 99)

        let product = try Self.decode(Self.notification("oneTimeProductNotification", [
            "version": "1.0", "notificationType": 2, "purchaseToken": "tok-2", "sku": "issue-2026-48",
        ]))
        guard case .oneTimeProduct(let oneTime) = product.kind else { Issue.record("\(product.kind)"); return }
        #expect(oneTime.version == "1.0")
        #expect(oneTime.type == .canceled)
        #expect(oneTime.purchaseToken == "tok-2")
        #expect(oneTime.sku == "issue-2026-48")

        let voided = try Self.decode(Self.notification("voidedPurchaseNotification", [
            "purchaseToken": "tok-3", "orderId": "GPA.1-2-3", "productType": 1, "refundType": 2,
        ]))
        guard case .voidedPurchase(let void) = voided.kind else { Issue.record("\(voided.kind)"); return }
        #expect(void.purchaseToken == "tok-3")
        #expect(void.orderID == "GPA.1-2-3")
        #expect(void.productType == .subscription)
        #expect(void.refundType == 2)

        let test = try Self.decode(Self.notification("testNotification", ["version": "1.0"]))
        #expect(test.kind == .test(version: "1.0"))

        let other = try Self.decode(Self.notification("pendingRefundReviewNotification", ["purchaseToken": "t"]))
        #expect(other.kind == .other("pendingRefundReviewNotification"))
    }

    @Test("garbage is refused as malformed; another app's notification as wrongApp")
    func garbage() throws {
        let oversized = try Self.body(Self.notification("testNotification", ["version": String(repeating: "x", count: 2000)]))
        let bodies: [(String, Data)] = [
            ("not JSON", Data("{{{".utf8)),
            ("a JSON array", Data("[]".utf8)),
            ("no message", Data(#"{"subscription": "s"}"#.utf8)),
            ("no subscription", Data(#"{"message": {"messageId": "1", "data": ""}}"#.utf8)),
            ("no messageId", Data(#"{"message": {"data": ""}, "subscription": "s"}"#.utf8)),
            ("data not base64", Data(#"{"message": {"messageId": "1", "data": "***"}, "subscription": "s"}"#.utf8)),
            ("attributes not strings", Data(#"{"message": {"messageId": "1", "attributes": {"a": 1}}, "subscription": "s"}"#.utf8)),
        ]
        for (name, body) in bodies {
            let error = #expect(throws: PurchaseVerificationError.self, "\(name)") { _ = try PubSubPushMessage(body: body, maximumSize: 65_536) }
            #expect(error?.reason == .malformed, "\(name)")
        }
        #expect(throws: PurchaseVerificationError.self) { _ = try PubSubPushMessage(body: oversized, maximumSize: 1024) }

        let notifications: [(String, Any)] = [
            ("data not JSON", "plain text"),
            ("no packageName", ["eventTimeMillis": "1", "testNotification": ["version": "1.0"]]),
            ("no eventTimeMillis", ["packageName": Self.packageName, "testNotification": ["version": "1.0"]]),
            ("eventTimeMillis not a number", Self.notification("testNotification", [:], millis: "soon")),
            ("two kinds", ["packageName": Self.packageName, "eventTimeMillis": "1", "testNotification": [:] as [String: Any],
                           "subscriptionNotification": ["notificationType": 1, "purchaseToken": "t"]]),
            ("kind not an object", Self.notification("subscriptionNotification", [:]).merging(["subscriptionNotification": 4]) { $1 }),
            ("no purchaseToken", Self.notification("subscriptionNotification", ["notificationType": 4])),
            ("notificationType not a number", Self.notification("subscriptionNotification", ["notificationType": "four", "purchaseToken": "t"])),
            ("no sku", Self.notification("oneTimeProductNotification", ["notificationType": 1, "purchaseToken": "t"])),
            ("no orderId", Self.notification("voidedPurchaseNotification", ["purchaseToken": "t", "productType": 2])),
        ]
        for (name, notification) in notifications {
            let data: Data =
                if let text = notification as? String { try JSONSerialization.data(withJSONObject: ["message": ["messageId": "1", "data": Data(text.utf8).base64EncodedString()], "subscription": "s"]) } else { try Self.body(notification) }
            let error = #expect(throws: PurchaseVerificationError.self, "\(name)") {
                _ = try PubSubPushMessage(body: data, maximumSize: 65_536).developerNotification(expectedPackageName: Self.packageName)
            }
            #expect(error?.reason == .malformed, "\(name): \(error?.message ?? "")")
        }

        let elsewhere = try Self.body(["packageName": "com.example.other", "eventTimeMillis": "1", "testNotification": ["version": "1.0"]])
        let error = #expect(throws: PurchaseVerificationError.self) {
            _ = try PubSubPushMessage(body: elsewhere, maximumSize: 65_536).developerNotification(expectedPackageName: Self.packageName)
        }
        #expect(error?.reason == .wrongApp)
    }
}
