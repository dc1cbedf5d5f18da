import Foundation
import KioskGoogleAuth
import KioskModels
import KioskPurchases
import Testing

/// What a store check threw, or nil if it passed.
func storeError<T>(_ operation: () async throws -> T) async -> PurchaseError? {
    do {
        _ = try await operation()
        return nil
    } catch let error as PurchaseError {
        return error
    } catch {
        Issue.record("not a PurchaseError: \(error)")
        return nil
    }
}

extension PurchaseError {
    /// The reason of an `unverifiable`, nil for any other case.
    var unverifiableReason: String? {
        if case .unverifiable(let reason) = self { reason } else { nil }
    }

    var isStoreUnavailable: Bool {
        if case .storeUnavailable = self { true } else { false }
    }
}

/// Unix seconds and milliseconds of the tests' times.
enum StoreTime {
    static func seconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }
    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    static func seconds(_ text: String) -> Int64 {
        seconds(ISO8601DateFormatter().date(from: text) ?? Date(timeIntervalSince1970: 0))
    }
}

@Suite("StoreChecks: App Store proofs and notices in Kiosk's terms")
struct StoreChecksAppleTests {
    let authority: AppleTestAuthority
    let checks: StoreChecks
    static let appKey = "quiosc"
    static let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
    static let signedDate = AppleTestAuthority.signedDate
    static let purchaseDate = signedDate.addingTimeInterval(-3600)
    static let expiresDate = signedDate.addingTimeInterval(30 * 86400)
    static let sandboxToo = AppleStoreIdentity(
        bundleId: AppleTestAuthority.bundleId, appAppleId: Int64(AppleTestAuthority.appAppleId), environments: [.production, .sandbox])

    init() throws {
        authority = try AppleTestAuthority()
        checks = StoreChecks(
            apps: [
                Self.appKey: .init(apple: AppleTestAuthority.identity, googlePackageName: "com.example.kiosk"),
                "sandbox": .init(apple: Self.sandboxToo),
                "android-only": .init(googlePackageName: "com.example.android"),
            ],
            apple: try authority.verifier(), google: nil)
    }

    func body(_ signedPayload: String) -> [UInt8] {
        Array(#"{"signedPayload":"\#(signedPayload)"}"#.utf8)
    }

    func notice(_ signedPayload: String, appKey: String = Self.appKey) async throws -> StoreNotice {
        try await checks.notice(store: .apple, appKey: appKey, body: body(signedPayload), authorization: nil)
    }

    @Test("a subscription's transaction: its ids, product, environment, account token and paid period")
    func subscriptionTransaction() async throws {
        let facts = try await checks.verify(.apple(signedTransaction: try authority.transaction()), appKey: Self.appKey, kind: .subscription)
        #expect(facts.store == .apple)
        #expect(facts.originalID == "2000000123450000")
        #expect(facts.storeProductID == "kiosk.monthly")
        #expect(facts.environment == "Production")
        #expect(facts.accountToken == Self.token)
        #expect(facts.grace == nil)
        let paidAt = StoreTime.seconds(Self.purchaseDate)
        #expect(facts.payment == StorePayment(
            id: "2000000123456789", paidAt: paidAt, period: PaidPeriod(start: paidAt, end: StoreTime.seconds(Self.expiresDate)),
            revoked: false, price: 4990, currency: "EUR", signedAt: StoreTime.milliseconds(Self.signedDate)))
    }

    @Test("a one-time product's transaction pays for no period; no account token is nil; Sandbox is kept")
    func oneTimeTransaction() async throws {
        let payload = AppleTestAuthority.transactionPayload(["type": "Consumable", "productId": "kiosk.issue", "environment": "Sandbox"])
            .removingKeys(["expiresDate", "appAccountToken"])
        let facts = try await checks.verify(.apple(signedTransaction: try authority.sign(payload)), appKey: "sandbox", kind: .issue)
        #expect(facts.storeProductID == "kiosk.issue")
        #expect(facts.environment == "Sandbox")
        #expect(facts.accountToken == nil)
        #expect(facts.payment?.period == nil)
        #expect(facts.payment?.revoked == false)

        // The kind asked for decides: a product registered as an issue pays for no period, whatever Apple's dates.
        let asIssue = try await checks.verify(.apple(signedTransaction: try authority.transaction()), appKey: Self.appKey, kind: .credits)
        #expect(asIssue.payment?.period == nil)
        // A subscription's transaction without an expiry (never seen from Apple) pays for no period either.
        let noExpiry = try authority.sign(AppleTestAuthority.transactionPayload().removingKeys(["expiresDate"]))
        #expect(try await checks.verify(.apple(signedTransaction: noExpiry), appKey: Self.appKey, kind: .subscription).payment?.period == nil)
    }

    @Test("a refunded transaction is a revoked payment")
    func revokedTransaction() async throws {
        let jws = try authority.transaction([
            "revocationDate": AppleTestAuthority.milliseconds(Self.signedDate), "revocationReason": 0,
        ])
        let facts = try await checks.verify(.apple(signedTransaction: jws), appKey: Self.appKey, kind: .subscription)
        #expect(facts.payment?.revoked == true)
        #expect(facts.payment?.id == "2000000123456789")
    }

    @Test("refusals are unverifiable, with the reason in words")
    func refusals() async throws {
        let transaction = try authority.transaction()
        let notSold = await storeError { try await checks.verify(.apple(signedTransaction: transaction), appKey: "android-only", kind: .issue) }
        #expect(notSold == .unverifiable("app android-only does not sell in the App Store"))
        let unknownApp = await storeError { try await checks.verify(.apple(signedTransaction: transaction), appKey: "nobody", kind: .issue) }
        #expect(unknownApp == .unverifiable("app nobody does not sell in the App Store"))

        let cases: [(String, String, String)] = [
            ("another bundle", try authority.transaction(["bundleId": "com.example.other"]), "bundle com.example.other"),
            ("Sandbox where only Production is accepted", try authority.transaction(["environment": "Sandbox"]), "Sandbox environment"),
            ("a tampered signature", try AppleTestAuthority.tamperingSignature(transaction), "signature"),
            ("not a JWS", "not.a-jws", "JWS"),
            ("another authority", try AppleTestAuthority().transaction(), "certificate chain"),
        ]
        for (name, jws, words) in cases {
            let error = await storeError { try await checks.verify(.apple(signedTransaction: jws), appKey: Self.appKey, kind: .subscription) }
            let reason = try #require(error?.unverifiableReason, "\(name): \(String(describing: error))")
            #expect(reason.contains(words), "\(name): \(reason)")
        }

        let unconfigured = StoreChecks(apps: [Self.appKey: .init(apple: AppleTestAuthority.identity)], apple: nil, google: nil)
        let noRoots = await storeError { try await unconfigured.verify(.apple(signedTransaction: transaction), appKey: Self.appKey, kind: .issue) }
        #expect(noRoots?.unverifiableReason?.contains("not set up to verify App Store purchases") == true)
        let noRootsNotice = await storeError {
            try await unconfigured.notice(store: .apple, appKey: Self.appKey, body: body(try authority.notification()), authorization: nil)
        }
        #expect(noRootsNotice?.unverifiableReason != nil)
    }

    @Test("a renewal notice: its id, type, subtype, the transaction and the renewal info's (absent) grace")
    func renewalNotice() async throws {
        let notice = try await self.notice(try authority.notification(["notificationType": "DID_RENEW", "subtype": ""]))
        #expect(notice.store == .apple)
        #expect(notice.id == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(notice.type == "DID_RENEW")
        #expect(notice.subtype == "")
        let facts = try #require(notice.facts)
        let direct = try await checks.verify(.apple(signedTransaction: try authority.transaction()), appKey: Self.appKey, kind: .subscription)
        #expect(facts.originalID == direct.originalID)
        #expect(facts.payment == direct.payment)
        #expect(facts.accountToken == Self.token)
        #expect(facts.grace == GraceFact(until: nil, signedAt: StoreTime.milliseconds(Self.signedDate)))

        let initial = try await self.notice(try authority.notification())
        #expect(initial.type == "SUBSCRIBED")
        #expect(initial.subtype == "INITIAL_BUY")
    }

    @Test("a failed renewal in its grace period: the grace's end and the renewal info's signing time")
    func graceNotice() async throws {
        let graceEnd = Self.expiresDate.addingTimeInterval(16 * 86400)
        let renewalSigned = Self.signedDate.addingTimeInterval(30)
        let renewal = try authority.renewalInfo([
            "gracePeriodExpiresDate": AppleTestAuthority.milliseconds(graceEnd), "isInBillingRetryPeriod": true,
            "signedDate": AppleTestAuthority.milliseconds(renewalSigned),
        ])
        let notice = try await self.notice(try authority.notification(
            ["notificationType": "DID_FAIL_TO_RENEW", "subtype": "GRACE_PERIOD"], dataChanges: ["signedRenewalInfo": renewal, "status": 4]))
        #expect(notice.type == "DID_FAIL_TO_RENEW")
        #expect(notice.subtype == "GRACE_PERIOD")
        #expect(notice.facts?.grace == GraceFact(until: StoreTime.seconds(graceEnd), signedAt: StoreTime.milliseconds(renewalSigned)))
    }

    @Test("the account token comes from the renewal info when the transaction has none")
    func accountTokenFromRenewalInfo() async throws {
        let transaction = try authority.sign(AppleTestAuthority.transactionPayload().removingKeys(["appAccountToken"]))
        let notice = try await self.notice(try authority.notification(dataChanges: ["signedTransactionInfo": transaction]))
        #expect(notice.facts?.accountToken == Self.token)

        let neither = try authority.sign(AppleTestAuthority.renewalInfoPayload().removingKeys(["appAccountToken"]))
        let none = try await self.notice(try authority.notification(dataChanges: ["signedTransactionInfo": transaction, "signedRenewalInfo": neither]))
        #expect(none.facts != nil)
        #expect(none.facts?.accountToken == nil)
    }

    @Test("a one-time product's notice pays for no period and says nothing of grace")
    func oneTimeNotice() async throws {
        let transaction = try authority.sign(
            AppleTestAuthority.transactionPayload(["type": "Consumable", "productId": "kiosk.pack5"]).removingKeys(["expiresDate"]))
        let payload: [String: Any] = [
            "notificationType": "ONE_TIME_CHARGE", "notificationUUID": "5b0c8a51-0f0e-4d43-9c7e-3b1f6a2d9e77", "version": "2.0",
            "signedDate": AppleTestAuthority.milliseconds(Self.signedDate),
            "data": ["bundleId": AppleTestAuthority.bundleId, "appAppleId": AppleTestAuthority.appAppleId, "environment": "Production",
                     "signedTransactionInfo": transaction] as [String: Any],
        ]
        let notice = try await self.notice(try authority.sign(payload))
        #expect(notice.type == "ONE_TIME_CHARGE")
        #expect(notice.facts?.storeProductID == "kiosk.pack5")
        #expect(notice.facts?.payment?.period == nil)
        #expect(notice.facts?.grace == nil)

        // A subscription's transaction in a notice pays for its period, whatever was registered.
        let subscription = try await self.notice(try authority.notification())
        #expect(subscription.facts?.payment?.period != nil)

        // Several bought at once, which a registration refuses: recorded as a notice, with nothing to apply.
        let three = try authority.sign(
            AppleTestAuthority.transactionPayload(["type": "Consumable", "productId": "kiosk.pack5", "quantity": 3])
                .removingKeys(["expiresDate"]))
        var severalPayload = payload
        severalPayload["notificationUUID"] = "7c1d9b62-1f1e-4e54-8d8f-4c2a7b3e0f88"
        severalPayload["data"] = (payload["data"] as? [String: Any])?.merging(["signedTransactionInfo": three]) { _, new in new }
        let several = try await self.notice(try authority.sign(severalPayload))
        #expect(several.type == "ONE_TIME_CHARGE")
        #expect(several.facts == nil)
    }

    @Test("TEST, a notification without a transaction and a summary carry no facts")
    func noticesWithoutFacts() async throws {
        let signed = AppleTestAuthority.milliseconds(Self.signedDate)
        let data: [String: Any] = ["bundleId": AppleTestAuthority.bundleId, "appAppleId": AppleTestAuthority.appAppleId, "environment": "Production"]
        let test = try await self.notice(try authority.sign([
            "notificationType": "TEST", "notificationUUID": "3f6ae3a5-5c2c-4a52-9a2b-6c0b1b0e3d11", "version": "2.0", "signedDate": signed, "data": data,
        ]))
        #expect(test.type == "TEST")
        #expect(test.id == "3f6ae3a5-5c2c-4a52-9a2b-6c0b1b0e3d11")
        #expect(test.facts == nil)

        var renewalOnly = data
        renewalOnly["signedRenewalInfo"] = try authority.renewalInfo()
        let noTransaction = try await self.notice(try authority.sign([
            "notificationType": "DID_CHANGE_RENEWAL_PREF", "subtype": "DOWNGRADE", "notificationUUID": "0b5e2f9c-8d1a-4c3e-b7f6-2a9d8e1c4b53",
            "version": "2.0", "signedDate": signed, "data": renewalOnly,
        ]))
        #expect(noTransaction.subtype == "DOWNGRADE")
        #expect(noTransaction.facts == nil)

        let summary = try await self.notice(try authority.sign([
            "notificationType": "RENEWAL_EXTENSION", "subtype": "SUMMARY", "notificationUUID": "9d1e7f0a-6c55-4bd8-8a7e-1b3c9f2e4d21",
            "version": "2.0", "signedDate": signed,
            "summary": ["requestIdentifier": "871d9f2c-1c7a-4b3e-a0e7-6a8d7b3c2e10", "environment": "Production",
                        "appAppleId": AppleTestAuthority.appAppleId, "bundleId": AppleTestAuthority.bundleId,
                        "productId": "kiosk.monthly", "succeededCount": 5, "failedCount": 2] as [String: Any],
        ]))
        #expect(summary.facts == nil)
    }

    @Test("a refund, then its reversal (signed later, without revocationDate), applied to the held purchase")
    func refundAndReversal() async throws {
        let bought = try await checks.verify(.apple(signedTransaction: try authority.transaction()), appKey: Self.appKey, kind: .subscription)
        let refundSigned = Self.signedDate.addingTimeInterval(20)
        let refundTransaction = try authority.transaction([
            "revocationDate": AppleTestAuthority.milliseconds(refundSigned), "revocationReason": 0,
            "signedDate": AppleTestAuthority.milliseconds(refundSigned),
        ])
        let refundNotice = try await self.notice(try authority.notification(
            ["notificationType": "REFUND", "subtype": "", "notificationUUID": "aaaaaaaa-0000-4000-8000-000000000001"],
            dataChanges: ["signedTransactionInfo": refundTransaction]))
        let reversalNotice = try await self.notice(try authority.notification(
            ["notificationType": "REFUND_REVERSED", "subtype": "", "notificationUUID": "aaaaaaaa-0000-4000-8000-000000000002"],
            dataChanges: ["signedTransactionInfo": try authority.transaction([
                "signedDate": AppleTestAuthority.milliseconds(Self.signedDate.addingTimeInterval(40)),
            ])]))
        let refund = try #require(refundNotice.facts)
        let reversed = try #require(reversalNotice.facts)
        #expect(refund.payment?.revoked == true)
        #expect(reversed.payment?.revoked == false)

        let product = StoreProduct(appKey: Self.appKey, id: "kiosk.monthly", kind: .subscription)
        var held = HeldPurchase(appKey: Self.appKey, facts: bought, product: product, at: 1)
        #expect(held.purchase.revoked == false)
        #expect(held.purchase.paidPeriods.count == 1)
        held.apply(refund, at: 2)
        #expect(held.purchase.revoked)
        #expect(held.purchase.paidPeriods.isEmpty)
        held.apply(reversed, at: 3)
        #expect(held.purchase.revoked == false)
        #expect(held.purchase.paidPeriods.count == 1)
        // The refund again (Apple retries): older than the reversal, it changes nothing.
        let changed = held.apply(refund, at: 4)
        #expect(changed == false)
        #expect(held.purchase.revoked == false)
        #expect(held.accountToken == Self.token)
        #expect(held.payments.count == 1)
    }

    @Test("notices refused: another app, a body over the limit, tampering, not the notification object")
    func noticeRefusals() async throws {
        let jws = try authority.notification()
        let notSold = await storeError { try await self.notice(jws, appKey: "android-only") }
        #expect(notSold == .unverifiable("app android-only does not sell in the App Store"))

        let small = StoreChecks(apps: [Self.appKey: .init(apple: AppleTestAuthority.identity)], apple: try authority.verifier(), google: nil,
                                notificationBodyLimit: 1024)
        let large = await storeError { try await small.notice(store: .apple, appKey: Self.appKey, body: body(jws), authorization: nil) }
        #expect(large?.unverifiableReason?.contains("more than the 1024 allowed") == true)

        let cases: [(String, [UInt8])] = [
            ("tampered", body(try AppleTestAuthority.tamperingSignature(jws))),
            ("another bundle", body(try authority.notification(dataChanges: ["bundleId": "com.example.other"]))),
            ("inner transaction of another app", body(try authority.notification(
                dataChanges: ["signedTransactionInfo": try authority.transaction(["bundleId": "com.example.other"])]))),
            ("not JSON", Array("signedPayload".utf8)),
            ("no signedPayload", Array(#"{"payload": "x"}"#.utf8)),
        ]
        for (name, body) in cases {
            let error = await storeError { try await checks.notice(store: .apple, appKey: Self.appKey, body: body, authorization: nil) }
            #expect(error?.unverifiableReason != nil, "\(name): \(String(describing: error))")
        }
    }

    @Test("confirming an App Store purchase asks nothing")
    func confirmApple() async throws {
        let facts = try await checks.verify(.apple(signedTransaction: try authority.transaction()), appKey: Self.appKey, kind: .subscription)
        try await checks.confirm(facts, appKey: Self.appKey, kind: .subscription)
        try await checks.confirm(facts, appKey: "android-only", kind: .issue)
    }
}

@Suite("StoreChecks: Google Play purchases and notices in Kiosk's terms, against the stand-in")
struct StoreChecksGoogleTests {
    static let appKey = "quiosc"
    /// The checks' present: Google's answers are signed at it.
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let nowMS: Int64 = 1_795_000_000_000
    static let account = "7E3FB20B-4CDB-47CC-936D-99D65F608138"

    static func subscription(_ state: String, _ changes: [String: Any] = [:]) -> [String: Any] {
        var purchase: [String: Any] = [
            "kind": "androidpublisher#subscriptionPurchaseV2", "subscriptionState": "SUBSCRIPTION_STATE_\(state)",
            "startTime": "2026-10-01T09:30:00Z", "latestOrderId": "GPA.3333-4444-5555-66666..1",
            "acknowledgementState": "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED", "regionCode": "ES",
            "lineItems": [["productId": "monthly", "expiryTime": "2026-12-01T09:30:00Z", "autoRenewingPlan": ["autoRenewEnabled": true]]],
        ]
        purchase.merge(changes) { _, new in new }
        return purchase
    }

    static var purchases: [String: Any] {
        [
            "subscriptions": [
                "sub-active": subscription("ACTIVE", [
                    "acknowledgementState": "ACKNOWLEDGEMENT_STATE_PENDING", "testPurchase": [:] as [String: Any],
                    "externalAccountIdentifiers": ["obfuscatedExternalAccountId": account],
                    "lineItems": [
                        ["productId": "monthly", "expiryTime": "2026-12-01T09:30:00Z", "autoRenewingPlan": ["autoRenewEnabled": true]],
                        ["productId": "addon", "expiryTime": "2026-12-15T09:30:00Z", "prepaidPlan": [:] as [String: Any]],
                    ],
                ]),
                "sub-canceled": subscription("CANCELED", ["canceledStateContext": ["userInitiatedCancellation": [:] as [String: Any]]])
                    .removingKeys(["startTime"]),
                "sub-expired": subscription("EXPIRED", ["latestOrderId": ""]),
                "sub-grace": subscription("IN_GRACE_PERIOD", ["lineItems": [["productId": "monthly", "expiryTime": "2026-12-08T09:30:00Z"]]]),
                "sub-hold": subscription("ON_HOLD"),
                "sub-paused": subscription("PAUSED"),
                "sub-pending": subscription("PENDING", ["acknowledgementState": "ACKNOWLEDGEMENT_STATE_PENDING"]),
                "sub-busy": ["_status": 503],
                "sub-gone": ["_status": 410],
            ],
            "products": [
                "issue": [
                    "tok-issue": [
                        "kind": "androidpublisher#productPurchase", "purchaseTimeMillis": "1794990000123", "purchaseState": 0,
                        "consumptionState": 0, "acknowledgementState": 0, "orderId": "GPA.1234-5678-9012-34567",
                        "obfuscatedExternalAccountId": account, "regionCode": "FR", "quantity": 1,
                    ],
                    "tok-test": ["purchaseTimeMillis": "1794990000000", "purchaseType": 0, "orderId": "GPA.1111-2222-3333-44444"],
                    "tok-refunded": ["purchaseTimeMillis": "1794990000000", "purchaseState": 1, "orderId": "GPA.9999-8888-7777-66666"],
                    "tok-consumed": ["purchaseTimeMillis": "1794990000000", "consumptionState": 1, "acknowledgementState": 1, "orderId": "GPA.5"],
                    "tok-pending": ["purchaseTimeMillis": "1794990000000", "purchaseState": 2],
                    "tok-odd": ["purchaseTimeMillis": "1794990000000", "purchaseState": 7, "orderId": "GPA.7"],
                    "tok-three": ["purchaseTimeMillis": "1794990000000", "purchaseState": 0, "orderId": "GPA.3", "quantity": 3],
                    "tok-other": ["purchaseTimeMillis": "1794990000000", "purchaseState": 0, "orderId": "GPA.4", "productId": "pack"],
                    "tok-busy": ["_status": 503],
                ],
            ],
        ]
    }

    /// `timeout`: of each call to Google; short where the stand-in is stopped, since a refused connection is
    /// tried again until then.
    static func checks(
        _ standIn: GoogleStandIn, push: Bool = true, timeout: Duration = .seconds(10), clock: @escaping @Sendable () -> Date = { now }
    ) throws -> StoreChecks {
        let pushVerifier = PubSubPushVerifier(
            audience: GooglePubSubPushVerifierTests.audience, serviceAccountEmail: GooglePubSubPushVerifierTests.pusher,
            keysURL: standIn.keysURL, httpClient: standIn.httpClient, timeout: timeout)
        return StoreChecks(
            apps: [
                appKey: .init(apple: AppleTestAuthority.identity, googlePackageName: GoogleStandIn.packageName,
                              googleAcceptsTestPurchases: true),
                "no-testers": .init(googlePackageName: GoogleStandIn.packageName),
                "ios-only": .init(apple: AppleTestAuthority.identity),
                "elsewhere": .init(googlePackageName: "com.example.elsewhere"),
            ],
            apple: nil,
            google: .init(
                tokens: GoogleAccessTokens(account: try standIn.serviceAccount(), httpClient: standIn.httpClient),
                apiBaseURL: standIn.baseURL, httpClient: standIn.httpClient, timeout: timeout,
                pushVerifier: push ? pushVerifier : nil),
            clock: clock)
    }

    @Test("an active subscription: token, line item, Test environment, account token, the latest order's period, no grace")
    func activeSubscription() async throws {
        try await GoogleStandIn.run(purchases: Self.purchases) { standIn in
            let checks = try Self.checks(standIn)
            let facts = try await checks.verify(.google(productID: "monthly", token: "sub-active"), appKey: Self.appKey, kind: .subscription)
            #expect(facts.store == .google)
            #expect(facts.originalID == "sub-active")
            #expect(facts.storeProductID == "monthly")
            #expect(facts.environment == "Test")
            #expect(facts.accountToken == Self.account.lowercased())
            let end = StoreTime.seconds("2026-12-01T09:30:00Z")
            #expect(facts.payment == StorePayment(
                id: "GPA.3333-4444-5555-66666..1", paidAt: StoreTime.seconds("2026-11-01T09:30:00Z"),
                period: PaidPeriod(start: StoreTime.seconds("2026-10-01T09:30:00Z"), end: end), signedAt: Self.nowMS))
            #expect(facts.grace == GraceFact(until: nil, signedAt: Self.nowMS))

            // The line item the app names, when the subscription has several; Google's first otherwise.
            let addon = try await checks.verify(.google(productID: "addon", token: "sub-active"), appKey: Self.appKey, kind: .subscription)
            #expect(addon.storeProductID == "addon")
            #expect(addon.payment?.period?.end == StoreTime.seconds("2026-12-15T09:30:00Z"))
            let other = try await checks.verify(.google(productID: "yearly", token: "sub-active"), appKey: Self.appKey, kind: .subscription)
            #expect(other.storeProductID == "monthly")

            let calls = try await standIn.state().apiCalls
            #expect(calls.first == .init(method: "GET", segments: [GoogleStandIn.packageName, "purchases", "subscriptionsv2", "tokens", "sub-active"], action: nil))
        }
    }

    @Test("canceled and expired subscriptions keep their paid period; grace, hold, pause and pending pay for none")
    func subscriptionStates() async throws {
        try await GoogleStandIn.run(purchases: Self.purchases) { standIn in
            let checks = try Self.checks(standIn)
            func facts(_ token: String) async throws -> StoreFacts {
                try await checks.verify(.google(productID: "monthly", token: token), appKey: Self.appKey, kind: .subscription)
            }
            let end = StoreTime.seconds("2026-12-01T09:30:00Z")
            let noGrace = GraceFact(until: nil, signedAt: Self.nowMS)

            // No start time: the period is taken as the 30 days before the expiry.
            let canceled = try await facts("sub-canceled")
            #expect(canceled.environment == "Production")
            #expect(canceled.accountToken == nil)
            #expect(canceled.payment?.period == PaidPeriod(start: end - 30 * 86400, end: end))
            #expect(canceled.payment?.revoked == false)
            #expect(canceled.grace == noGrace)

            // No order id: the payment is named by the token.
            let expired = try await facts("sub-expired")
            #expect(expired.payment?.id == "sub-expired")
            #expect(expired.payment?.period == PaidPeriod(start: StoreTime.seconds("2026-10-01T09:30:00Z"), end: end))
            #expect(expired.grace == noGrace)

            let grace = try await facts("sub-grace")
            #expect(grace.payment == nil)
            #expect(grace.grace == GraceFact(until: StoreTime.seconds("2026-12-08T09:30:00Z"), signedAt: Self.nowMS))

            for token in ["sub-hold", "sub-paused", "sub-pending"] {
                let facts = try await facts(token)
                #expect(facts.payment == nil, "\(token)")
                #expect(facts.grace == noGrace, "\(token)")
                #expect(facts.storeProductID == "monthly", "\(token)")
            }
        }
    }

    @Test("one-time products: the order, its time, revoked once canceled; pending and unknown states refused")
    func oneTimeProducts() async throws {
        try await GoogleStandIn.run(purchases: Self.purchases) { standIn in
            let checks = try Self.checks(standIn)
            let facts = try await checks.verify(.google(productID: "issue", token: "tok-issue"), appKey: Self.appKey, kind: .issue)
            #expect(facts.originalID == "tok-issue")
            #expect(facts.storeProductID == "issue")
            #expect(facts.environment == "Production")
            #expect(facts.accountToken == Self.account.lowercased())
            #expect(facts.grace == nil)
            #expect(facts.payment == StorePayment(id: "GPA.1234-5678-9012-34567", paidAt: 1_794_990_000, signedAt: Self.nowMS))

            let test = try await checks.verify(.google(productID: "issue", token: "tok-test"), appKey: Self.appKey, kind: .credits)
            #expect(test.environment == "Test")
            #expect(test.accountToken == nil)

            let refunded = try await checks.verify(.google(productID: "issue", token: "tok-refunded"), appKey: Self.appKey, kind: .issue)
            #expect(refunded.payment?.revoked == true)
            #expect(refunded.payment?.id == "GPA.9999-8888-7777-66666")

            let pending = await storeError { try await checks.verify(.google(productID: "issue", token: "tok-pending"), appKey: Self.appKey, kind: .issue) }
            #expect(pending == .unverifiable("the purchase is pending payment"))
            let odd = await storeError { try await checks.verify(.google(productID: "issue", token: "tok-odd"), appKey: Self.appKey, kind: .issue) }
            #expect(odd?.unverifiableReason?.contains("state 7") == true)

            // Several bought at once, or Google naming another product: refused, never under-granted or mis-granted.
            let three = await storeError { try await checks.verify(.google(productID: "issue", token: "tok-three"), appKey: Self.appKey, kind: .credits) }
            #expect(three?.unverifiableReason?.contains("3 bought at once") == true)
            let other = await storeError { try await checks.verify(.google(productID: "issue", token: "tok-other"), appKey: Self.appKey, kind: .issue) }
            #expect(other?.unverifiableReason?.contains("of pack, not issue") == true)
            // A license tester's purchase grants only where the app takes them.
            let tester = await storeError { try await checks.verify(.google(productID: "issue", token: "tok-test"), appKey: "no-testers", kind: .issue) }
            #expect(tester?.unverifiableReason?.contains("accept_test_purchases") == true)
            let testerSubscription = await storeError {
                try await checks.verify(.google(productID: "monthly", token: "sub-active"), appKey: "no-testers", kind: .subscription)
            }
            #expect(testerSubscription?.unverifiableReason?.contains("license tester") == true)
            #expect(try await checks.verify(.google(productID: "issue", token: "tok-issue"), appKey: "no-testers", kind: .issue).environment == "Production")

            let calls = try await standIn.state().apiCalls
            #expect(calls.first == .init(method: "GET", segments: [GoogleStandIn.packageName, "purchases", "products", "issue", "tokens", "tok-issue"], action: nil))
        }
    }

    @Test("an unknown or dropped token is unverifiable; Google busy is 'store unavailable'; apps not in Google Play refused")
    func refusals() async throws {
        try await GoogleStandIn.run(purchases: Self.purchases) { standIn in
            let checks = try Self.checks(standIn, timeout: .seconds(3))
            for (token, kind) in [("never-sold", ProductKind.subscription), ("sub-gone", .subscription), ("never-sold", .issue)] {
                let error = await storeError { try await checks.verify(.google(productID: "issue", token: token), appKey: Self.appKey, kind: kind) }
                let reason = try #require(error?.unverifiableReason, "\(token): \(String(describing: error))")
                #expect(reason.contains("Google Play"), "\(reason)")
                #expect(!reason.contains(token), "no token in \(reason)")
            }
            // The product the app names is part of what Google is asked: a token for another product is unknown.
            let wrongProduct = await storeError { try await checks.verify(.google(productID: "pack5", token: "tok-issue"), appKey: Self.appKey, kind: .credits) }
            #expect(wrongProduct?.unverifiableReason != nil)

            let busy = await storeError { try await checks.verify(.google(productID: "monthly", token: "sub-busy"), appKey: Self.appKey, kind: .subscription) }
            #expect(busy?.isStoreUnavailable == true, "\(String(describing: busy))")
            let busyProduct = await storeError { try await checks.verify(.google(productID: "issue", token: "tok-busy"), appKey: Self.appKey, kind: .issue) }
            #expect(busyProduct?.isStoreUnavailable == true)

            let iosOnly = await storeError { try await checks.verify(.google(productID: "issue", token: "tok-issue"), appKey: "ios-only", kind: .issue) }
            #expect(iosOnly == .unverifiable("app ios-only does not sell in Google Play"))
            let unknownApp = await storeError { try await checks.verify(.google(productID: "issue", token: "tok-issue"), appKey: "nobody", kind: .issue) }
            #expect(unknownApp == .unverifiable("app nobody does not sell in Google Play"))
            // Another app's package: Google knows no such purchase of it.
            let elsewhere = await storeError { try await checks.verify(.google(productID: "issue", token: "tok-issue"), appKey: "elsewhere", kind: .issue) }
            #expect(elsewhere?.unverifiableReason != nil)

            let unconfigured = StoreChecks(apps: [Self.appKey: .init(googlePackageName: GoogleStandIn.packageName)], apple: nil, google: nil)
            let noAccount = await storeError { try await unconfigured.verify(.google(productID: "issue", token: "tok-issue"), appKey: Self.appKey, kind: .issue) }
            #expect(noAccount?.unverifiableReason?.contains("not set up to verify Google Play purchases") == true)

            // Google unreachable altogether.
            try await standIn.stop()
            let down = await storeError { try await checks.verify(.google(productID: "issue", token: "tok-issue"), appKey: Self.appKey, kind: .issue) }
            #expect(down?.isStoreUnavailable == true)
        }
    }

    @Test("confirm acknowledges a subscription and consumes a one-time product once, and settles nothing else")
    func confirm() async throws {
        try await GoogleStandIn.run(purchases: Self.purchases) { standIn in
            let checks = try Self.checks(standIn)
            let active = try await checks.verify(.google(productID: "monthly", token: "sub-active"), appKey: Self.appKey, kind: .subscription)
            try await checks.confirm(active, appKey: Self.appKey, kind: .subscription)
            try await checks.confirm(active, appKey: Self.appKey, kind: .subscription)

            let issue = try await checks.verify(.google(productID: "issue", token: "tok-issue"), appKey: Self.appKey, kind: .issue)
            try await checks.confirm(issue, appKey: Self.appKey, kind: .issue)
            try await checks.confirm(issue, appKey: Self.appKey, kind: .issue)
            let pack = try await checks.verify(.google(productID: "issue", token: "tok-test"), appKey: Self.appKey, kind: .credits)
            try await checks.confirm(pack, appKey: Self.appKey, kind: .credits)

            // Already settled, as Google said: nothing is sent.
            let canceled = try await checks.verify(.google(productID: "monthly", token: "sub-canceled"), appKey: Self.appKey, kind: .subscription)
            try await checks.confirm(canceled, appKey: Self.appKey, kind: .subscription)
            let consumed = try await checks.verify(.google(productID: "issue", token: "tok-consumed"), appKey: Self.appKey, kind: .issue)
            try await checks.confirm(consumed, appKey: Self.appKey, kind: .issue)
            // Nothing granted: a refunded product, a subscription in its grace period.
            let refunded = try await checks.verify(.google(productID: "issue", token: "tok-refunded"), appKey: Self.appKey, kind: .issue)
            try await checks.confirm(refunded, appKey: Self.appKey, kind: .issue)
            let grace = try await checks.verify(.google(productID: "monthly", token: "sub-grace"), appKey: Self.appKey, kind: .subscription)
            try await checks.confirm(grace, appKey: Self.appKey, kind: .subscription)

            let state = try await standIn.state()
            #expect(state.acknowledged == [.init(kind: "subscription", id: "monthly", token: "sub-active")])
            #expect(state.consumed == [
                .init(kind: "product", id: "issue", token: "tok-issue"), .init(kind: "product", id: "issue", token: "tok-test"),
            ])
            #expect(state.apiCalls.filter { $0.method == "POST" }.map(\.action) == ["acknowledge", "consume", "consume"])

            // Another instance, which never saw it acknowledged: Google's refusal of a second acknowledgement counts as done.
            let fresh = try Self.checks(standIn)
            try await fresh.confirm(active, appKey: Self.appKey, kind: .subscription)
            #expect(try await standIn.state().acknowledged.count == 1)

            // Google busy while settling: 'store unavailable', so the caller tries again.
            let busy = StoreFacts(store: .google, originalID: "tok-busy", storeProductID: "issue", environment: "Production",
                                  payment: StorePayment(id: "GPA.1", paidAt: 1, signedAt: 1))
            let error = await storeError { try await checks.confirm(busy, appKey: Self.appKey, kind: .issue) }
            #expect(error?.isStoreUnavailable == true)
        }
    }

    // MARK: - Notices

    static func push(_ kind: String, _ body: [String: Any], millis: Any = "1795000000123", packageName: String = GoogleStandIn.packageName) throws -> [UInt8] {
        var notification = GooglePubSubPushMessageTests.notification(kind, body, millis: millis)
        notification["packageName"] = packageName
        return [UInt8](try GooglePubSubPushMessageTests.body(notification))
    }

    static func bearer(_ standIn: GoogleStandIn, _ changes: [String: Any] = [:]) async throws -> String {
        "Bearer " + (try await standIn.mint(GooglePubSubPushVerifierTests.claims(at: Date(), changes)))
    }

    @Test("subscription notices: fetched as verify does, named by Google's type names; a revocation revokes the order")
    func subscriptionNotices() async throws {
        try await GoogleStandIn.run(purchases: Self.purchases) { standIn in
            let checks = try Self.checks(standIn)
            let bearer = try await Self.bearer(standIn)
            let renewed = try await checks.notice(
                store: .google, appKey: Self.appKey,
                body: try Self.push("subscriptionNotification", ["version": "1.0", "notificationType": 2, "purchaseToken": "sub-active", "subscriptionId": "addon"]),
                authorization: bearer)
            #expect(renewed.store == .google)
            #expect(renewed.id.hasPrefix("136969346945.") && renewed.id.count == "136969346945.".count + 12, "the message id and a digest of its data")
            #expect(renewed.type == "SUBSCRIPTION_RENEWED")
            #expect(renewed.subtype == "")
            let verified = try await checks.verify(.google(productID: "addon", token: "sub-active"), appKey: Self.appKey, kind: .subscription)
            #expect(renewed.facts == verified)

            let revoked = try await checks.notice(
                store: .google, appKey: Self.appKey,
                body: try Self.push("subscriptionNotification", ["notificationType": 12, "purchaseToken": "sub-expired"]), authorization: bearer)
            #expect(revoked.type == "SUBSCRIPTION_REVOKED")
            #expect(revoked.facts?.payment?.revoked == true)
            #expect(revoked.facts?.storeProductID == "monthly")

            let grace = try await checks.notice(
                store: .google, appKey: Self.appKey,
                body: try Self.push("subscriptionNotification", ["notificationType": 6, "purchaseToken": "sub-grace"]), authorization: bearer)
            #expect(grace.type == "SUBSCRIPTION_IN_GRACE_PERIOD")
            #expect(grace.facts?.grace?.until == StoreTime.seconds("2026-12-08T09:30:00Z"))

            for (code, name) in [(1, "SUBSCRIPTION_RECOVERED"), (3, "SUBSCRIPTION_CANCELED"), (4, "SUBSCRIPTION_PURCHASED"), (5, "SUBSCRIPTION_ON_HOLD"),
                                 (7, "SUBSCRIPTION_RESTARTED"), (10, "SUBSCRIPTION_PAUSED"), (13, "SUBSCRIPTION_EXPIRED"),
                                 (20, "SUBSCRIPTION_PENDING_PURCHASE_CANCELED"), (99, "SUBSCRIPTION_NOTIFICATION_99")] {
                let notice = try await checks.notice(
                    store: .google, appKey: Self.appKey,
                    body: try Self.push("subscriptionNotification", ["notificationType": code, "purchaseToken": "sub-canceled"]), authorization: bearer)
                #expect(notice.type == name)
                #expect(notice.facts?.payment?.revoked == false)
            }

            let gone = await storeError {
                try await checks.notice(store: .google, appKey: Self.appKey,
                    body: try Self.push("subscriptionNotification", ["notificationType": 2, "purchaseToken": "sub-gone"]), authorization: bearer)
            }
            #expect(gone?.unverifiableReason != nil)
            let busy = await storeError {
                try await checks.notice(store: .google, appKey: Self.appKey,
                    body: try Self.push("subscriptionNotification", ["notificationType": 2, "purchaseToken": "sub-busy"]), authorization: bearer)
            }
            #expect(busy?.isStoreUnavailable == true)
        }
    }

    @Test("one-time product, voided and test notices")
    func otherNotices() async throws {
        try await GoogleStandIn.run(purchases: Self.purchases) { standIn in
            // Google's fetch is signed before the refund's event.
            let checks = try Self.checks(standIn, clock: { Date(timeIntervalSince1970: 1_794_995_000) })
            let bearer = try await Self.bearer(standIn)
            func notice(_ kind: String, _ body: [String: Any]) async throws -> StoreNotice {
                try await checks.notice(store: .google, appKey: Self.appKey, body: try Self.push(kind, body), authorization: bearer)
            }

            let purchased = try await notice("oneTimeProductNotification", ["version": "1.0", "notificationType": 1, "purchaseToken": "tok-issue", "sku": "issue"])
            #expect(purchased.type == "ONE_TIME_PRODUCT_PURCHASED")
            let bought = try #require(purchased.facts)
            #expect(bought.storeProductID == "issue")
            #expect(bought.payment?.id == "GPA.1234-5678-9012-34567")
            let canceled = try await notice("oneTimeProductNotification", ["notificationType": 2, "purchaseToken": "tok-refunded", "sku": "issue"])
            #expect(canceled.type == "ONE_TIME_PRODUCT_CANCELED")
            #expect(canceled.facts?.payment?.revoked == true)
            // Pending: nothing to apply yet.
            let pending = try await notice("oneTimeProductNotification", ["notificationType": 1, "purchaseToken": "tok-pending", "sku": "issue"])
            #expect(pending.facts == nil)
            // Three bought at once, which registration refuses: recorded, nothing to apply.
            let three = try await notice("oneTimeProductNotification", ["notificationType": 1, "purchaseToken": "tok-three", "sku": "issue"])
            #expect(three.type == "ONE_TIME_PRODUCT_PURCHASED")
            #expect(three.facts == nil)

            // A voided notice is applied only once Google's Voided Purchases API lists the purchase and its order.
            let voidedMillis = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) - 5_000
            let voidedBody: [String: Any] = [
                "purchaseToken": "tok-issue", "orderId": "GPA.1234-5678-9012-34567", "productType": 2, "refundType": 1,
            ]
            func voidedNotice() async throws -> StoreNotice {
                try await checks.notice(store: .google, appKey: Self.appKey,
                                        body: try Self.push("voidedPurchaseNotification", voidedBody, millis: String(voidedMillis + 2_000)),
                                        authorization: bearer)
            }
            let unlisted = await storeError { try await voidedNotice() }
            #expect(unlisted?.unverifiableReason?.contains("lists no voided purchase") == true, "\(String(describing: unlisted))")
            _ = try await standIn.command(["op": "void", "purchaseToken": "tok-issue", "orderId": "GPA.other-order",
                                           "productType": 2, "voidedTimeMillis": voidedMillis])
            let otherOrder = await storeError { try await voidedNotice() }
            #expect(otherOrder?.unverifiableReason?.contains("lists no voided purchase") == true, "\(String(describing: otherOrder))")
            _ = try await standIn.command(["op": "void", "purchaseToken": "tok-issue", "orderId": "GPA.1234-5678-9012-34567",
                                           "productType": 2, "voidedTimeMillis": voidedMillis])
            let voided = try await voidedNotice()
            #expect(voided.type == "VOIDED_PURCHASE")
            #expect(voided.subtype == "REFUND_TYPE_FULL_REFUND")
            #expect(voided.facts == StoreFacts(
                store: .google, originalID: "tok-issue", storeProductID: "", environment: "",
                payment: StorePayment(id: "GPA.1234-5678-9012-34567", paidAt: voidedMillis / 1000, revoked: true, signedAt: voidedMillis)))
            let listCalls = try await standIn.state().apiCalls.filter { $0.segments.last == "voidedpurchases" }
            #expect(listCalls.count == 3)

            // Applied after the purchase, the voided order revokes it; the purchase fetched again later does not
            // undo a one-time product's refund (Google then says canceled).
            let product = StoreProduct(appKey: Self.appKey, id: "issue", kind: .issue)
            var held = HeldPurchase(appKey: Self.appKey, facts: bought, product: product, at: 1)
            #expect(held.purchase.revoked == false)
            let changed = held.apply(try #require(voided.facts), at: 2)
            #expect(changed)
            #expect(held.purchase.revoked)
            #expect(held.payments.count == 1)

            let test = try await notice("testNotification", ["version": "1.0"])
            #expect(test.type == "TEST_NOTIFICATION")
            #expect(test.facts == nil)
            let other = try await notice("pendingRefundReviewNotification", ["purchaseToken": "tok-issue"])
            #expect(other.type == "pendingRefundReviewNotification")
            #expect(other.facts == nil)
        }
    }

    @Test("notices refused: the push token, another package, not a push, no push set up; keys unreachable is 'unavailable'")
    func noticeRefusals() async throws {
        try await GoogleStandIn.run(purchases: Self.purchases) { standIn in
            let checks = try Self.checks(standIn)
            let body = try Self.push("testNotification", ["version": "1.0"])
            let bearer = try await Self.bearer(standIn)

            let tokens: [(String, String?)] = [
                ("no Authorization", nil),
                ("another audience", try await Self.bearer(standIn, ["aud": "https://elsewhere.example/"])),
                ("another service account", try await Self.bearer(standIn, ["email": "someone@example.com"])),
                ("not Bearer", "Basic dXNlcjpwYXNz"),
            ]
            for (name, authorization) in tokens {
                let error = await storeError { try await checks.notice(store: .google, appKey: Self.appKey, body: body, authorization: authorization) }
                #expect(error?.unverifiableReason != nil, "\(name): \(String(describing: error))")
            }

            let otherPackage = await storeError {
                try await checks.notice(store: .google, appKey: Self.appKey,
                    body: try Self.push("testNotification", ["version": "1.0"], packageName: "com.example.other"), authorization: bearer)
            }
            #expect(otherPackage?.unverifiableReason?.contains("another app") == true)
            let garbage = await storeError { try await checks.notice(store: .google, appKey: Self.appKey, body: Array("{}".utf8), authorization: bearer) }
            #expect(garbage?.unverifiableReason != nil)
            let notSold = await storeError { try await checks.notice(store: .google, appKey: "ios-only", body: body, authorization: bearer) }
            #expect(notSold == .unverifiable("app ios-only does not sell in Google Play"))
            let noPush = await storeError {
                try await Self.checks(standIn, push: false).notice(store: .google, appKey: Self.appKey, body: body, authorization: bearer)
            }
            #expect(noPush?.unverifiableReason?.contains("not set up to receive Google Play notifications") == true)

            let small = StoreChecks(
                apps: [Self.appKey: .init(googlePackageName: GoogleStandIn.packageName)], apple: nil,
                google: .init(
                    tokens: GoogleAccessTokens(account: try standIn.serviceAccount(), httpClient: standIn.httpClient),
                    apiBaseURL: standIn.baseURL, httpClient: standIn.httpClient,
                    pushVerifier: PubSubPushVerifier(
                        audience: GooglePubSubPushVerifierTests.audience, serviceAccountEmail: GooglePubSubPushVerifierTests.pusher,
                        keysURL: standIn.keysURL, httpClient: standIn.httpClient)),
                notificationBodyLimit: 64)
            let large = await storeError { try await small.notice(store: .google, appKey: Self.appKey, body: body, authorization: bearer) }
            #expect(large?.unverifiableReason?.contains("larger than 64 bytes") == true)

            // A fresh verifier has no keys yet, and Google's cannot be fetched.
            let later = try Self.checks(standIn, timeout: .seconds(3))
            try await standIn.stop()
            let down = await storeError { try await later.notice(store: .google, appKey: Self.appKey, body: body, authorization: bearer) }
            #expect(down?.isStoreUnavailable == true, "\(String(describing: down))")
        }
    }
}

extension Dictionary where Key == String {
    /// The dictionary without `keys`.
    func removingKeys(_ keys: [String]) -> Self {
        var copy = self
        for key in keys { copy.removeValue(forKey: key) }
        return copy
    }
}
