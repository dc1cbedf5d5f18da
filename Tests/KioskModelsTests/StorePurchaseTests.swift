import Foundation
import KioskModels
import Testing

/// What a store purchase grants, by kind, through renewals, grace, lapse, refund and reversal.
@Suite struct StorePurchaseTests {
    static let day: Int64 = 86_400
    /// 2026-01-01 00:00 UTC.
    static let january: Int64 = 1_767_225_600
    static func issue(_ edition: Int, _ date: String) -> IssueRef { IssueRef(editionID: edition, date: IssueDate(date)!) }

    static let monthly = StoreProduct(appKey: "quiosc", id: "cat.quiosc.mensual", kind: .subscription, scope: .period)
    static let unlimited = StoreProduct(appKey: "quiosc", id: "cat.quiosc.tot", kind: .subscription, editions: [2], scope: .all)
    static let pack = StoreProduct(appKey: "quiosc", id: "cat.quiosc.pack5", kind: .credits, credits: 2)
    static let single = StoreProduct(appKey: "quiosc", id: "cat.quiosc.exemplar", storeIDs: [.google: "exemplar"], kind: .issue)

    @Test func productsAreKnownByEachStoresID() {
        let products = [Self.monthly, Self.single]
        #expect(products.product(store: .apple, storeProductID: "cat.quiosc.exemplar") == Self.single)
        #expect(products.product(store: .google, storeProductID: "exemplar") == Self.single)
        #expect(products.product(store: .google, storeProductID: "cat.quiosc.exemplar") == nil)
        #expect(Self.monthly.coveredEditions(subscriberEditions: [1, 3]) == [1, 3])
        #expect(Self.unlimited.coveredEditions(subscriberEditions: [1, 3]) == [2])
        #expect(Self.single.coveredEditions(subscriberEditions: [1]).isEmpty)
    }

    @Test func aPeriodSubscriptionOpensTheIssuesOfItsPaidPeriodsAndKeepsThemWhenItLapses() {
        let january = PaidPeriod(start: Self.january, end: Self.january + 31 * Self.day)
        var purchase = StorePurchase(store: .apple, originalID: "1000", product: Self.monthly, paidPeriods: [january])
        let lines = [1, 3]
        let mid = Self.january + 10 * Self.day
        #expect(purchase.state(at: mid) == .active)
        #expect(purchase.grants(Self.issue(1, "2026-01-15"), at: mid, subscriberEditions: lines))
        #expect(purchase.grants(Self.issue(3, "2026-01-31"), at: mid, subscriberEditions: lines))
        #expect(!purchase.grants(Self.issue(2, "2026-01-15"), at: mid, subscriberEditions: lines), "not one of its editions")
        #expect(!purchase.grants(Self.issue(1, "2025-12-31"), at: mid, subscriberEditions: lines), "dated before it was paid")
        #expect(!purchase.grants(Self.issue(1, "2026-02-01"), at: mid, subscriberEditions: lines), "dated after")
        let march = Self.january + 70 * Self.day
        #expect(purchase.state(at: march) == .expired)
        #expect(purchase.grants(Self.issue(1, "2026-01-15"), at: march, subscriberEditions: lines), "a lapsed period keeps its issues")
        purchase.paidPeriods.append(PaidPeriod(start: january.end, end: january.end + 28 * Self.day))
        #expect(purchase.grants(Self.issue(1, "2026-02-10"), at: march, subscriberEditions: lines), "a renewal adds its period")
    }

    @Test func graceKeepsAccessUntilItEnds() {
        let end = Self.january + 31 * Self.day
        let purchase = StorePurchase(store: .google, originalID: "token", product: Self.monthly,
                                     paidPeriods: [PaidPeriod(start: Self.january, end: end)], graceUntil: end + 6 * Self.day)
        let inGrace = end + 2 * Self.day
        #expect(purchase.state(at: inGrace) == .active)
        #expect(purchase.grants(Self.issue(1, "2026-02-03"), at: inGrace, subscriberEditions: [1]))
        let after = end + 7 * Self.day
        #expect(purchase.state(at: after) == .expired)
        #expect(!purchase.grants(Self.issue(1, "2026-02-03"), at: after, subscriberEditions: [1]), "grace was never paid for")
        #expect(purchase.grants(Self.issue(1, "2026-01-20"), at: after, subscriberEditions: [1]))
    }

    @Test func anAllScopeSubscriptionOpensEveryIssueWhileActiveOnly() {
        let purchase = StorePurchase(store: .apple, originalID: "2000", product: Self.unlimited,
                                     paidPeriods: [PaidPeriod(start: Self.january, end: Self.january + 31 * Self.day)])
        #expect(purchase.grants(Self.issue(2, "1999-05-01"), at: Self.january + Self.day, subscriberEditions: [1]))
        #expect(!purchase.grants(Self.issue(1, "2026-01-05"), at: Self.january + Self.day, subscriberEditions: [1]))
        #expect(!purchase.grants(Self.issue(2, "2026-01-05"), at: Self.january + 40 * Self.day, subscriberEditions: [1]))
    }

    @Test func aPackSpendsEachCreditOnceAndForGood() throws {
        var purchase = StorePurchase(store: .apple, originalID: "3000", product: Self.pack)
        #expect(purchase.unspentCredits == 2)
        try purchase.spendCredit(on: Self.issue(1, "2026-01-02"))
        try purchase.spendCredit(on: Self.issue(1, "2026-01-02"))
        #expect(purchase.unspentCredits == 1, "the same issue twice spends one credit")
        try purchase.spendCredit(on: Self.issue(3, "2026-01-03"))
        #expect(throws: PurchaseRuleError.noCreditLeft) { try purchase.spendCredit(on: Self.issue(1, "2026-01-04")) }
        #expect(purchase.grants(Self.issue(3, "2026-01-03"), at: Self.january + 400 * Self.day, subscriberEditions: []))
        var single = StorePurchase(store: .google, originalID: "t", product: Self.single, issues: [Self.issue(1, "2026-01-02")])
        #expect(throws: PurchaseRuleError.notAPack) { try single.spendCredit(on: Self.issue(1, "2026-01-03")) }
        #expect(single.grants(Self.issue(1, "2026-01-02"), at: 0, subscriberEditions: []))
        #expect(!single.grants(Self.issue(1, "2026-01-03"), at: 0, subscriberEditions: []))
    }

    @Test func aRefundRemovesWhatItGrantedAndAReversalRestoresIt() throws {
        var pack = StorePurchase(store: .apple, originalID: "3000", product: Self.pack, issues: [Self.issue(1, "2026-01-02")])
        var subscription = StorePurchase(store: .apple, originalID: "1000", product: Self.monthly,
                                         paidPeriods: [PaidPeriod(start: Self.january, end: Self.january + 31 * Self.day)])
        pack.revoked = true
        subscription.revoked = true
        #expect(pack.state(at: 0) == .revoked && subscription.state(at: Self.january) == .revoked)
        #expect(!pack.grants(Self.issue(1, "2026-01-02"), at: 0, subscriberEditions: []), "issues opened with a refunded pack close")
        #expect(!subscription.grants(Self.issue(1, "2026-01-02"), at: Self.january, subscriberEditions: [1]))
        #expect(throws: PurchaseRuleError.revoked) { try pack.spendCredit(on: Self.issue(1, "2026-01-05")) }
        pack.revoked = false
        #expect(pack.grants(Self.issue(1, "2026-01-02"), at: 0, subscriberEditions: []))
    }

    @Test func extremeTimesDoNotTrap() {
        let purchase = StorePurchase(store: .apple, originalID: "x", product: Self.monthly,
                                     paidPeriods: [PaidPeriod(start: .min, end: .min), PaidPeriod(start: .max, end: .max)],
                                     graceUntil: .max)
        _ = purchase.grants(Self.issue(1, "2026-01-02"), at: .max, subscriberEditions: [1])
        _ = purchase.grants(Self.issue(1, "2026-01-02"), at: .min, subscriberEditions: [1])
        #expect(purchase.state(at: .min) == .active)
    }
}

/// The account token a reader's purchases carry in the stores.
@Suite struct StoreAccountTokenTests {
    let issuer = IdentityKeyIssuer(secret: Array("a secret of at least thirty-two bytes!".utf8))

    @Test func aReadersTokenIsTheSameOnEveryDeviceAndApp() {
        let one = issuer.storeAccountToken(appKey: "quiosc", deviceKey: "iphone", userID: 42)
        #expect(one == issuer.storeAccountToken(appKey: "esports", deviceKey: "ipad", userID: 42))
        #expect(one != issuer.storeAccountToken(appKey: "quiosc", deviceKey: "iphone", userID: 43))
        #expect(one != IdentityKeyIssuer(secret: Array("another secret of thirty-two bytes!!".utf8))
            .storeAccountToken(appKey: "quiosc", deviceKey: "iphone", userID: 42))
    }

    @Test func anAnonymousTokenBelongsToTheAppsDevice() {
        let device = issuer.storeAccountToken(appKey: "quiosc", deviceKey: "iphone", userID: 0)
        #expect(device == issuer.storeAccountToken(appKey: "quiosc", deviceKey: "iphone", userID: 0))
        #expect(device != issuer.storeAccountToken(appKey: "quiosc", deviceKey: "ipad", userID: 0))
        #expect(device != issuer.storeAccountToken(appKey: "esports", deviceKey: "iphone", userID: 0))
    }

    @Test func itIsAVersion8UUIDOfTheRFCVariant() {
        let text = issuer.storeAccountToken(appKey: "quiosc", deviceKey: "iphone", userID: 7).uuidString
        let characters = Array(text)
        #expect(characters.count == 36 && characters[14] == "8")
        #expect("89AB".contains(characters[19]))
    }
}
