import KioskModels
import Testing

/// What a `changePurchase` closure throws to refuse a change.
private struct Refusal: Error {}

extension StoreConformance {
    static let monthly = StoreProduct(appKey: "quiosc", id: "cat.quiosc.mensual", kind: .subscription, editions: [1], scope: .all)
    static let pack = StoreProduct(appKey: "quiosc", id: "cat.quiosc.pack5", kind: .credits, credits: 5)
    static let single = StoreProduct(appKey: "quiosc", id: "cat.quiosc.exemplar", kind: .issue)
    static let presenciaSingle = StoreProduct(appKey: "presencia", id: "cat.presencia.exemplar", kind: .issue)

    static func notice(_ id: String, store: Storefront = .apple, appKey: String = "quiosc", originalID: String,
                       at time: Int64, outcome: String = "applied") -> StoreNoticeRecord {
        StoreNoticeRecord(store: store, id: id, appKey: appKey, type: "DID_RENEW", subtype: "", originalID: originalID,
                          receivedAt: time, outcome: outcome)
    }

    /// `storeProducts`, and purchases through `changePurchase`: created with a notice, a notice seen again
    /// changing nothing, a refused change leaving no trace (not even its notice); the three holders read
    /// back exactly; an app's identity finding its reader's and its device's (also one it was restored on);
    /// a device's moved to the reader who signs in there; the console's list and filters; notices oldest first.
    func purchases() async throws {
        let store = try await store()
        let t = Self.t0
        let day = 86_400 as Int64

        // The products each app sells, in the catalogue's order (not by id), with their store ids.
        var catalogue = try await store.catalogue()
        let products = [
            StoreProduct(appKey: "quiosc", id: "cat.quiosc.pack5", storeIDs: [.google: "pack5"], kind: .credits, credits: 5),
            StoreProduct(appKey: "quiosc", id: "cat.quiosc.mensual", kind: .subscription, editions: [1], scope: .all),
            StoreProduct(appKey: "presencia", id: "cat.presencia.exemplar", storeIDs: [.apple: "cat.presencia.ex"], kind: .issue),
        ]
        catalogue.products = products
        _ = try await store.syncCatalogue(catalogue, dryRun: false)
        #expect(try await store.storeProducts(appKey: "quiosc") == Array(products.prefix(2)))
        #expect(try await store.storeProducts(appKey: "presencia") == [products[2]])
        #expect(try await store.storeProducts(appKey: "nobody") == [])

        // A: a subscription heard of through a store's notice before any app registered it (unclaimed).
        let token = "6f1c9a4e-2b7d-4c1e-9a3f-0d5e8b7c6a21"
        let factsA = StoreFacts(store: .apple, originalID: "1000", storeProductID: "cat.quiosc.mensual", environment: "Production",
                                accountToken: token,
                                payment: StorePayment(id: "t-1", paidAt: t, period: PaidPeriod(start: t, end: t + 30 * day),
                                                      price: 4_990, currency: "EUR", signedAt: t * 1_000),
                                grace: GraceFact(until: t + 33 * day, signedAt: t * 1_000 + 1))
        let a = HeldPurchase(appKey: "quiosc", facts: factsA, product: Self.monthly, at: t)
        let n1 = Self.notice("n-1", originalID: "1000", at: t + 10)
        let sawNone = try await store.changePurchase(appKey: "quiosc", store: .apple, originalID: "1000", recording: n1) { held in
            let none = held == nil
            held = a
            return none
        }
        #expect(sawNone == true, "a new purchase is read as nil, and the closure's answer comes back")
        #expect(try await store.purchase(appKey: "quiosc", store: .apple, originalID: "1000") == a)
        #expect(try await store.purchase(appKey: "quiosc", store: .google, originalID: "1000") == nil, "the store is part of the name")
        #expect(try await store.purchase(appKey: "presencia", store: .apple, originalID: "1000") == nil, "so is the app")

        // The same notice again: nothing read, nothing changed, nil; even about another purchase.
        let renewal = StoreFacts(store: .apple, originalID: "1000", storeProductID: "cat.quiosc.mensual", environment: "Production",
                                 payment: StorePayment(id: "t-2", paidAt: t + 30 * day, period: PaidPeriod(start: t + 30 * day, end: t + 60 * day),
                                                       price: 4_990, currency: "EUR", signedAt: (t + 30 * day) * 1_000))
        let again = try await store.changePurchase(appKey: "quiosc", store: .apple, originalID: "1000",
                                                   recording: Self.notice("n-1", originalID: "1000", at: t + 20, outcome: "again")) { held in
            held?.apply(renewal, at: t + 20)
            return true
        }
        #expect(again == nil, "a notice already recorded is answered nil")
        #expect(try await store.purchase(appKey: "quiosc", store: .apple, originalID: "1000") == a, "and changes nothing")
        let elsewhere = try await store.changePurchase(appKey: "quiosc", store: .apple, originalID: "1001",
                                                       recording: Self.notice("n-1", originalID: "1001", at: t + 20)) { held in
            held = HeldPurchase(appKey: "quiosc", facts: renewal, product: Self.monthly, at: t + 20)
            return true
        }
        #expect(elsewhere == nil)
        #expect(try await store.purchase(appKey: "quiosc", store: .apple, originalID: "1001") == nil)
        #expect(try await store.notices(appKey: "quiosc", store: .apple, originalID: "1000") == [n1], "the first recording stays")
        #expect(try await store.notices(appKey: "quiosc", store: .apple, originalID: "1001") == [])

        // A change the closure refuses leaves nothing: neither a new purchase nor its notice, nor a change to one.
        let n2 = Self.notice("n-2", originalID: "2000", at: t + 30)
        await #expect(throws: Refusal.self) {
            _ = try await store.changePurchase(appKey: "quiosc", store: .apple, originalID: "2000", recording: n2) { held in
                held = HeldPurchase(appKey: "quiosc", facts: renewal, product: Self.monthly, at: t + 30)
                throw Refusal()
            }
        }
        #expect(try await store.purchase(appKey: "quiosc", store: .apple, originalID: "2000") == nil)
        #expect(try await store.notices(appKey: "quiosc", store: .apple, originalID: "2000") == [])
        let n3 = Self.notice("n-3", originalID: "1000", at: t + 5)
        await #expect(throws: Refusal.self) {
            _ = try await store.changePurchase(appKey: "quiosc", store: .apple, originalID: "1000", recording: n3) { held in
                held?.apply(renewal, at: t + 40)
                throw Refusal()
            }
        }
        #expect(try await store.purchase(appKey: "quiosc", store: .apple, originalID: "1000") == a)
        #expect(try await store.notices(appKey: "quiosc", store: .apple, originalID: "1000") == [n1])
        #expect(try await store.recordNotice(n2), "the refused change's notice was rolled back")
        #expect(try await store.recordNotice(n3))

        // A changed: a renewal, then revoked by an operator (an update, not a new row).
        var a2 = a
        let renewed = a2.apply(renewal, at: t + 100)
        #expect(renewed)
        let changed = try await store.changePurchase(appKey: "quiosc", store: .apple, originalID: "1000", recording: nil) { held in
            held?.apply(renewal, at: t + 100) ?? false
        }
        #expect(changed == true)
        #expect(try await store.purchase(appKey: "quiosc", store: .apple, originalID: "1000") == a2)
        a2.setRevokedByOperator(true, at: t + 110)
        _ = try await store.changePurchase(appKey: "quiosc", store: .apple, originalID: "1000", recording: nil) { held in
            held?.setRevokedByOperator(true, at: t + 110)
            return true
        }
        let finalA = a2
        #expect(try await store.purchase(appKey: "quiosc", store: .apple, originalID: "1000") == finalA)
        #expect(finalA.purchase.revoked && finalA.revokedByOperator && finalA.payments.count == 2)

        // B: a reader's pack (Google, no price or currency known), a credit spent.
        let factsB = StoreFacts(store: .google, originalID: "token-3000", storeProductID: "pack5", environment: "Test",
                                payment: StorePayment(id: "GPA.3000", paidAt: t + 20, signedAt: (t + 20) * 1_000))
        var b = HeldPurchase(appKey: "quiosc", facts: factsB, product: Self.pack, at: t + 20)
        let claimed1 = try b.claim(by: PurchaseClaimant(userID: 7, deviceKey: "dev-r", accountTokens: []), deviceLimit: 2, at: t + 21)
        #expect(claimed1)
        try b.purchase.spendCredit(on: IssueRef(editionID: 1, date: Self.date("2025-05-30")))
        // C: a device's issue, restored on a second device.
        let factsC = StoreFacts(store: .apple, originalID: "5000", storeProductID: "cat.quiosc.exemplar", environment: "Sandbox",
                                accountToken: token,
                                payment: StorePayment(id: "t-5", paidAt: t + 30, price: 1_490, currency: "EUR", signedAt: (t + 30) * 1_000))
        var c = HeldPurchase(appKey: "quiosc", facts: factsC, product: Self.single, at: t + 30)
        let claimed2 = try c.claim(by: PurchaseClaimant(userID: 0, deviceKey: "dev-a", accountTokens: [token]), deviceLimit: 2, at: t + 31)
        #expect(claimed2)
        let claimed3 = try c.claim(by: PurchaseClaimant(userID: 0, deviceKey: "dev-b", accountTokens: []), deviceLimit: 2, at: t + 32)
        #expect(claimed3)
        c.purchase.issues = [IssueRef(editionID: 2, date: Self.date("2025-05-29"))]
        #expect(c.holder == .device(deviceKey: "dev-a") && c.devices == ["dev-a", "dev-b"])
        // D and E: the other app's, a device's (the same device key) and the same reader's.
        var d = HeldPurchase(appKey: "presencia", facts: StoreFacts(store: .apple, originalID: "6000", storeProductID: "cat.presencia.ex",
                                                                    environment: "Production",
                                                                    payment: StorePayment(id: "t-6", paidAt: t + 39, signedAt: (t + 39) * 1_000)),
                             product: Self.presenciaSingle, at: t + 39)
        let claimed4 = try d.claim(by: PurchaseClaimant(userID: 0, deviceKey: "dev-a", accountTokens: []), deviceLimit: 2, at: t + 40)
        #expect(claimed4)
        var e = HeldPurchase(appKey: "presencia", facts: StoreFacts(store: .google, originalID: "token-7000", storeProductID: "cat.presencia.exemplar",
                                                                    environment: "Production",
                                                                    payment: StorePayment(id: "GPA.7000", paidAt: t + 39, signedAt: (t + 39) * 1_000)),
                             product: Self.presenciaSingle, at: t + 39)
        let claimed5 = try e.claim(by: PurchaseClaimant(userID: 7, deviceKey: "dev-a", accountTokens: []), deviceLimit: 2, at: t + 40)
        #expect(claimed5)
        for held in [b, c, d, e] {
            let stored = try await store.changePurchase(appKey: held.appKey, store: held.purchase.store, originalID: held.purchase.originalID,
                                                        recording: nil) { current in
                let none = current == nil
                current = held
                return none
            }
            #expect(stored == true, "\(held.purchase.originalID) is new")
        }
        for held in [finalA, b, c, d, e] {
            #expect(try await store.purchase(appKey: held.appKey, store: held.purchase.store, originalID: held.purchase.originalID) == held,
                    "\(held.holder) reads back as stored")
        }

        // What an app's identity finds: its reader's, and those its device holds or was restored on; the app's alone.
        #expect(try await store.purchases(appKey: "quiosc", userID: 7, deviceKey: "dev-x") == [b])
        #expect(try await store.purchases(appKey: "quiosc", userID: 0, deviceKey: "dev-a") == [c])
        #expect(try await store.purchases(appKey: "quiosc", userID: 0, deviceKey: "dev-b") == [c], "restored on it")
        #expect(try await store.purchases(appKey: "quiosc", userID: 7, deviceKey: "dev-b") == [b, c])
        #expect(try await store.purchases(appKey: "presencia", userID: 7, deviceKey: "dev-a") == [d, e])
        #expect(try await store.purchases(appKey: "quiosc", userID: 0, deviceKey: "dev-r") == [], "a reader's does not bind a device")
        #expect(try await store.purchases(appKey: "quiosc", userID: 0, deviceKey: "") == [], "an unclaimed one is nobody's")
        #expect(try await store.purchases(appKey: "quiosc", userID: 8, deviceKey: "dev-z") == [])

        // The console's list: newest change first (E and D changed at once: the later stored first), filtered.
        #expect(try await store.purchases(matching: PurchaseFilter()) == [finalA, e, d, c, b])
        #expect(try await store.purchases(matching: PurchaseFilter(limit: 2)) == [finalA, e])
        #expect(try await store.purchases(matching: PurchaseFilter(limit: 0)) == [])
        #expect(try await store.purchases(matching: PurchaseFilter(appKey: "presencia")) == [e, d])
        #expect(try await store.purchases(matching: PurchaseFilter(userID: 7)) == [e, b])
        #expect(try await store.purchases(matching: PurchaseFilter(appKey: "quiosc", userID: 7)) == [b])
        #expect(try await store.purchases(matching: PurchaseFilter(deviceKey: "dev-b")) == [c])
        #expect(try await store.purchases(matching: PurchaseFilter(deviceKey: "dev-a")) == [d, c])
        #expect(try await store.purchases(matching: PurchaseFilter(appKey: "presencia", deviceKey: "dev-a")) == [d])
        #expect(try await store.purchases(matching: PurchaseFilter(originalID: "5000")) == [c])
        #expect(try await store.purchases(matching: PurchaseFilter(appKey: "presencia", originalID: "1000")) == [])
        #expect(try await store.purchases(matching: PurchaseFilter(originalID: "token-3000", limit: 1)) == [b])

        // Signed in on the device: its purchases in the app move to the reader; the other app's stay.
        try await store.movePurchases(appKey: "quiosc", deviceKey: "dev-a", toUser: 0, at: t + 200)
        #expect(try await store.purchase(appKey: "quiosc", store: .apple, originalID: "5000") == c, "no reader, no move")
        try await store.movePurchases(appKey: "quiosc", deviceKey: "dev-a", toUser: 9, at: t + 200)
        var moved = c
        moved.holder = .reader(userID: 9)
        moved.devices = []
        moved.updatedAt = t + 200
        #expect(try await store.purchase(appKey: "quiosc", store: .apple, originalID: "5000") == moved)
        #expect(try await store.purchase(appKey: "presencia", store: .apple, originalID: "6000") == d)
        #expect(try await store.purchase(appKey: "quiosc", store: .google, originalID: "token-3000") == b)
        #expect(try await store.purchases(appKey: "quiosc", userID: 0, deviceKey: "dev-b") == [], "no longer a device's")
        #expect(try await store.purchases(appKey: "quiosc", userID: 9, deviceKey: "") == [moved])
        #expect(try await store.purchases(matching: PurchaseFilter(deviceKey: "dev-b")) == [])
        #expect(try await store.purchases(matching: PurchaseFilter()) == [moved, finalA, e, d, b])

        // Notices: oldest first (n-3 was received before n-1; n-b and n-a with it, recorded after, in that order).
        let nb = Self.notice("n-b", originalID: "1000", at: t + 10)
        let na = Self.notice("n-a", originalID: "1000", at: t + 10, outcome: "no change")
        let googleN1 = Self.notice("n-1", store: .google, originalID: "token-3000", at: t + 1)
        let presenciaN = Self.notice("n-p", appKey: "presencia", originalID: "1000", at: t + 1)
        #expect(try await store.recordNotice(nb))
        #expect(try await store.recordNotice(na))
        #expect(try await store.recordNotice(googleN1), "a notice is named by its store and id")
        #expect(try await store.recordNotice(presenciaN))
        #expect(try await store.recordNotice(na) == false, "a notice seen again is not recorded")
        #expect(try await store.recordNotice(Self.notice("n-1", originalID: "1000", at: t + 99, outcome: "again")) == false)
        #expect(try await store.notices(appKey: "quiosc", store: .apple, originalID: "1000") == [n3, n1, nb, na])
        #expect(try await store.notices(appKey: "quiosc", store: .google, originalID: "token-3000") == [googleN1])
        #expect(try await store.notices(appKey: "presencia", store: .apple, originalID: "1000") == [presenciaN])
        #expect(try await store.notices(appKey: "quiosc", store: .apple, originalID: "2000") == [n2])
    }

    /// A change that adds payment `GPA.n` to the pack bought as `race`, creating it when there is none.
    static func racer(_ n: Int) -> @Sendable (inout HeldPurchase?) -> Bool {
        let time = t0 + Int64(n)
        let said = StoreFacts(store: .google, originalID: "race", storeProductID: "cat.quiosc.pack5", environment: "Production",
                              payment: StorePayment(id: "GPA.\(n)", paidAt: time, price: 990, currency: "EUR", signedAt: time * 1_000))
        return { held in
            guard held != nil else {
                held = HeldPurchase(appKey: "quiosc", facts: said, product: Self.pack, at: time)
                return true
            }
            return held!.apply(said, at: time)
        }
    }

    /// Concurrent changes to one purchase, none stored yet, serialize: 20 calls each adding its payment
    /// leave one purchase with all 20 and each call's notice; 10 calls recording one notice change it once.
    func purchaseRaces() async throws {
        let store = try await store()
        let t = Self.t0
        let applied = try await withThrowingTaskGroup(of: Bool?.self) { group in
            for n in 0..<20 {
                group.addTask {
                    try await store.changePurchase(appKey: "quiosc", store: .google, originalID: "race",
                                                   recording: Self.notice("race-\(n)", store: .google, originalID: "race", at: t + Int64(n)),
                                                   Self.racer(n))
                }
            }
            return try await group.reduce(into: [Bool?]()) { $0.append($1) }
        }
        #expect(applied.count == 20 && applied.allSatisfy { $0 == true }, "\(applied)")
        let race = try #require(try await store.purchase(appKey: "quiosc", store: .google, originalID: "race"))
        #expect(race.payments.map(\.id) == (0..<20).map { "GPA.\($0)" }, "every payment, none lost")
        #expect(try await store.purchases(matching: PurchaseFilter(originalID: "race")).count == 1)
        #expect(Set(try await store.notices(appKey: "quiosc", store: .google, originalID: "race").map(\.id))
                == Set((0..<20).map { "race-\($0)" }))

        let once = try await withThrowingTaskGroup(of: Bool?.self) { group in
            for n in 20..<30 {
                group.addTask {
                    try await store.changePurchase(appKey: "quiosc", store: .google, originalID: "race",
                                                   recording: Self.notice("race-once", store: .google, originalID: "race", at: t + 20),
                                                   Self.racer(n))
                }
            }
            return try await group.reduce(into: [Bool?]()) { $0.append($1) }
        }
        #expect(once.filter { $0 != nil } == [true], "one call recorded the notice and changed the purchase: \(once)")
        let after = try #require(try await store.purchase(appKey: "quiosc", store: .google, originalID: "race"))
        #expect(after.payments.count == 21, "\(after.payments.map(\.id))")
        #expect(try await store.notices(appKey: "quiosc", store: .google, originalID: "race").count == 21)
    }
}
