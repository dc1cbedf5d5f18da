import Foundation
import Hummingbird
import HummingbirdTesting
import KioskModels
import KioskRPC
import KioskTestSupport
import Logging
import Testing
@testable import KioskHTTP

/// The web kiosk's account page lists the signed-in reader's store purchases in the app (over real HTTP on
/// the loopback, on a real SQLite file): each product, its kind, its state now and what it gives.
@Suite struct ReaderWebKioskPurchasesTests {
    @Test func theAccountPageListsTheReadersPurchasesInTheApp() async throws {
        let (kiosk, anna) = try await ReaderWebKioskTests.kiosk()
        let other = try await kiosk.addUser("bernat", password: "pw")
        let now = kiosk.clock.now, day: Int64 = 86_400
        func add(_ app: String, _ id: String, _ product: StoreProduct, holder: PurchaseHolder, devices: [String] = [],
                 payments: [StorePayment] = [], issues: [IssueRef] = []) async throws {
            let held = HeldPurchase(appKey: app, purchase: StorePurchase(store: .apple, originalID: id, product: product, issues: issues),
                                    holder: holder, devices: devices, environment: "Production", payments: payments,
                                    createdAt: now, updatedAt: now)
            try await ConsolePurchasesTests.add(held, to: kiosk.store)
        }
        func paid(_ id: String, _ start: Int64, _ end: Int64?, revoked: Bool = false) -> StorePayment {
            StorePayment(id: id, paidAt: start, period: end.map { PaidPeriod(start: start, end: $0) }, revoked: revoked, signedAt: 1)
        }
        // Anna's: a subscription running to 06-30 (noon), one that ended on 05-20, a pack with 3 of 5 left,
        // a refunded issue; on a device only, another app, and another reader: not listed.
        try await add("quiosc", "1001", StoreProduct(appKey: "quiosc", id: "cat.quiosc.mensual", kind: .subscription),
                      holder: .reader(userID: anna), payments: [paid("1001", now - day, now + 29 * day)])
        try await add("quiosc", "1002", StoreProduct(appKey: "quiosc", id: "cat.quiosc.antiga", kind: .subscription),
                      holder: .reader(userID: anna), payments: [paid("1002", now - 40 * day, now - 12 * day)])
        try await add("quiosc", "1003", StoreProduct(appKey: "quiosc", id: "cat.quiosc.pack5", kind: .credits, credits: 5),
                      holder: .reader(userID: anna), payments: [paid("1003", now, nil)],
                      issues: [IssueRef(editionID: 1, date: IssueDate("2025-05-20")!), IssueRef(editionID: 1, date: IssueDate("2025-06-10")!)])
        try await add("quiosc", "1004", StoreProduct(appKey: "quiosc", id: "cat.quiosc.exemplar", kind: .issue),
                      holder: .reader(userID: anna), payments: [paid("1004", now, nil, revoked: true)],
                      issues: [IssueRef(editionID: 1, date: IssueDate("2025-06-20")!)])
        try await add("quiosc", "1005", StoreProduct(appKey: "quiosc", id: "cat.quiosc.dispositiu", kind: .issue),
                      holder: .device(deviceKey: "dev-1"), devices: ["dev-1"], payments: [paid("1005", now, nil)])
        try await add("presencia", "1006", StoreProduct(appKey: "presencia", id: "cat.presencia.mensual", kind: .subscription),
                      holder: .reader(userID: anna), payments: [paid("1006", now, now + 30 * day)])
        try await add("quiosc", "1007", StoreProduct(appKey: "quiosc", id: "cat.quiosc.altre", kind: .subscription),
                      holder: .reader(userID: other), payments: [paid("1007", now, now + 30 * day)])

        let tokens = kiosk.runtime.runtime.environment.webKioskTokens
        try await ReaderWebKioskTests.app(kiosk).test(.live) { client in
            func account(_ user: Int, language: String = "ca") async throws -> String {
                let signIn = try await client.execute(uri: "/web/quiosc/compte?hash=\(tokens.token(userID: user, expires: now + 300))", method: .get)
                let cookie = try ReaderWebKioskTests.cookie(signIn)
                return ReaderWebKioskTests.text(try await client.execute(uri: "/web/quiosc/compte", method: .get,
                                                                         headers: [.cookie: cookie, .acceptLanguage: language]))
            }
            let page = try await account(anna)
            let rows = page.matches(of: /<tr class="purchase"><td>([^<]*)<\/td><td>([^<]*)<\/td><td class="[a-z_]+">([^<]*)<\/td><td>([^<]*)<\/td><\/tr>/)
                .map { "\($0.1) | \($0.2) | \($0.3) | \($0.4)" }
            #expect(rows == [
                "cat.quiosc.mensual | Subscripció | Activa | fins al 2025-06-30",
                "cat.quiosc.antiga | Subscripció | Caducada | fins al 2025-05-20",
                "cat.quiosc.pack5 | Paquet de números | Activa | 3 números per triar, de 5",
                "cat.quiosc.exemplar | Número solt | Revocada | El Punt Avui · Nacional · 2025-06-20",
            ])
            let english = try await account(anna, language: "en")
            #expect(english.contains(#"<td class="purchase_active">Active</td><td>until 2025-06-30</td>"#))
            let none = try await account(other)
            #expect(none.contains(#"<tr class="purchase"><td>cat.quiosc.altre</td>"#) && !none.contains("cat.quiosc.mensual"))

            // A reader with none is told so; an anonymous visitor sees no list at all.
            let third = try await kiosk.addUser("clara", password: "pw")
            let empty = try await account(third)
            #expect(empty.contains("No teniu cap compra feta amb aquest compte a les botigues.") && !empty.contains(#"class="purchase""#))
            let anonymous = ReaderWebKioskTests.text(try await client.execute(uri: "/web/quiosc/compte", method: .get))
            #expect(!anonymous.contains("Compres a les botigues"))
        }
    }
}
