import KioskModels
import Testing

/// How the stores' words become a purchase: in any order, never counted twice, the later word winning;
/// and whose a purchase is.
@Suite struct HeldPurchaseTests {
    static let day: Int64 = 86_400
    static let january: Int64 = 1_767_225_600
    static let monthly = StoreProduct(appKey: "quiosc", id: "cat.quiosc.mensual", kind: .subscription, scope: .period)
    static let pack = StoreProduct(appKey: "quiosc", id: "cat.quiosc.pack2", kind: .credits, credits: 2)

    static func renewal(_ month: Int64, revoked: Bool = false, signedAt: Int64? = nil) -> StoreFacts {
        let start = january + month * 30 * day
        return StoreFacts(store: .apple, originalID: "1000", storeProductID: "cat.quiosc.mensual", environment: "Production",
                          payment: StorePayment(id: "tx\(month)", paidAt: start, period: PaidPeriod(start: start, end: start + 30 * day),
                                                revoked: revoked, price: 4_990, currency: "EUR",
                                                signedAt: signedAt ?? (start * 1_000 + 1)))
    }

    @Test func anyOrderOfTheSameWordsGivesTheSamePurchase() {
        let words = [Self.renewal(0), Self.renewal(1), Self.renewal(2), Self.renewal(1, revoked: true, signedAt: Self.january * 1_000 + 90 * Self.day * 1_000)]
        var forward = HeldPurchase(appKey: "quiosc", facts: words[0], product: Self.monthly, at: 0)
        for word in words.dropFirst() { forward.apply(word, at: 0) }
        var backward = HeldPurchase(appKey: "quiosc", facts: words[3], product: Self.monthly, at: 0)
        for word in words.dropLast().reversed() { backward.apply(word, at: 0) }
        #expect(forward.payments == backward.payments)
        #expect(forward.purchase == backward.purchase)
        #expect(forward.purchase.paidPeriods.count == 2, "the refunded month pays for nothing")
        #expect(!forward.purchase.revoked, "only a refund of the latest payment ends the subscription")
        #expect(forward.revenue == ["EUR": 9_980])
        let changed1 = forward.apply(Self.renewal(2), at: 5)
        #expect(!changed1, "a word heard again changes nothing")
    }

    @Test func aFreeTrialOpensItsIssuesWhileItLastsAndKeepsNone() {
        var trial = Self.renewal(0)
        trial.payment?.price = 0
        var held = HeldPurchase(appKey: "quiosc", facts: trial, product: Self.monthly, at: 0)
        let inTrial = IssueRef(editionID: 1, date: IssueDate(unixTime: Self.january + 3 * Self.day))
        let trialEnd = Self.january + 30 * Self.day
        #expect(held.purchase.paidPeriods.isEmpty && held.purchase.freePeriods.count == 1)
        #expect(held.purchase.grants(inTrial, at: Self.january + 5 * Self.day, subscriberEditions: [1]))
        #expect(held.purchase.state(at: trialEnd - 1) == .active)
        // Lapsed after the trial: nothing kept, though `period` keeps what was paid.
        #expect(held.purchase.state(at: trialEnd + 1) == .expired)
        #expect(!held.purchase.grants(inTrial, at: trialEnd + 1, subscriberEditions: [1]))
        // Converted: the paid month is kept after it lapses, the trial's issues still are not.
        held.apply(Self.renewal(1), at: 0)
        let inPaid = IssueRef(editionID: 1, date: IssueDate(unixTime: trialEnd + 3 * Self.day))
        let paidEnd = Self.january + 60 * Self.day
        #expect(held.purchase.grants(inPaid, at: paidEnd + Self.day, subscriberEditions: [1]))
        #expect(!held.purchase.grants(inTrial, at: paidEnd + Self.day, subscriberEditions: [1]))
        #expect(held.purchase.paidEnd == paidEnd && held.purchase.accessEnd == paidEnd)
        #expect(held.revenue == ["EUR": 4_990])
    }

    @Test func aPriceNoStoreCouldChargeIsUnknown() {
        #expect(StorePayment.plausible(4_990) == 4_990)
        #expect(StorePayment.plausible(0) == 0)
        #expect(StorePayment.plausible(-1) == nil)
        #expect(StorePayment.plausible(.max) == nil)
        #expect(StorePayment.plausible(nil) == nil)
    }

    @Test func anOlderWordNeverUndoesANewerOne() {
        var held = HeldPurchase(appKey: "quiosc", facts: Self.renewal(0, revoked: true, signedAt: 2_000), product: Self.monthly, at: 0)
        #expect(held.purchase.revoked)
        let changed2 = held.apply(Self.renewal(0, revoked: false, signedAt: 1_000), at: 0)
        #expect(!changed2, "the purchase as first signed is older than its refund")
        #expect(held.purchase.revoked)
        let changed3 = held.apply(Self.renewal(0, revoked: false, signedAt: 3_000), at: 0)
        #expect(changed3, "a reversal signed later restores it")
        #expect(!held.purchase.revoked)
        var grace = Self.renewal(0)
        grace.payment = nil
        grace.grace = GraceFact(until: Self.january + 40 * Self.day, signedAt: 10)
        let changed4 = held.apply(grace, at: 0)
        #expect(changed4)
        grace.grace = GraceFact(until: nil, signedAt: 5)
        let changed5 = held.apply(grace, at: 0)
        #expect(!changed5, "an older word about the grace is ignored")
        #expect(held.purchase.graceUntil == Self.january + 40 * Self.day)
    }

    @Test func anOperatorsRevocationOutlastsTheStore() {
        var held = HeldPurchase(appKey: "quiosc", facts: Self.renewal(0), product: Self.monthly, at: 0)
        held.setRevokedByOperator(true, at: 1)
        held.apply(Self.renewal(1), at: 2)
        #expect(held.purchase.revoked)
        held.setRevokedByOperator(false, at: 3)
        #expect(!held.purchase.revoked)
    }

    @Test func aPackIsRevokedWithItsPayment() {
        let paid = StoreFacts(store: .google, originalID: "token", storeProductID: "cat.quiosc.pack2", environment: "Production",
                              payment: StorePayment(id: "GPA.1", paidAt: 10, signedAt: 10))
        var held = HeldPurchase(appKey: "quiosc", facts: paid, product: Self.pack, at: 0)
        #expect(!held.purchase.revoked && held.purchase.unspentCredits == 2)
        var voided = paid
        voided.payment?.revoked = true
        voided.payment?.signedAt = 20
        held.apply(voided, at: 0)
        #expect(held.purchase.revoked && held.purchase.state(at: 0) == .revoked)
    }

    static let tokenA = "0c8a4a8e-0000-8000-8000-00000000000a"
    static func claimant(_ user: Int, _ device: String, tokens: Set<String> = []) -> PurchaseClaimant {
        PurchaseClaimant(userID: user, deviceKey: device, accountTokens: tokens)
    }

    @Test func whoseAPurchaseIs() throws {
        var facts = Self.renewal(0)
        facts.accountToken = Self.tokenA
        var held = HeldPurchase(appKey: "quiosc", facts: facts, product: Self.monthly, at: 0)
        #expect(throws: PurchaseError.self, "an account token names one account") {
            try held.claim(by: Self.claimant(0, "d9", tokens: ["other"]), deviceLimit: 5, at: 0)
        }
        #expect(held.holder == .unclaimed)
        let changed8 = try held.claim(by: Self.claimant(0, "d1", tokens: [Self.tokenA]), deviceLimit: 2, at: 0)
        #expect(changed8)
        #expect(held.holder == .device(deviceKey: "d1") && held.devices == ["d1"])
        let changed9 = try held.claim(by: Self.claimant(0, "d1"), deviceLimit: 2, at: 0)
        #expect(!changed9, "the same device again changes nothing")
        let changed10 = try held.claim(by: Self.claimant(0, "d2"), deviceLimit: 2, at: 0)
        #expect(changed10, "restored on a second device")
        #expect(held.isHeld(by: Self.claimant(0, "d2")))
        #expect(throws: PurchaseError.anotherAccount("this purchase is already restored on 2 devices; sign in to read it on more")) {
            try held.claim(by: Self.claimant(0, "d3"), deviceLimit: 2, at: 0)
        }
        let restoredSignIn = try held.claim(by: Self.claimant(9, "d2"), deviceLimit: 2, at: 0)
        #expect(!restoredSignIn, "signing in where it was restored does not take it from its buyer")
        #expect(held.holder == .device(deviceKey: "d1") && held.isHeld(by: Self.claimant(9, "d2")))
        let changed11 = try held.claim(by: Self.claimant(7, "d1"), deviceLimit: 2, at: 0)
        #expect(changed11, "signing in on the device that bought it makes it the reader's")
        #expect(held.holder == .reader(userID: 7) && held.devices.isEmpty)
        #expect(held.isHeld(by: Self.claimant(7, "d99")), "a reader's opens on every device")
        #expect(throws: PurchaseError.self, "another reader cannot take it by posting its transaction") {
            try held.claim(by: Self.claimant(8, "d1"), deviceLimit: 2, at: 0)
        }
        #expect(held.holder == .reader(userID: 7))
    }

    @Test func anOperatorReleasesADevice() throws {
        var held = HeldPurchase(appKey: "quiosc", facts: Self.renewal(0), product: Self.monthly, at: 0)
        try held.claim(by: Self.claimant(0, "d1"), deviceLimit: 2, at: 0)
        try held.claim(by: Self.claimant(0, "d2"), deviceLimit: 2, at: 0)
        let changed6 = held.release(deviceKey: "d1", at: 1)
        #expect(changed6)
        #expect(held.holder == .device(deviceKey: "d2") && held.devices == ["d2"])
        let changed7 = held.release(deviceKey: "d1", at: 1)
        #expect(!changed7)
        let changed12 = try held.claim(by: Self.claimant(0, "d3"), deviceLimit: 2, at: 0)
        #expect(changed12, "the freed place is used again")
    }
}

extension HeldPurchaseTests {
    @Test func aGoogleRefundIsNotUndoneByALaterLookup() {
        let paid = StoreFacts(store: .google, originalID: "token", storeProductID: "cat.quiosc.mensual", environment: "Production",
                              payment: StorePayment(id: "GPA.1", paidAt: 10, period: PaidPeriod(start: 10, end: 10 + 30 * Self.day), signedAt: 10))
        var held = HeldPurchase(appKey: "quiosc", facts: paid, product: Self.monthly, at: 0)
        var voided = paid
        voided.payment?.revoked = true
        voided.payment?.signedAt = 20
        held.apply(voided, at: 0)
        #expect(held.purchase.revoked)
        var lookup = paid
        lookup.payment?.signedAt = 30
        held.apply(lookup, at: 0)
        #expect(held.purchase.revoked, "Google's lookup says nothing of the refund")
        var apple = HeldPurchase(appKey: "quiosc", facts: Self.renewal(0, revoked: true, signedAt: 20), product: Self.monthly, at: 0)
        apple.apply(Self.renewal(0, revoked: false, signedAt: 30), at: 0)
        #expect(!apple.purchase.revoked, "Apple's reversal is a later signed word")
    }
}
