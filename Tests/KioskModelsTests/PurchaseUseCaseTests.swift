import Foundation
import KioskModels
import KioskTestSupport
import Synchronization
import Testing

/// What a purchase means to the calls, over a real SQLite store. The stores' own checks are
/// `KioskPurchasesTests` and the end-to-end driver's; here a purchase is whatever `Scripted` says the
/// store vouched for, so that each rule of the use cases is seen on its own.
@Suite struct PurchaseUseCaseTests {
    /// A store that vouches for the facts it was given, by evidence; anything else is unverifiable.
    final class Scripted: StoreVerifying {
        let facts = Mutex<[PurchaseEvidence: StoreFacts]>([:])
        let notices = Mutex<[String: StoreNotice]>([:])
        let confirmed = Mutex<[String]>([])
        func verify(_ evidence: PurchaseEvidence, appKey: String, kind: ProductKind) async throws -> StoreFacts {
            guard let facts = facts.withLock({ $0[evidence] }) else { throw PurchaseError.unverifiable("forged") }
            return facts
        }
        func notice(store: Storefront, appKey: String, body: [UInt8], authorization: String?) async throws -> StoreNotice {
            guard let notice = notices.withLock({ $0[String(decoding: body, as: UTF8.self)] }) else { throw PurchaseError.unverifiable("forged") }
            return notice
        }
        func confirm(_ facts: StoreFacts, appKey: String, kind: ProductKind) async throws {
            confirmed.withLock { $0.append(facts.originalID) }
        }
    }

    static let products = [
        StoreProduct(appKey: "quiosc", id: "cat.quiosc.exemplar", kind: .issue),
        StoreProduct(appKey: "quiosc", id: "cat.quiosc.pack2", kind: .credits, credits: 2),
        StoreProduct(appKey: "quiosc", id: "cat.quiosc.mensual", kind: .subscription, scope: .period),
    ]
    static let day: Int64 = 86_400

    struct Setup {
        let fixture: ServiceFixture
        let stores = Scripted()
        let service: KioskService
        init(purchaseCheckBudget: ClientBudget = .unlimited) async throws {
            fixture = try await ServiceFixture.sqlite()
            var catalogue = SampleCatalogue.catalogue
            catalogue.products = PurchaseUseCaseTests.products
            try await fixture.store.syncCatalogue(catalogue, dryRun: false)
            service = KioskService(store: fixture.store, identityKeys: fixture.identityKeys, passwords: fixture.passwords,
                                   signInPolicy: SignInPolicy(), clock: fixture.clock, stores: stores, anonymousDeviceLimit: 2,
                                   purchaseCheckBudget: purchaseCheckBudget)
        }

        /// An anonymous identity on `device`, or the reader's when credentials are given.
        func identity(_ device: String, _ username: String = "", _ password: String = "") async throws -> DeviceIdentity {
            try await service.register(appKey: "quiosc", deviceKey: device, username: username, password: password,
                                       deviceInfo: [:], os: "ios").identity
        }

        /// Makes the store vouch for `id` (an Apple JWS stand-in) as a purchase of `product`.
        func vouch(_ id: String, product: String, token: String? = nil, period: PaidPeriod? = nil, revoked: Bool = false,
                   signedAt: Int64 = 1) -> PurchaseEvidence {
            let evidence = PurchaseEvidence.apple(signedTransaction: id)
            let facts = StoreFacts(store: .apple, originalID: "orig-" + id, storeProductID: product, environment: "Production",
                                   accountToken: token, payment: StorePayment(id: id, paidAt: 1, period: period, revoked: revoked,
                                                                              price: 990, currency: "EUR", signedAt: signedAt))
            stores.facts.withLock { $0[evidence] = facts }
            return evidence
        }

        func opens(_ identity: DeviceIdentity, _ edition: Int, _ date: String) async throws -> Bool {
            do {
                _ = try await service.openIssue(appKey: "quiosc", identityKey: identity.key, editionID: edition,
                                                date: IssueDate(date)!, claimedUserID: "", os: "ios")
                return true
            } catch KioskError.notEntitled {
                return false
            }
        }
    }

    static func issue(_ edition: Int, _ date: String) -> IssueRef { IssueRef(editionID: edition, date: IssueDate(date)!) }

    @Test func anIssuePurchaseOpensItsIssueOnceAndForGood() async throws {
        let setup = try await Setup()
        let device = try await setup.identity("d1")
        // No demo left, so that only the purchase can open it.
        for _ in 0..<3 { _ = try await setup.service.consumeDemo(appKey: "quiosc", deviceKey: "d1", identityKey: device.key,
                                                                  deviceInfo: [:], os: "ios", clientMaximum: 0) }
        for date in ["2025-05-28", "2025-05-29", "2025-05-30"] { _ = try await setup.opens(device, 1, date) }
        #expect(try await !setup.opens(device, 1, "2025-05-31"))
        let evidence = setup.vouch("tx1", product: "cat.quiosc.exemplar")
        let (_, held) = try await setup.service.registerPurchase(appKey: "quiosc", deviceKey: "d1", identityKey: device.key,
                                                                 evidence: evidence, issue: Self.issue(1, "2025-05-31"))
        #expect(held.purchase.issues == [Self.issue(1, "2025-05-31")] && held.holder == .device(deviceKey: "d1"))
        #expect(try await setup.opens(device, 1, "2025-05-31"))
        // Registered again naming another issue: the same answer, nothing more opened.
        let (_, again) = try await setup.service.registerPurchase(appKey: "quiosc", deviceKey: "d1", identityKey: device.key,
                                                                  evidence: evidence, issue: Self.issue(1, "2025-05-30"))
        #expect(again == held)
        #expect(setup.stores.confirmed.withLock { $0 } == ["orig-tx1", "orig-tx1"])
        await #expect(throws: KioskError.invalidArgument(parameter: "edicio_id", problem: "an issue purchase must name the issue it buys (edicio_id and data)")) {
            try await setup.service.registerPurchase(appKey: "quiosc", deviceKey: "d1", identityKey: device.key,
                                                     evidence: setup.vouch("tx2", product: "cat.quiosc.exemplar"), issue: nil)
        }
        #expect(try await setup.fixture.store.purchase(appKey: "quiosc", store: .apple, originalID: "orig-tx2") == nil, "a refusal stores nothing")
        await #expect(throws: PurchaseError.unverifiable("forged")) {
            try await setup.service.registerPurchase(appKey: "quiosc", deviceKey: "d1", identityKey: device.key,
                                                     evidence: .apple(signedTransaction: "nobody vouched"), issue: nil)
        }
        await #expect(throws: KioskError.invalidIdentity) {
            try await setup.service.registerPurchase(appKey: "quiosc", deviceKey: "d2", identityKey: device.key, evidence: evidence, issue: nil)
        }
    }

    @Test func aPackSpendsOneCreditAnIssueAndNothingOnAnOpenOne() async throws {
        let setup = try await Setup()
        let device = try await setup.identity("d1")
        _ = try await setup.service.registerPurchase(appKey: "quiosc", deviceKey: "d1", identityKey: device.key,
                                                     evidence: setup.vouch("pack", product: "cat.quiosc.pack2"), issue: nil)
        func spend(_ edition: Int, _ date: String) async throws -> Int? {
            try await setup.service.spendCredit(appKey: "quiosc", deviceKey: "d1", identityKey: device.key,
                                                issue: Self.issue(edition, date)).1?.purchase.unspentCredits
        }
        #expect(try await spend(1, "2025-05-28") == 1)
        #expect(try await spend(1, "2025-05-28") == 1, "the same issue again costs nothing")
        #expect(try await spend(8, "2025-05-25") == 1, "a free issue costs nothing")
        #expect(try await spend(1, "2025-05-29") == 0)
        await #expect(throws: PurchaseError.noCreditLeft) { _ = try await spend(1, "2025-05-30") }
        #expect(try await setup.opens(device, 1, "2025-05-29"))
        await #expect(throws: KioskError.noPublishedIssue(editionID: 1, date: IssueDate("2024-01-01")!)) { _ = try await spend(1, "2024-01-01") }
    }

    @Test func aSubscriptionOpensItsPeriodAndShowsInRegistrar() async throws {
        let setup = try await Setup()
        try await setup.fixture.addUser("anna", password: "pw")
        let reader = try await setup.identity("d1", "anna", "pw")
        let may28 = 1_748_390_400 as Int64
        let evidence = setup.vouch("sub", product: "cat.quiosc.mensual", period: PaidPeriod(start: may28, end: may28 + 2 * Self.day))
        let (registration, held) = try await setup.service.registerPurchase(appKey: "quiosc", deviceKey: "d1", identityKey: reader.key,
                                                                            evidence: evidence, issue: nil)
        #expect(held.holder == .reader(userID: reader.userID))
        let fins = registration.entitlements.filter { $0.edition.edition.id == 1 }.map(\.until)
        #expect(fins == [IssueDate("2025-05-29")], "registrar's fins is the last paid day")
        let other = try await setup.identity("d9", "anna", "pw")
        #expect(try await setup.opens(other, 1, "2025-05-29"), "a reader's purchase opens on every device")
        #expect(try await !setup.opens(other, 1, "2025-05-30"), "dated after the paid period")
        let (_, web) = try await setup.service.openIssueOnWeb(appKey: "quiosc", userID: reader.userID, editionID: 1, date: IssueDate("2025-05-28")!)
        #expect(web.editionID == 1, "and in the web kiosk")
        await #expect(throws: KioskError.notEntitled(editionID: 1, date: IssueDate("2025-05-31")!)) {
            _ = try await setup.service.openIssueOnWeb(appKey: "quiosc", userID: reader.userID, editionID: 1, date: IssueDate("2025-05-31")!)
        }
    }

    @Test func whoseAPurchaseIsAcrossDevicesAndReaders() async throws {
        let setup = try await Setup()
        let first = try await setup.identity("d1"), second = try await setup.identity("d2"), third = try await setup.identity("d3")
        let token = setup.fixture.identityKeys.storeAccountToken(appKey: "quiosc", deviceKey: "d1", userID: 0).uuidString.lowercased()
        #expect(try await setup.service.products(appKey: "quiosc", identityKey: first.key).accountToken == token)
        let evidence = setup.vouch("sub", product: "cat.quiosc.mensual", token: token,
                                   period: PaidPeriod(start: 1_748_390_400, end: 1_748_390_400 + 3 * Self.day))
        await #expect(throws: PurchaseError.self, "another device's token") {
            try await setup.service.registerPurchase(appKey: "quiosc", deviceKey: "d2", identityKey: second.key, evidence: evidence, issue: nil)
        }
        _ = try await setup.service.registerPurchase(appKey: "quiosc", deviceKey: "d1", identityKey: first.key, evidence: evidence, issue: nil)
        let (_, restored) = try await setup.service.restorePurchases(appKey: "quiosc", deviceKey: "d2", identityKey: second.key,
                                                                     evidence: [evidence, .apple(signedTransaction: "forged")])
        #expect(restored.count == 1 && restored.first?.devices == ["d1", "d2"], "restored on a second device; the forged one left out")
        await #expect(throws: PurchaseError.anotherAccount("this purchase is already restored on 2 devices; sign in to read it on more")) {
            try await setup.service.restorePurchases(appKey: "quiosc", deviceKey: "d3", identityKey: third.key, evidence: [evidence])
        }
        #expect(try await setup.opens(second, 1, "2025-05-29"))
        #expect(try await !setup.opens(third, 1, "2025-05-29"), "not restored on a third device")
        // d1 signs in: the purchase becomes the reader's, and opens on the reader's other devices.
        try await setup.fixture.addUser("bernat", password: "pw")
        let reader = try await setup.identity("d1", "bernat", "pw")
        let held = try await setup.fixture.store.purchase(appKey: "quiosc", store: .apple, originalID: "orig-sub")
        #expect(held?.holder == .reader(userID: reader.userID))
        let elsewhere = try await setup.identity("d7", "bernat", "pw")
        #expect(try await setup.opens(elsewhere, 1, "2025-05-29"))
    }

    @Test func eachClientHasABudgetOfPurchaseChecksAndARestoreIsBounded() async throws {
        let setup = try await Setup(purchaseCheckBudget: ClientBudget(burst: 3, perMinute: 1))
        let device = try await setup.identity("d1")
        let evidence = (0..<4).map { setup.vouch("sub\($0)", product: "cat.quiosc.mensual") }
        let tooMany = Array(repeating: evidence[0], count: KioskService.restoreLimit + 1)
        await #expect(throws: KioskError.invalidArgument(parameter: "compres", problem: "21 purchases sent; at most 20 a call: send the rest in another")) {
            try await RequestClient.$address.withValue("192.0.2.7") {
                try await setup.service.restorePurchases(appKey: "quiosc", deviceKey: "d1", identityKey: device.key, evidence: tooMany)
            }
        }
        // The refused call verified nothing: the whole burst is left, then the fourth check of the minute is refused.
        await #expect(throws: KioskError.tooManyPurchaseChecks(retryAfterSeconds: 60)) {
            try await RequestClient.$address.withValue("192.0.2.7") {
                try await setup.service.restorePurchases(appKey: "quiosc", deviceKey: "d1", identityKey: device.key, evidence: evidence)
            }
        }
        let held = try await setup.fixture.store.purchases(appKey: "quiosc", userID: 0, deviceKey: "d1")
        #expect(held.count == 3, "the three checked within the burst were registered")
        // Another client's budget is its own; outside a request nothing is limited.
        let other = try await setup.identity("d2")
        _ = try await RequestClient.$address.withValue("192.0.2.8") {
            try await setup.service.registerPurchase(appKey: "quiosc", deviceKey: "d2", identityKey: other.key,
                                                     evidence: setup.vouch("sub9", product: "cat.quiosc.mensual"), issue: nil)
        }
        _ = try await setup.service.registerPurchase(appKey: "quiosc", deviceKey: "d1", identityKey: device.key, evidence: evidence[3], issue: nil)
    }

    @Test func notificationsAreAppliedOnceInAnyOrder() async throws {
        let setup = try await Setup()
        let may28 = 1_748_390_400 as Int64
        func notice(_ id: String, payment: String, start: Int64, revoked: Bool = false, signedAt: Int64) -> [UInt8] {
            let facts = StoreFacts(store: .apple, originalID: "orig", storeProductID: "cat.quiosc.mensual", environment: "Production",
                                   payment: StorePayment(id: payment, paidAt: start, period: PaidPeriod(start: start, end: start + Self.day),
                                                         revoked: revoked, signedAt: signedAt))
            setup.stores.notices.withLock { $0[id] = StoreNotice(store: .apple, id: id, type: "DID_RENEW", facts: facts) }
            return Array(id.utf8)
        }
        func post(_ body: [UInt8]) async throws -> KioskService.NoticeOutcome {
            try await setup.service.applyNotice(store: .apple, appKey: "quiosc", body: body, authorization: nil)
        }
        let refund = notice("n3", payment: "t2", start: may28 + Self.day, revoked: true, signedAt: 30)
        #expect(try await post(refund) == .applied, "a refund first: the purchase is created from it")
        #expect(try await post(notice("n1", payment: "t1", start: may28, signedAt: 10)) == .applied)
        #expect(try await post(notice("n2", payment: "t2", start: may28 + Self.day, signedAt: 20)) == .recorded, "older than the refund")
        for _ in 0..<4 { #expect(try await post(refund) == .duplicate) }
        let held = try #require(try await setup.fixture.store.purchase(appKey: "quiosc", store: .apple, originalID: "orig"))
        #expect(held.purchase.revoked && held.holder == .unclaimed)
        #expect(try await setup.fixture.store.notices(appKey: "quiosc", store: .apple, originalID: "orig").map(\.id) == ["n3", "n1", "n2"])
        await #expect(throws: PurchaseError.unverifiable("forged")) { try await post(Array("unknown".utf8)) }
        await #expect(throws: KioskError.unknownApp("nope")) {
            try await setup.service.applyNotice(store: .apple, appKey: "nope", body: refund, authorization: nil)
        }
    }
}

extension PurchaseUseCaseTests {
    @Test func aRefundHeardBeforeTheRegistrationIsKept() async throws {
        let setup = try await Setup()
        let device = try await setup.identity("d1")
        let paid = StoreFacts(store: .google, originalID: "token-1", storeProductID: "cat.quiosc.pack2", environment: "Production",
                              payment: StorePayment(id: "GPA.1", paidAt: 10, signedAt: 10))
        var voided = paid
        voided.storeProductID = ""
        voided.payment = StorePayment(id: "GPA.1", paidAt: 10, revoked: true, signedAt: 20)
        setup.stores.notices.withLock { $0["void"] = StoreNotice(store: .google, id: "m1", type: "VOIDED_PURCHASE", facts: voided) }
        #expect(try await setup.service.applyNotice(store: .google, appKey: "quiosc", body: Array("void".utf8), authorization: nil) == .applied)
        let evidence = PurchaseEvidence.google(productID: "cat.quiosc.pack2", token: "token-1")
        var lookup = paid
        lookup.payment?.signedAt = 30
        setup.stores.facts.withLock { $0[evidence] = lookup }
        let (_, held) = try await setup.service.registerPurchase(appKey: "quiosc", deviceKey: "d1", identityKey: device.key,
                                                                 evidence: evidence, issue: nil)
        #expect(held.purchase.product.id == "cat.quiosc.pack2" && held.purchase.revoked, "the refund heard first still counts")
        await #expect(throws: PurchaseError.noCreditLeft) {
            _ = try await setup.service.spendCredit(appKey: "quiosc", deviceKey: "d1", identityKey: device.key, issue: Self.issue(1, "2025-05-28"))
        }
    }

    @Test func anIssuePurchaseCannotBuyAFreeIssue() async throws {
        let setup = try await Setup()
        let device = try await setup.identity("d1")
        await #expect(throws: KioskError.invalidArgument(parameter: "edicio_id", problem: "edition 8 is free in this app: name an issue that is not")) {
            try await setup.service.registerPurchase(appKey: "quiosc", deviceKey: "d1", identityKey: device.key,
                                                     evidence: setup.vouch("tx", product: "cat.quiosc.exemplar"), issue: Self.issue(8, "2025-05-25"))
        }
        #expect(try await setup.fixture.store.purchase(appKey: "quiosc", store: .apple, originalID: "orig-tx") == nil)
    }
}
