import KioskModels
import KioskSQLite
import Testing

/// Statistics data whose every number is known, written through the store's own methods (so the
/// per-day counts come from however the store keeps them), on the sample catalogue.
///
/// Downloads, by UTC day of download (edition 1 and 2 on `quiosc`, 8 on `presencia`):
///
/// | day        | ed. 1 (iOS) | ed. 2 (Android, issue 06-01) | ed. 8 (no OS) |
/// |------------|-------------|------------------------------|---------------|
/// | 2025-06-01 | 1           | 2                            | 1             |
/// | 2025-06-02 | 2           | 2                            | 1             |
/// | 2025-06-03 | 3           | 2                            | 1             |
/// | 2025-06-04 | 4           | 2                            | 1             |
/// | 2025-06-05 | 5 + 1 at 23:59:59 | 2                      | 1             |
/// | 2025-06-06 | 1 at 00:00:00 (issue 06-05) | —            | —             |
///
/// Edition 1 and 8 downloads are of the day's issue. Total 32; quiosc 27, presencia 5.
///
/// Demos: on quiosc, device A takes 2 (06-02, one spent on edition 1) and signs in on 06-03 as `una`
/// (subscribed to edition 1): converted. B takes 1 (unused), signs in as `dos` (no subscription).
/// C signed in as `tres` (subscribed to 2) on 06-01, *before* its demo of 06-02 (spent on edition 2):
/// not converted. E takes 1 on 2025-05-20 and signs in as `una` on 05-21: converted. On presencia,
/// D takes 1 and never signs in.
///
/// Store purchases (`storePurchases`, created with `changePurchase`; "now" is `purchasesNow`, 2025-06-20):
///
/// | name | app       | kind                 | holder        | first heard of      | payments (thousandths)                         |
/// |------|-----------|----------------------|---------------|---------------------|------------------------------------------------|
/// | P1   | quiosc    | subscription         | una           | 06-03 12:00         | 06-03 EUR 4990, period to 07-03                |
/// | P2   | quiosc    | issue                | device B      | 06-02 12:00         | 06-02 EUR 990                                  |
/// | P3   | quiosc    | subscription (all)   | tres          | 06-01 08:00         | 06-01 EUR 4990; 06-08 EUR 4990 refunded        |
/// | P4   | presencia | credits 5            | device X (+D) | 06-04 09:00         | 06-04 USD 2495                                 |
/// | P5   | quiosc    | subscription         | una           | 06-05 23:59:59      | same time, EUR 3000; revoked by an operator    |
/// | P6   | quiosc    | subscription         | nobody        | 06-06 00:00:00      | 06-06, no price, period to 07-06               |
/// | P7   | presencia | subscription         | dos           | 05-15 10:00         | 05-15 EUR 1000, period to 07-15                |
/// | P8   | quiosc    | issue                | nobody        | 06-02 15:00         | 06-02 EUR 990 refunded                         |
/// | P9   | presencia | credits 10           | tres          | 06-10 10:00         | 06-10 EUR 4000                                 |
///
/// Active at 06-20: P1, P6, P7 (P3's last payment is refunded, P5 revoked). Demo to purchase: A (una's
/// P1, after A's demo), B (P2, its own) and E (una's P1) on quiosc; not C: tres's P3 came before C's demo
/// and P9 is another app's. D on presencia: P4 opens on it.
public enum KnownStatistics {
    /// Unix time of midnight UTC of `text` (`YYYY-MM-DD`).
    public static func day(_ text: String) -> Int64 { Int64(IssueDate(text)!.daysSinceEpoch) * 86_400 }

    public static func at(_ text: String, hour: Int64, minute: Int64 = 0, second: Int64 = 0) -> Int64 {
        day(text) + hour * 3600 + minute * 60 + second
    }

    public static func fill(_ store: any KioskDatabase) async throws {
        func download(_ edition: Int, issue: String, app: String, os: String, time: Int64, device: String) async throws {
            try await store.recordDownload(DownloadRecord(
                editionID: edition, date: IssueDate(issue)!, appKey: app, identityKey: "key-\(device)", userID: 0,
                claimedUserID: "", deviceKey: device, os: os, time: time))
        }
        let days = ["2025-06-01", "2025-06-02", "2025-06-03", "2025-06-04", "2025-06-05"]
        for (i, day) in days.enumerated() {
            for k in 0...i { try await download(1, issue: day, app: "quiosc", os: "iOS", time: at(day, hour: 12, second: Int64(k)), device: "d1") }
            for k in 0..<2 { try await download(2, issue: "2025-06-01", app: "quiosc", os: "Android", time: at(day, hour: 13, second: Int64(k)), device: "d2") }
            try await download(8, issue: day, app: "presencia", os: "", time: at(day, hour: 14), device: "d8")
        }
        try await download(1, issue: "2025-06-05", app: "quiosc", os: "iOS", time: at("2025-06-05", hour: 23, minute: 59, second: 59), device: "d1")
        try await download(1, issue: "2025-06-05", app: "quiosc", os: "iOS", time: day("2025-06-06"), device: "d1")

        let una = try await store.addUser(username: "una", name: "", email: "", passwordHash: "x", at: 0)
        let dos = try await store.addUser(username: "dos", name: "", email: "", passwordHash: "x", at: 0)
        let tres = try await store.addUser(username: "tres", name: "", email: "", passwordHash: "x", at: 0)
        try await store.subscribe(username: "una", editionID: 1, until: IssueDate("2025-12-31")!)
        try await store.subscribe(username: "tres", editionID: 2, until: IssueDate("2025-12-31")!)
        func signIn(_ app: String, _ device: String, _ user: Int, at time: Int64) async throws {
            try await store.saveIdentity(DeviceIdentity(key: "\(app)-\(device)-\(user)", appKey: app, deviceKey: device, userID: user,
                                                        deviceInfo: [:], os: "iOS"), at: time, retiringImported: false)
        }
        func demo(_ app: String, _ device: String, at time: Int64, spendOn edition: Int? = nil) async throws {
            #expect(try await store.consumeDemo(appKey: app, deviceKey: device, quota: 3, at: time).granted)
            if let edition {
                #expect(try await store.useDemoGrant(appKey: app, deviceKey: device, editionID: edition,
                                                     date: IssueDate("2025-06-01")!, at: time + 60))
            }
        }
        try await signIn("quiosc", "A", 0, at: at("2025-06-02", hour: 8))
        try await demo("quiosc", "A", at: at("2025-06-02", hour: 10), spendOn: 1)
        try await demo("quiosc", "A", at: at("2025-06-02", hour: 10, minute: 30))
        try await signIn("quiosc", "A", una, at: at("2025-06-03", hour: 9))
        try await demo("quiosc", "B", at: at("2025-06-02", hour: 11))
        try await signIn("quiosc", "B", dos, at: at("2025-06-04", hour: 9))
        try await signIn("quiosc", "C", tres, at: at("2025-06-01", hour: 9))
        try await demo("quiosc", "C", at: at("2025-06-02", hour: 12), spendOn: 2)
        try await demo("quiosc", "E", at: at("2025-05-20", hour: 10))
        try await signIn("quiosc", "E", una, at: at("2025-05-21", hour: 10))
        try await demo("presencia", "D", at: at("2025-06-03", hour: 10))
        try await storePurchases(store, una: una, dos: dos, tres: tres)
    }

    /// "Now" for the purchases `fill` writes.
    public static let purchasesNow = day("2025-06-20")

    /// The purchases of the table above, each written through `changePurchase` as a new purchase.
    static func storePurchases(_ store: any KioskDatabase, una: Int, dos: Int, tres: Int) async throws {
        func product(_ app: String, _ id: String, _ kind: ProductKind, credits: Int = 0, scope: SubscriptionScope = .period) -> StoreProduct {
            StoreProduct(appKey: app, id: id, kind: kind, credits: credits, scope: scope)
        }
        func payment(_ id: String, _ paidAt: Int64, days: Int64? = nil, price: Int64?, _ currency: String? = "EUR",
                     revoked: Bool = false) -> StorePayment {
            StorePayment(id: id, paidAt: paidAt, period: days.map { PaidPeriod(start: paidAt, end: paidAt + $0 * 86_400) },
                         revoked: revoked, price: price, currency: price == nil ? nil : currency, signedAt: paidAt * 1000)
        }
        func purchase(_ name: String, _ product: StoreProduct, _ holder: PurchaseHolder, devices: [String] = [], at time: Int64,
                      _ payments: [StorePayment], issues: [IssueRef] = [], revokedByOperator: Bool = false) async throws {
            let held = HeldPurchase(appKey: product.appKey,
                                    purchase: StorePurchase(store: .apple, originalID: name, product: product, issues: issues),
                                    holder: holder, devices: devices, environment: "Production", payments: payments,
                                    revokedByOperator: revokedByOperator, createdAt: time, updatedAt: time)
            let stored = try await store.changePurchase(appKey: product.appKey, store: .apple, originalID: name,
                                                        recording: nil) { current -> Bool in
                guard current == nil else { return false }
                current = held
                return true
            }
            #expect(stored == true, "purchase \(name) written")
        }
        let issue = IssueRef(editionID: 1, date: IssueDate("2025-06-01")!)
        let p1 = at("2025-06-03", hour: 12), p2 = at("2025-06-02", hour: 12), p3 = at("2025-06-01", hour: 8)
        let p4 = at("2025-06-04", hour: 9), p5 = at("2025-06-05", hour: 23, minute: 59, second: 59), p6 = day("2025-06-06")
        let p7 = at("2025-05-15", hour: 10), p8 = at("2025-06-02", hour: 15), p9 = at("2025-06-10", hour: 10)
        try await purchase("P1", product("quiosc", "cat.quiosc.mes", .subscription), .reader(userID: una), at: p1,
                           [payment("P1-1", p1, days: 30, price: 4990)])
        try await purchase("P2", product("quiosc", "cat.quiosc.exemplar", .issue), .device(deviceKey: "B"), devices: ["B"], at: p2,
                           [payment("P2-1", p2, price: 990)], issues: [issue])
        try await purchase("P3", product("quiosc", "cat.quiosc.tot", .subscription, scope: .all), .reader(userID: tres), at: p3,
                           [payment("P3-1", p3, days: 7, price: 4990),
                            payment("P3-2", day("2025-06-08"), days: 7, price: 4990, revoked: true)])
        try await purchase("P4", product("presencia", "cat.presencia.pack5", .credits, credits: 5), .device(deviceKey: "X"),
                           devices: ["X", "D"], at: p4, [payment("P4-1", p4, price: 2495, "USD")])
        try await purchase("P5", product("quiosc", "cat.quiosc.mes", .subscription), .reader(userID: una), at: p5,
                           [payment("P5-1", p5, days: 30, price: 3000)], revokedByOperator: true)
        try await purchase("P6", product("quiosc", "cat.quiosc.mes", .subscription), .unclaimed, at: p6,
                           [payment("P6-1", p6, days: 30, price: nil)])
        try await purchase("P7", product("presencia", "cat.presencia.any", .subscription), .reader(userID: dos), at: p7,
                           [payment("P7-1", p7, days: 61, price: 1000)])
        try await purchase("P8", product("quiosc", "cat.quiosc.exemplar", .issue), .unclaimed, at: p8,
                           [payment("P8-1", p8, price: 990, revoked: true)], issues: [issue])
        try await purchase("P9", product("presencia", "cat.presencia.pack10", .credits, credits: 10), .reader(userID: tres), at: p9,
                           [payment("P9-1", p9, price: 4000)])
    }
}
