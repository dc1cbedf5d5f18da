import Crypto
import Foundation
import KioskPurchases
import Testing

/// What a verification threw, or nil if it passed.
func refusal<T>(_ operation: () async throws(PurchaseVerificationError) -> T) async -> PurchaseVerificationError? {
    do {
        _ = try await operation()
        return nil
    } catch {
        return error
    }
}

@Suite("App Store signed data: accepted")
struct AppleAcceptedTests {
    let authority: AppleTestAuthority
    let verifier: AppleSignedDataVerifier
    let app = AppleTestAuthority.identity

    init() throws {
        authority = try AppleTestAuthority()
        verifier = try authority.verifier()
    }

    @Test func transactionIsDecoded() async throws {
        let transaction = try await verifier.transaction(try authority.transaction(), for: app)
        #expect(transaction.transactionId == "2000000123456789")
        #expect(transaction.originalTransactionId == "2000000123450000")
        #expect(transaction.productId == "kiosk.monthly")
        #expect(transaction.bundleId == "com.example.kiosk")
        #expect(transaction.appAccountToken == UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138"))
        #expect(transaction.type == .autoRenewableSubscription)
        #expect(transaction.environment == .production)
        #expect(transaction.signedDate == AppleTestAuthority.signedDate)
        #expect(transaction.purchaseDate == AppleTestAuthority.signedDate.addingTimeInterval(-3600))
        #expect(transaction.expiresDate == AppleTestAuthority.signedDate.addingTimeInterval(30 * 86400))
        #expect(transaction.price == 4990)
        #expect(transaction.currency == "EUR")
        #expect(transaction.quantity == 1)
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.transactionReason == .purchase)
        #expect(transaction.storefront == "FRA")
        #expect(transaction.isUpgraded == false)
        #expect(transaction.revocationDate == nil)
        #expect(transaction.appTransactionId == "704289572311312345")
    }

    @Test func unknownValuesAreKeptRaw() async throws {
        let jws = try authority.transaction([
            "type": "Hologram Subscription", "inAppOwnershipType": "BORROWED", "offerType": 9,
            "revocationReason": 7, "revocationDate": AppleTestAuthority.milliseconds(AppleTestAuthority.signedDate),
            "transactionReason": "GIFT",
        ])
        let transaction = try await verifier.transaction(jws, for: app)
        #expect(transaction.type.rawValue == "Hologram Subscription")
        #expect(transaction.inAppOwnershipType.rawValue == "BORROWED")
        #expect(transaction.offerType?.rawValue == 9)
        #expect(transaction.revocationReason?.rawValue == 7)
        #expect(transaction.transactionReason?.rawValue == "GIFT")
    }

    @Test func renewalInfoIsDecoded() async throws {
        let renewal = try await verifier.renewalInfo(try authority.renewalInfo(), for: app)
        #expect(renewal.originalTransactionId == "2000000123450000")
        #expect(renewal.productId == "kiosk.monthly")
        #expect(renewal.autoRenewProductId == "kiosk.yearly")
        #expect(renewal.autoRenewStatus == .on)
        #expect(renewal.isInBillingRetryPeriod == false)
        #expect(renewal.renewalDate == AppleTestAuthority.signedDate.addingTimeInterval(30 * 86400))
        #expect(renewal.environment == .production)
        #expect(renewal.appAccountToken != nil)
    }

    @Test func notificationWithSignedDataIsDecoded() async throws {
        let notification = try await verifier.notification(try authority.notification(), for: app)
        #expect(notification.notificationType == .subscribed)
        #expect(notification.subtype == .initialBuy)
        #expect(notification.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(notification.version == "2.0")
        let data = try #require(notification.data)
        #expect(data.bundleId == "com.example.kiosk")
        #expect(data.appAppleId == 1_234_567_890)
        #expect(data.environment == .production)
        #expect(data.status == .active)
        #expect(data.transaction?.productId == "kiosk.monthly")
        #expect(data.renewalInfo?.autoRenewProductId == "kiosk.yearly")
        #expect(data.signedTransactionInfo != nil)
        #expect(notification.summary == nil)
    }

    @Test func testNotificationCarriesNoTransaction() async throws {
        let jws = try authority.sign([
            "notificationType": "TEST", "notificationUUID": "3f6ae3a5-5c2c-4a52-9a2b-6c0b1b0e3d11", "version": "2.0",
            "signedDate": AppleTestAuthority.milliseconds(AppleTestAuthority.signedDate),
            "data": ["bundleId": AppleTestAuthority.bundleId, "appAppleId": AppleTestAuthority.appAppleId, "environment": "Production"],
        ])
        let notification = try await verifier.notification(jws, for: app)
        #expect(notification.notificationType == .test)
        #expect(notification.subtype == nil)
        #expect(notification.data?.transaction == nil)
        #expect(notification.data?.renewalInfo == nil)
    }

    @Test func renewalExtensionSummaryIsRecorded() async throws {
        let jws = try authority.sign([
            "notificationType": "RENEWAL_EXTENSION", "subtype": "SUMMARY",
            "notificationUUID": "9d1e7f0a-6c55-4bd8-8a7e-1b3c9f2e4d21", "version": "2.0",
            "signedDate": AppleTestAuthority.milliseconds(AppleTestAuthority.signedDate),
            "summary": [
                "requestIdentifier": "871d9f2c-1c7a-4b3e-a0e7-6a8d7b3c2e10", "environment": "Production",
                "appAppleId": AppleTestAuthority.appAppleId, "bundleId": AppleTestAuthority.bundleId,
                "productId": "kiosk.monthly", "storefrontCountryCodes": ["FRA", "USA"],
                "succeededCount": 5, "failedCount": 2,
            ],
        ])
        let notification = try await verifier.notification(jws, for: app)
        #expect(notification.subtype == .summary)
        #expect(notification.data == nil)
        let summary = try #require(notification.summary)
        #expect(summary.succeededCount == 5)
        #expect(summary.failedCount == 2)
        #expect(summary.storefrontCountryCodes == ["FRA", "USA"])
    }

    @Test func sandboxWhenTheAppAcceptsIt() async throws {
        let both = AppleStoreIdentity(bundleId: app.bundleId, appAppleId: app.appAppleId, environments: [.production, .sandbox])
        let transaction = try await verifier.transaction(try authority.transaction(["environment": "Sandbox"]), for: both)
        #expect(transaction.environment == .sandbox)
        // A Sandbox notification names no app Apple ID; its inner data is Sandbox too.
        let sandboxData: [String: Any] = [
            "bundleId": AppleTestAuthority.bundleId, "environment": "Sandbox",
            "signedTransactionInfo": try authority.transaction(["environment": "Sandbox"]),
            "signedRenewalInfo": try authority.renewalInfo(["environment": "Sandbox"]),
        ]
        let notification = try await verifier.notification(try authority.notification(["data": sandboxData]), for: both)
        #expect(notification.data?.environment == .sandbox)
        #expect(notification.data?.transaction?.environment == .sandbox)
    }

    @Test func signedWithinTheClockSkew() async throws {
        let soon = AppleTestAuthority.milliseconds(AppleTestAuthority.now.addingTimeInterval(120))
        let transaction = try await verifier.transaction(try authority.transaction(["signedDate": soon]), for: app)
        #expect(transaction.signedDate > AppleTestAuthority.now)
    }

    @Test func notificationFromItsBody() async throws {
        let body = Array(#"{"signedPayload":"\#(try authority.notification())"}"#.utf8)
        let notification = try await verifier.notification(body: body, limit: 64 * 1024, for: app)
        #expect(notification.data?.transaction != nil)
    }
}

@Suite("App Store signed data: refused")
struct AppleRefusedTests {
    let authority: AppleTestAuthority
    let verifier: AppleSignedDataVerifier
    let app = AppleTestAuthority.identity

    init() throws {
        authority = try AppleTestAuthority()
        verifier = try authority.verifier()
    }

    func transactionRefusal(_ jws: String) async -> PurchaseVerificationError? {
        await refusal { () async throws(PurchaseVerificationError) in try await verifier.transaction(jws, for: app) }
    }

    func notificationRefusal(_ jws: String, for identity: AppleStoreIdentity = AppleTestAuthority.identity) async
        -> PurchaseVerificationError?
    {
        await refusal { () async throws(PurchaseVerificationError) in try await verifier.notification(jws, for: identity) }
    }

    // MARK: Algorithm

    @Test func algorithmNone() async throws {
        let signed = try authority.transaction()
        let header = AppleTestAuthority.base64URL(try AppleTestAuthority.json(["alg": "none", "x5c": authority.x5c]))
        let unsigned = header + "." + String(signed.split(separator: ".")[1]) + "."
        let error = await transactionRefusal(unsigned)
        #expect(error?.reason == .algorithm)
        #expect(error?.message.contains("none") == true)
    }

    /// RFC 7515, 4.1.11: a JWS with a critical extension not understood is refused; the App Store uses none.
    @Test func criticalHeaderExtension() async throws {
        for crit in [["exp"], [String]()] as [[String]] {
            let jws = try authority.sign(payloadJSON: AppleTestAuthority.json(AppleTestAuthority.transactionPayload()),
                                         header: ["alg": "ES256", "x5c": authority.x5c, "crit": crit])
            let error = await transactionRefusal(jws)
            #expect(error?.reason == .malformed && error?.message.contains("crit") == true, "\(crit): \(String(describing: error))")
        }
    }

    @Test func algorithmHS256() async throws {
        // The classic confusion: an HMAC keyed with the leaf's public key, which anyone has.
        let header = AppleTestAuthority.base64URL(try AppleTestAuthority.json(["alg": "HS256", "x5c": authority.x5c]))
        let input = header + "." + AppleTestAuthority.base64URL(try AppleTestAuthority.json(AppleTestAuthority.transactionPayload()))
        let key = SymmetricKey(data: authority.leafKey.publicKey.x963Representation)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: key)
        #expect(await transactionRefusal(input + "." + AppleTestAuthority.base64URL(Data(mac)))?.reason == .algorithm)
    }

    @Test func algorithmRS256() async throws {
        let header = AppleTestAuthority.base64URL(try AppleTestAuthority.json(["alg": "RS256", "x5c": authority.x5c]))
        let input = header + "." + AppleTestAuthority.base64URL(try AppleTestAuthority.json(AppleTestAuthority.transactionPayload()))
        let signature = (0..<256).map { UInt8(truncatingIfNeeded: $0 * 7) }
        #expect(await transactionRefusal(input + "." + AppleTestAuthority.base64URL(signature))?.reason == .algorithm)
    }

    // MARK: Chain

    @Test func chainOfTwo() async throws {
        let jws = try authority.sign(AppleTestAuthority.transactionPayload(), x5c: Array(authority.x5c.prefix(2)))
        #expect(await transactionRefusal(jws)?.reason == .certificateChain)
    }

    @Test func chainOfFour() async throws {
        let jws = try authority.sign(AppleTestAuthority.transactionPayload(), x5c: authority.x5c + [authority.x5c[2]])
        #expect(await transactionRefusal(jws)?.reason == .certificateChain)
    }

    @Test func foreignRoot() async throws {
        // Same names, its own keys: a perfect chain to a root the server does not trust.
        let foreign = try AppleTestAuthority()
        let error = await transactionRefusal(try foreign.transaction())
        #expect(error?.reason == .certificateChain)
        #expect(error?.message.contains("configured App Store root") == true)
    }

    @Test func foreignRootSentWithTheTrustedRootInX5C() async throws {
        // The x5c root is never trusted: naming the configured root there changes nothing.
        let foreign = try AppleTestAuthority()
        let x5c = [foreign.x5c[0], foreign.x5c[1], authority.x5c[2]]
        #expect(await transactionRefusal(try foreign.sign(AppleTestAuthority.transactionPayload(), x5c: x5c))?.reason == .certificateChain)
    }

    /// How a transaction of `authority` fares with a verifier trusting `authority`'s own root.
    func refusalByItsOwnRoot(_ authority: AppleTestAuthority) async throws -> PurchaseVerificationError? {
        let verifier = try authority.verifier()
        let jws = try authority.transaction()
        return await refusal { () async throws(PurchaseVerificationError) in try await verifier.transaction(jws, for: app) }
    }

    @Test func intermediateWithoutItsMarker() async throws {
        let error = try await refusalByItsOwnRoot(try AppleTestAuthority(intermediateMarker: false))
        #expect(error?.reason == .certificateChain)
        #expect(error?.message.contains("1.2.840.113635.100.6.2.1") == true)
    }

    @Test func leafWithoutItsMarker() async throws {
        let error = try await refusalByItsOwnRoot(try AppleTestAuthority(leafMarker: false))
        #expect(error?.reason == .certificateChain)
        #expect(error?.message.contains("1.2.840.113635.100.6.11.1") == true)
    }

    @Test func leafExpiredAtSignedDate() async throws {
        let expired = try AppleTestAuthority(
            leafValidity: AppleTestAuthority.date("2024-01-01T00:00:00Z")...AppleTestAuthority.date("2026-01-01T00:00:00Z"))
        let error = try await refusalByItsOwnRoot(expired)
        #expect(error?.reason == .certificateChain)
        #expect(error?.message.contains("leaf certificate") == true)
    }

    // MARK: Time

    @Test func signedDateBeyondTheClockSkew() async throws {
        let later = AppleTestAuthority.milliseconds(AppleTestAuthority.now.addingTimeInterval(301))
        let error = await transactionRefusal(try authority.transaction(["signedDate": later]))
        #expect(error?.reason == .time)
    }

    @Test func clockSkewIsConfigurable() async throws {
        let strict = try AppleSignedDataVerifier(
            rootCertificatesDER: [authority.rootDER], clockSkew: 10, chainCache: nil, clock: { AppleTestAuthority.now })
        let later = AppleTestAuthority.milliseconds(AppleTestAuthority.now.addingTimeInterval(60))
        let jws = try authority.transaction(["signedDate": later])
        let error = await refusal { () async throws(PurchaseVerificationError) in try await strict.transaction(jws, for: app) }
        #expect(error?.reason == .time)
    }

    // MARK: Signature

    @Test func tamperedPayload() async throws {
        let jws = try AppleTestAuthority.tamperingPayload(try authority.transaction()) { $0["productId"] = "kiosk.lifetime" }
        #expect(await transactionRefusal(jws)?.reason == .signature)
    }

    @Test func tamperedSignature() async throws {
        let jws = try AppleTestAuthority.tamperingSignature(try authority.transaction())
        #expect(await transactionRefusal(jws)?.reason == .signature)
    }

    @Test func signatureOfTheWrongLength() async throws {
        let parts = try authority.transaction().split(separator: ".").map(String.init)
        let jws = parts[0] + "." + parts[1] + "." + AppleTestAuthority.base64URL([UInt8](repeating: 1, count: 72))
        #expect(await transactionRefusal(jws)?.reason == .signature)
    }

    // MARK: The app

    @Test func anotherBundle() async throws {
        let error = await transactionRefusal(try authority.transaction(["bundleId": "com.other.app"]))
        #expect(error?.reason == .wrongApp)
        #expect(error?.message == "the transaction is for bundle com.other.app, not com.example.kiosk")
    }

    @Test func sandboxWhereOnlyProductionIsAccepted() async throws {
        #expect(await transactionRefusal(try authority.transaction(["environment": "Sandbox"]))?.reason == .wrongEnvironment)
        let renewal = try authority.renewalInfo(["environment": "Sandbox"])
        let error = await refusal { () async throws(PurchaseVerificationError) in try await verifier.renewalInfo(renewal, for: app) }
        #expect(error?.reason == .wrongEnvironment)
    }

    @Test func notificationForAnotherAppAppleId() async throws {
        let error = await notificationRefusal(try authority.notification(dataChanges: ["appAppleId": 987_654_321]))
        #expect(error?.reason == .wrongApp)
        #expect(error?.message.contains("987654321") == true)
    }

    @Test func productionNotificationWithoutAppAppleId() async throws {
        var data = try authority.notificationDataWithout("appAppleId")
        data["bundleId"] = AppleTestAuthority.bundleId
        #expect(await notificationRefusal(try authority.notification(["data": data]))?.reason == .wrongApp)
        // Nor when the app has none configured.
        let unconfigured = AppleStoreIdentity(bundleId: app.bundleId, appAppleId: nil, environments: [.production])
        #expect(await notificationRefusal(try authority.notification(), for: unconfigured)?.reason == .wrongApp)
    }

    @Test func notificationForAnotherBundle() async throws {
        #expect(await notificationRefusal(try authority.notification(dataChanges: ["bundleId": "com.other.app"]))?.reason == .wrongApp)
    }

    // MARK: Inside a notification

    @Test func innerTransactionSignedByAForeignAuthority() async throws {
        let foreign = try AppleTestAuthority()
        let jws = try authority.notification(dataChanges: ["signedTransactionInfo": try foreign.transaction()])
        let error = await notificationRefusal(jws)
        #expect(error?.reason == .certificateChain)
        #expect(error?.message.hasPrefix("the notification's signedTransactionInfo: ") == true)
    }

    @Test func innerTransactionTampered() async throws {
        let tampered = try AppleTestAuthority.tamperingPayload(try authority.transaction()) { $0["productId"] = "kiosk.lifetime" }
        #expect(await notificationRefusal(try authority.notification(dataChanges: ["signedTransactionInfo": tampered]))?.reason == .signature)
    }

    @Test func innerRenewalInfoTampered() async throws {
        let tampered = try AppleTestAuthority.tamperingSignature(try authority.renewalInfo())
        #expect(await notificationRefusal(try authority.notification(dataChanges: ["signedRenewalInfo": tampered]))?.reason == .signature)
    }

    @Test func innerTransactionForAnotherAppOrEnvironment() async throws {
        let other = try authority.transaction(["bundleId": "com.other.app"])
        #expect(await notificationRefusal(try authority.notification(dataChanges: ["signedTransactionInfo": other]))?.reason == .wrongApp)
        // The app accepts both environments, but a Production notification cannot carry a Sandbox transaction.
        let both = AppleStoreIdentity(bundleId: app.bundleId, appAppleId: app.appAppleId, environments: [.production, .sandbox])
        let sandbox = try authority.transaction(["environment": "Sandbox"])
        let jws = try authority.notification(dataChanges: ["signedTransactionInfo": sandbox])
        #expect(await notificationRefusal(jws, for: both)?.reason == .wrongEnvironment)
    }

    // MARK: Format

    @Test func bodyOverTheLimit() async throws {
        let body = Array(#"{"signedPayload":"\#(try authority.notification())"}"#.utf8)
        let error = await refusal { () async throws(PurchaseVerificationError) in
            try await verifier.notification(body: body, limit: body.count - 1, for: app)
        }
        #expect(error?.reason == .malformed)
        #expect(error?.message.contains("more than the") == true)
    }

    @Test func bodyThatIsNotTheNotificationObject() async throws {
        for body in [#"{"payload":"x"}"#, "[]", "signedPayload=x", #"{"signedPayload":42}"#] {
            let error = await refusal { () async throws(PurchaseVerificationError) in
                try await verifier.notification(body: Array(body.utf8), limit: 1024, for: app)
            }
            #expect(error?.reason == .malformed, "\(body)")
        }
    }

    @Test func garbage() async throws {
        let good = try authority.transaction()
        let parts = good.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let header = parts[0]
        let cases: [String: String] = [
            "empty": "",
            "one part": "abc",
            "two parts": parts[0] + "." + parts[1],
            "four parts": good + ".xyz",
            "bad base64url header": "!!!." + parts[1] + "." + parts[2],
            "padded base64url": parts[0] + "=." + parts[1] + "." + parts[2],
            "bad base64url payload": header + ".a*b." + parts[2],
            "bad base64url signature": header + "." + parts[1] + ".%%%",
            "header not JSON": AppleTestAuthority.base64URL(Array("not json".utf8)) + "." + parts[1] + "." + parts[2],
            "payload not JSON": header + "." + AppleTestAuthority.base64URL(Array("{\"signedDate\":".utf8)) + "." + parts[2],
            "payload an array": header + "." + AppleTestAuthority.base64URL(Array("[1,2]".utf8)) + "." + parts[2],
            "x5c not base64": try authority.sign(AppleTestAuthority.transactionPayload(), x5c: ["@@", "@@", "@@"]),
        ]
        for (name, jws) in cases {
            #expect(await transactionRefusal(jws)?.reason == .malformed, "\(name)")
        }
        let notDER = try authority.sign(AppleTestAuthority.transactionPayload(), x5c: [Data([1, 2, 3]).base64EncodedString(), authority.x5c[1], authority.x5c[2]])
        #expect(await transactionRefusal(notDER)?.reason == .certificateChain)
    }

    @Test func missingFieldIsMalformed() async throws {
        var payload = AppleTestAuthority.transactionPayload()
        payload["productId"] = nil
        let error = await transactionRefusal(try authority.sign(payload))
        #expect(error?.reason == .malformed)
        #expect(error?.message == "the transaction's payload lacks the field productId")
    }
}

extension AppleTestAuthority {
    /// The default notification `data` without one of its fields.
    func notificationDataWithout(_ field: String) throws -> [String: Any] {
        var data: [String: Any] = [
            "bundleId": Self.bundleId, "appAppleId": Self.appAppleId, "environment": "Production",
            "signedTransactionInfo": try transaction(), "signedRenewalInfo": try renewalInfo(),
        ]
        data[field] = nil
        return data
    }
}
