import Foundation
import Hummingbird
import HummingbirdTesting
import KioskModels
import KioskSQLite
import KioskTestSupport
import Logging
import Testing
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskPasswords
@testable import KioskWiring

/// The console's store products (on the apps page) and store purchases (`/admin/purchases`), over real
/// HTTP on the loopback, on a real SQLite file and a real PostgreSQL database: edited, validated like the
/// configuration file, audited, refused without the session's token and to editors; purchases (operators only, as readers) found by
/// reader, device and store id, shown with their notices, released, revoked and restored.
@Suite struct ConsolePurchasesTests {
    /// A console on either engine: its database, the running kiosk's runtime, the test's clock.
    struct EngineKiosk {
        let store: any KioskDatabase
        let runtime: RuntimeBox
        let clock: TestClock
        let close: @Sendable () async -> Void

        static func sqlite(source: KioskConfiguration.CatalogueSource = .console) async throws -> EngineKiosk {
            let kiosk = try await ConsoleTests.kiosk(source: source)
            return EngineKiosk(store: kiosk.store, runtime: kiosk.runtime, clock: kiosk.clock, close: {})
        }

        /// The same kiosk as `ConsoleTests.kiosk()` (the repository's configuration, operator marta, editor edi,
        /// `catalogue_source: console`), on the PostgreSQL database at `url`.
        static func postgres(_ url: String) async throws -> EngineKiosk {
            let directory = temporaryDirectory()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let hash = try await PasswordHashing().hash(ConsoleTests.password, cost: 4)
            var configuration = try KioskConfiguration.load(from: TestKiosk.repositoryRoot + "/Config/kiosk.yaml")
            configuration.apiClients = configuration.apiClients.map(DevelopmentAccounts.cheap)
            configuration.publishers = configuration.publishers.map(DevelopmentAccounts.cheap)
            configuration.server.database = url
            configuration.server.editions = directory.path + "/Editions"
            configuration.server.samples = nil
            configuration.catalogueSource = .console
            configuration.operators = [.init(username: "marta", passwordHash: hash, role: .operator),
                                       .init(username: "edi", passwordHash: hash, role: .editor)]
            let store = try await DatabaseWiring.open(configuration)
            try await store.syncCatalogue(configuration.catalogue, dryRun: false)
            let editions = try EditionsServices(configuration: configuration, store: store, logger: Logger(label: "test"))
            let secrets = try Secrets.load(configuration: configuration, database: try DatabaseLocation(url),
                                           environment: ["KIOSK_SECRET": TestKiosk.secret], logger: nil)
            let clock = TestClock(1_748_779_200)
            var factory = RuntimeFactory(store: store, editions: editions, secrets: secrets, logger: Logger(label: "test"))
            factory.clock = clock
            return EngineKiosk(store: store, runtime: RuntimeBox(try factory.makeRuntime(configuration)), clock: clock,
                               close: { await store.close() })
        }

        var app: some ApplicationProtocol {
            Application(router: buildRouter(runtime: runtime), logger: Logger(label: "test"))
        }

        /// Signs `username` in through the sign-in form; returns the `Cookie` header of the session. In the
        /// process (the sessions are the runtime's, whatever the transport): a password check may queue behind
        /// other suites' bcrypt work for longer than the loopback client waits for an answer.
        func signIn(_ username: String) async throws -> String {
            try await app.test(.router) { client in
                let (answer, cookie) = try await ConsoleTests.signIn(client, username)
                #expect(answer.status == .seeOther)
                return cookie
            }
        }
    }

    static func text(_ response: TestResponse) -> String { ConsoleTests.text(response) }
    /// `text` as Mustache writes it into a page.
    static func html(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
    static func escape(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text }
    static func get(_ client: some TestClientProtocol, _ cookie: String, _ uri: String) async throws -> TestResponse {
        try await client.execute(uri: uri, method: .get, headers: [.cookie: cookie])
    }
    static func notice(_ html: String) -> String {
        html.firstMatch(of: /class="notice" role="alert">([^<]*)</).map { String($0.1) } ?? "no notice"
    }

    // MARK: Products

    /// The products form of an app: `rows` of (id, apple id, google id, kind, editions, credits, scope), then `extra`.
    static func productsForm(_ token: String, _ rows: [(String, String, String, String, String, String, String)], extra: String = "") -> String {
        var fields = ["csrf=\(token)", "action=products"]
        for (index, row) in (rows + [("", "", "", "subscription", "", "", "period")]).enumerated() {
            fields += ["product_id_\(index)=\(escape(row.0))", "product_apple_id_\(index)=\(escape(row.1))",
                       "product_google_id_\(index)=\(escape(row.2))", "product_kind_\(index)=\(row.3)",
                       "product_editions_\(index)=\(escape(row.4))", "product_credits_\(index)=\(escape(row.5))",
                       "product_scope_\(index)=\(row.6)"]
        }
        return fields.joined(separator: "&") + extra
    }

    static let threeProducts = [
        ("cat.quiosc.mensual", "", "", "subscription", "2, 1", "", "all"),
        ("cat.quiosc.exemplar", "cat.quiosc.ex", "exemplar", "issue", "", "", "period"),
        ("cat.quiosc.pack5", "", "cat.quiosc.pack5", "credits", "", "5", "period"),
    ]

    @Test func productsAreListedEditedValidatedAndAudited() async throws {
        let kiosk = try await EngineKiosk.sqlite()
        // presencia's products, set beforehand, must come through every change to quiosc's.
        var catalogue = try await kiosk.store.catalogue()
        let presencia = StoreProduct(appKey: "presencia", id: "cat.presencia.pack", kind: .credits, credits: 10)
        catalogue.products = [presencia]
        _ = try await kiosk.store.syncCatalogue(catalogue, dryRun: false)
        try await kiosk.app.test(.live) { client in
            let cookie = try await kiosk.signIn("marta")
            let page = Self.text(try await Self.get(client, cookie, "/admin/apps"))
            let token = try ConsoleTests.csrf(page)
            #expect(page.contains(#"id="products-quiosc""#) && page.contains("Aquesta aplicació no ven res a les botigues."))
            #expect(page.contains(#"name="product_id_0" value="cat.presencia.pack""#) && page.contains(#"name="product_credits_0" value="10""#))
            func post(_ body: String, app: String = "quiosc", cookie: String = cookie) async throws -> TestResponse {
                try await ConsoleTests.post(client, cookie, to: "/admin/apps/\(app)", body)
            }

            // Without the session's token, or by an editor: refused, nothing changed.
            #expect(try await post(Self.productsForm("AAAA", Self.threeProducts)).status == .forbidden)
            let editorCookie = try await kiosk.signIn("edi")
            let editorToken = try ConsoleTests.csrf(Self.text(try await Self.get(client, editorCookie, "/admin")))
            #expect(try await post(Self.productsForm(editorToken, Self.threeProducts), cookie: editorCookie).status == .forbidden)
            #expect(try await kiosk.store.storeProducts(appKey: "quiosc").isEmpty)

            // Refused by the file's rules (or unreadable), in the operator's words: 422, nothing changed, nothing audited.
            let refusals: [([(String, String, String, String, String, String, String)], String)] = [
                ([("cat quiosc", "", "", "issue", "", "", "period")],
                 "Product cat quiosc of app quiosc, id: must be 1-150 characters of A-Z, a-z, 0-9, '.' and '_'"),
                ([("cat.quiosc.ex", "cat/ex", "", "issue", "", "", "period")], "Product cat.quiosc.ex of app quiosc, apple id: must be 1-150"),
                ([("cat.quiosc.mes", "", "", "subscription", "1, 7", "", "period")],
                 "Product cat.quiosc.mes of app quiosc, editions: edition 7 is not one of app quiosc's lines"),
                ([("cat.quiosc.pack", "", "", "credits", "", "", "period")], "Product cat.quiosc.pack of app quiosc, credits: a pack must hold 1 to 1000 issues"),
                ([("cat.quiosc.pack", "", "", "credits", "", "1001", "period")], "credits: a pack must hold 1 to 1000 issues"),
                ([("cat.quiosc.ex", "", "", "issue", "", "3", "period")], "Product cat.quiosc.ex of app quiosc, credits: only a credits product holds credits"),
                ([("cat.quiosc.ex", "", "", "issue", "", "", "all")], "Product cat.quiosc.ex of app quiosc, scope: only a subscription has a scope"),
                ([("cat.quiosc.ex", "", "", "issue", "1", "", "period")], "Product cat.quiosc.ex of app quiosc, editions: only a subscription lists editions"),
                ([("cat.quiosc.a", "", "", "issue", "", "", "period"), ("cat.quiosc.b", "cat.quiosc.a", "", "issue", "", "", "period")],
                 "Product cat.quiosc.b of app quiosc, apple id: \"cat.quiosc.a\" is sold twice by app quiosc in the apple store"),
                ([("cat.quiosc.ex", "", "", "bundle", "", "", "period")], "Product cat.quiosc.ex of app quiosc, kind: must be issue, credits or subscription"),
                ([("cat.quiosc.ex", "", "", "subscription", "", "", "forever")], "Product cat.quiosc.ex of app quiosc, scope: must be period or all"),
                ([("cat.quiosc.mes", "", "", "subscription", "1, dos", "", "period")],
                 "Product cat.quiosc.mes of app quiosc, editions: must be edition ids separated by commas"),
                ([("cat.quiosc.pack", "", "", "credits", "", "cinc", "period")], "Product cat.quiosc.pack of app quiosc, credits: must be a whole number"),
            ]
            for (rows, message) in refusals {
                let refused = try await post(Self.productsForm(token, rows))
                let html = Self.text(refused)
                #expect(refused.status == .unprocessableContent && html.contains(Self.html(message)), "\(message): \(Self.notice(html))")
                #expect(!html.contains("apps["), "the operator's words, not the file's key paths")
            }
            #expect(try await kiosk.store.storeProducts(appKey: "quiosc").isEmpty)
            #expect(try await kiosk.store.catalogue().products == [presencia])
            #expect(try await kiosk.store.auditEntries(limit: 100).isEmpty)

            // Three products added, in the form's order; a store id equal to the id is no store id of its own.
            let added = try await post(Self.productsForm(token, Self.threeProducts))
            #expect(added.status == .seeOther && added.headers[.location] == "/admin/apps#products-quiosc", "\(Self.notice(Self.text(added)))")
            let products = [
                StoreProduct(appKey: "quiosc", id: "cat.quiosc.mensual", kind: .subscription, editions: [2, 1], scope: .all),
                StoreProduct(appKey: "quiosc", id: "cat.quiosc.exemplar", storeIDs: [.apple: "cat.quiosc.ex", .google: "exemplar"], kind: .issue),
                StoreProduct(appKey: "quiosc", id: "cat.quiosc.pack5", kind: .credits, credits: 5),
            ]
            #expect(try await kiosk.store.storeProducts(appKey: "quiosc") == products, "what getProductes answers")
            #expect(try await kiosk.store.catalogue().products(of: "presencia") == [presencia], "another app's products are kept")
            let entry = try #require(try await kiosk.store.auditEntries(limit: 10).first)
            #expect(entry.actor == "marta" && entry.action == "app.products" && entry.subject == "quiosc")
            #expect(entry.before == "none" && entry.after == products.map(\.summary).joined(separator: ", "))
            #expect(entry.after == "cat.quiosc.mensual (subscription all editions 2 1), cat.quiosc.exemplar (issue apple cat.quiosc.ex google exemplar), "
                    + "cat.quiosc.pack5 (credits 5)")

            // Shown back as stored.
            let shown = Self.text(try await Self.get(client, cookie, "/admin/apps"))
            #expect(shown.contains(#"name="product_id_0" value="cat.quiosc.mensual""#) && shown.contains(#"name="product_editions_0" value="2, 1""#))
            #expect(shown.contains(#"name="product_apple_id_1" value="cat.quiosc.ex""#) && shown.contains(#"name="product_google_id_1" value="exemplar""#))
            #expect(shown.contains(#"name="product_credits_2" value="5""#) && shown.contains(#"name="product_id_3" value="""#), "then an empty row")
            #expect(shown.contains(#"<select name="product_scope_0" aria-label="cat.quiosc.mensual: Abast"><option value="period">Període pagat</option><option value="all" selected>"#))

            // The same form again changes nothing and writes no entry; one removed and one changed is one entry.
            #expect(try await post(Self.productsForm(token, Self.threeProducts)).status == .seeOther)
            #expect(try await kiosk.store.auditEntries(limit: 100).count == 1)
            var changedRows = Self.threeProducts
            changedRows[2].5 = "10"
            let changed = try await post(Self.productsForm(token, changedRows, extra: "&product_remove_1=1"))
            #expect(changed.status == .seeOther)
            #expect(try await kiosk.store.storeProducts(appKey: "quiosc")
                    == [products[0], StoreProduct(appKey: "quiosc", id: "cat.quiosc.pack5", kind: .credits, credits: 10)])
            let second = try await kiosk.store.auditEntries(limit: 10)
            #expect(second.count == 2 && second[0].before == entry.after
                    && second[0].after == "cat.quiosc.mensual (subscription all editions 2 1), cat.quiosc.pack5 (credits 10)")

            // Every row removed: none left.
            #expect(try await post(Self.productsForm(token, [], extra: "")).status == .seeOther)
            #expect(try await kiosk.store.storeProducts(appKey: "quiosc").isEmpty)
            #expect(try await kiosk.store.auditEntries(limit: 1).first?.after == "none")
        }
    }

    @Test func withCatalogueSourceFileProductsAreShownNotEdited() async throws {
        let kiosk = try await EngineKiosk.sqlite(source: .file)
        var catalogue = try await kiosk.store.catalogue()
        catalogue.products = [StoreProduct(appKey: "quiosc", id: "cat.quiosc.mensual", kind: .subscription)]
        _ = try await kiosk.store.syncCatalogue(catalogue, dryRun: false)
        let products = catalogue.products
        try await kiosk.app.test(.live) { client in
            let cookie = try await kiosk.signIn("marta")
            let page = Self.text(try await Self.get(client, cookie, "/admin/apps"))
            #expect(page.contains(#"name="product_id_0" value="cat.quiosc.mensual" size="22" aria-label="Identificador del producte: cat.quiosc.mensual" disabled"#))
            #expect(!page.contains(#"name="product_id_1""#), "no row to add one")
            let refused = try await ConsoleTests.post(client, cookie, to: "/admin/apps/quiosc",
                                                      Self.productsForm(try ConsoleTests.csrf(page), Self.threeProducts))
            #expect(refused.status == .conflict)
            #expect(try await kiosk.store.storeProducts(appKey: "quiosc") == products)
        }
    }

    // MARK: Purchases

    @Test func purchasesAreFoundShownReleasedRevokedAndRestoredOnSQLite() async throws {
        try await Self.purchases(try await EngineKiosk.sqlite())
    }

    @Test(.enabled(if: TestPostgresServer.configured, TestPostgresServer.skipReason))
    func purchasesAreFoundShownReleasedRevokedAndRestoredOnPostgreSQL() async throws {
        try await TestPostgresServer.withDatabase { url in
            let kiosk = try await EngineKiosk.postgres(url)
            do { try await Self.purchases(kiosk) } catch { await kiosk.close(); throw error }
            await kiosk.close()
        }
    }

    static let day: Int64 = 86_400

    /// Writes a new purchase through `changePurchase`, with a notice about it when `notice` names one.
    static func add(_ held: HeldPurchase, to store: any KioskDatabase, notice: (id: String, type: String, at: Int64)? = nil) async throws {
        let record = notice.map {
            StoreNoticeRecord(store: held.purchase.store, id: $0.id, appKey: held.appKey, type: $0.type, subtype: "",
                              originalID: held.purchase.originalID, receivedAt: $0.at, outcome: "applied")
        }
        let written = try await store.changePurchase(appKey: held.appKey, store: held.purchase.store, originalID: held.purchase.originalID,
                                                     recording: record) { current -> Bool in
            current = held
            return true
        }
        #expect(written == true)
    }

    /// Three purchases: una's active subscription, a pack opening on two anonymous devices (with two notices),
    /// and a refunded issue nobody claimed; then the page, the search, the detail and the actions.
    static func purchases(_ kiosk: EngineKiosk) async throws {
        let store = kiosk.store, now = kiosk.clock.now
        let una = try await store.addUser(username: "una", name: "Una", email: "", passwordHash: "x", at: now)
        _ = try await store.addUser(username: "dos", name: "Dos", email: "", passwordHash: "x", at: now)
        let monthly = StoreProduct(appKey: "quiosc", id: "cat.quiosc.mensual", kind: .subscription)
        let pack = StoreProduct(appKey: "quiosc", id: "cat.quiosc.pack5", kind: .credits, credits: 5)
        let single = StoreProduct(appKey: "presencia", id: "cat.presencia.exemplar", kind: .issue)
        let subscription = HeldPurchase(
            appKey: "quiosc", purchase: StorePurchase(store: .apple, originalID: "2000000123", product: monthly),
            holder: .reader(userID: una), environment: "Production",
            payments: [StorePayment(id: "2000000123", paidAt: now - day, period: PaidPeriod(start: now - day, end: now + 29 * day),
                                    price: 4990, currency: "EUR", signedAt: 1)],
            createdAt: now - day, updatedAt: now - day)
        let token = "gp.tok-en_Ab.123"
        let packHeld = HeldPurchase(
            appKey: "quiosc",
            purchase: StorePurchase(store: .google, originalID: token, product: pack,
                                    issues: [IssueRef(editionID: 1, date: IssueDate("2025-05-30")!), IssueRef(editionID: 2, date: IssueDate("2025-05-31")!)]),
            holder: .device(deviceKey: "dev-1"), devices: ["dev-1", "dev-2"], environment: "Production",
            payments: [StorePayment(id: "GPA.1234", paidAt: now - 3600, price: 12_495, currency: "EUR", signedAt: 2)],
            createdAt: now - 3600, updatedAt: now - 3600)
        let refunded = HeldPurchase(
            appKey: "presencia", purchase: StorePurchase(store: .apple, originalID: "2000000999", product: single,
                                                         issues: [IssueRef(editionID: 8, date: IssueDate("2025-05-31")!)]),
            environment: "Sandbox", payments: [StorePayment(id: "2000000999", paidAt: now - 60, revoked: true, price: 990, currency: "EUR", signedAt: 3)],
            createdAt: now - 60, updatedAt: now - 60)
        try await add(subscription, to: store)
        try await add(packHeld, to: store, notice: ("msg-1", "ONE_TIME_PRODUCT_PURCHASED", now - 3500))
        _ = try await store.recordNotice(StoreNoticeRecord(store: .google, id: "msg-2", appKey: "quiosc", type: "ONE_TIME_PRODUCT_CANCELED",
                                                           subtype: "", originalID: token, receivedAt: now - 100, outcome: "no change"))
        try await add(refunded, to: store)
        let detail = ConsolePage.purchaseURL(appKey: "quiosc", store: .google, originalID: token)
        #expect(detail == "/admin/purchase?app=quiosc&store=google&id=gp%2Etok%2Den%5FAb%2E123")

        try await kiosk.app.test(.live) { client in
            let cookie = try await kiosk.signIn("marta")
            func rows(_ query: String, cookie: String = cookie) async throws -> [String] {
                let page = try await get(client, cookie, "/admin/purchases" + query)
                #expect(page.status == .ok)
                return text(page).matches(of: /<tr class="purchase" data-id="([^"]*)"/).map { String($0.1) }
            }

            // Every purchase, newest change first; then by reader, device (one it opens on, not only its holder), id, app.
            let all = text(try await get(client, cookie, "/admin/purchases"))
            #expect(all.contains(#"href="/admin/purchases" aria-current="page""#))
            #expect(all.matches(of: /<tr class="purchase" data-id="([^"]*)"/).map { String($0.1) } == ["2000000999", token, "2000000123"])
            #expect(all.contains("<td>Lector una</td><td class=\"purchase_active\">Activa</td><td>2025-06-30 12:00 UTC</td><td>—</td>"),
                    "holder, state, access end (the paid period's end), no credits")
            #expect(all.contains("<td>Dispositiu dev-1</td><td class=\"purchase_active\">Activa</td><td>—</td><td>3 / 5</td><td>1 · 2025-05-30, 2 · 2025-05-31</td><td>dev-1, dev-2</td>"))
            #expect(all.contains("<td>Sense titular</td><td class=\"purchase_revoked\">Revocada</td>"))
            #expect(all.contains(#"<a href="\#(html(detail))">cat.quiosc.pack5</a>"#))
            #expect(try await rows("?reader=una") == ["2000000123"])
            #expect(try await rows("?reader=UNA") == ["2000000123"], "usernames in any case, as readers sign in")
            #expect(try await rows("?reader=dos").isEmpty)
            let nobody = text(try await get(client, cookie, "/admin/purchases?reader=ningu"))
            #expect(notice(nobody) == html("No hi ha cap lector amb l'usuari ningu") && nobody.contains("Cap resultat."))
            #expect(try await rows("?device=dev-2") == [token])
            #expect(try await rows("?device=dev-1") == [token])
            #expect(try await rows("?id=" + escape(token)) == [token])
            #expect(try await rows("?id=2000000999&app=quiosc").isEmpty)
            #expect(try await rows("?app=presencia") == ["2000000999"])
            #expect(try await rows("?app=quiosc&device=dev-2&id=" + escape(token)) == [token], "every field given must match")

            // One purchase: its summary, devices with their release buttons, payments and notices, oldest first.
            let shown = text(try await get(client, cookie, detail))
            #expect(shown.contains(#"<code id="original-id">\#(token)</code>"#) && shown.contains(#"<dd id="credits-left">3 / 5</dd>"#))
            #expect(shown.matches(of: /<tr class="store-notice"><td>[^<]*<\/td><td>([A-Z_]+)<\/td><td>([^<]*)<\/td>/).map { "\($0.1) \($0.2)" }
                    == ["ONE_TIME_PRODUCT_PURCHASED applied", "ONE_TIME_PRODUCT_CANCELED no change"])
            #expect(shown.contains("<td><code>GPA.1234</code></td>") && shown.contains("<td>12.50 EUR</td>"), "12 495 thousandths")
            #expect(shown.matches(of: /name="action" value="release"><input type="hidden" name="device" value="([^"]+)"/).map { String($0.1) }
                    == ["dev-1", "dev-2"])
            #expect(shown.contains(#"name="action" value="revoke""#))
            #expect(try await get(client, cookie, "/admin/purchase?app=quiosc&store=apple&id=nothing").status == .notFound)
            #expect(try await get(client, cookie, "/admin/purchase?app=quiosc&store=amazon&id=\(escape(token))").status == .badRequest)
            let readerDetail = text(try await get(client, cookie, ConsolePage.purchaseURL(appKey: "quiosc", store: .apple, originalID: "2000000123")))
            #expect(!readerDetail.contains(#"value="release""#), "a reader's purchase has no device binding to release")

            // An editor neither sees readers' purchases (as the readers page) nor acts.
            let editorCookie = try await kiosk.signIn("edi")
            #expect(try await get(client, editorCookie, "/admin/purchases").status == .forbidden)
            #expect(try await get(client, editorCookie, detail).status == .forbidden)
            let editorHome = text(try await get(client, editorCookie, "/admin"))
            #expect(!editorHome.contains(#"href="/admin/purchases""#))
            let editorToken = try ConsoleTests.csrf(editorHome)
            let form = "app=quiosc&store=google&id=\(escape(token))"
            #expect(try await ConsoleTests.post(client, editorCookie, to: "/admin/purchase",
                                                "csrf=\(editorToken)&\(form)&action=release&device=dev-1").status == .forbidden)
            // Without the session's token: refused.
            #expect(try await ConsoleTests.post(client, cookie, to: "/admin/purchase", "\(form)&action=release&device=dev-1").status == .forbidden)
            #expect(try await ConsoleTests.post(client, cookie, to: "/admin/purchase", "csrf=AAAA&\(form)&action=revoke").status == .forbidden)
            #expect(try await store.purchase(appKey: "quiosc", store: .google, originalID: token) == packHeld, "nothing changed")
            #expect(try await store.auditEntries(limit: 100).isEmpty)

            let csrf = try ConsoleTests.csrf(shown)
            func act(_ body: String) async throws -> TestResponse {
                try await ConsoleTests.post(client, cookie, to: "/admin/purchase", "csrf=\(csrf)&\(body)")
            }

            // A device that does not hold it: 422, nothing changed, nothing audited. An unknown action: 400.
            let notBound = try await act("\(form)&action=release&device=dev-9")
            #expect(notBound.status == .unprocessableContent && notice(text(notBound)) == html("Aquesta compra no s'obre al dispositiu dev-9"))
            #expect(try await act("\(form)&action=steal").status == .badRequest)
            #expect(try await act("app=quiosc&store=apple&id=nothing&action=revoke").status == .notFound)
            #expect(try await store.purchase(appKey: "quiosc", store: .google, originalID: token) == packHeld)
            #expect(try await store.auditEntries(limit: 100).isEmpty)

            // Released: it no longer opens on dev-1, whose search finds nothing; dev-2 holds it.
            let released = try await act("\(form)&action=release&device=dev-1")
            #expect(released.status == .seeOther && released.headers[.location] == detail)
            let afterRelease = try #require(try await store.purchase(appKey: "quiosc", store: .google, originalID: token))
            #expect(afterRelease.holder == .device(deviceKey: "dev-2") && afterRelease.devices == ["dev-2"])
            #expect(try await store.purchases(appKey: "quiosc", userID: 0, deviceKey: "dev-1").isEmpty)
            #expect(try await rows("?device=dev-1").isEmpty)
            let releaseEntry = try #require(try await store.auditEntries(limit: 1).first)
            #expect(releaseEntry.actor == "marta" && releaseEntry.action == "purchase.release" && releaseEntry.subject == "quiosc google \(token)")
            #expect(releaseEntry.before == "activa; device dev-1; devices dev-1 dev-2"
                    && releaseEntry.after == "activa; device dev-2; devices dev-2 (released dev-1)")

            // Revoked by hand: it grants nothing (its state, the stats); the same form again changes nothing; restored.
            let subscriptionForm = "app=quiosc&store=apple&id=2000000123"
            func activeSubscriptions() async throws -> Int {
                try await store.statistics(StatisticsQuery(now: kiosk.clock.now)).storePurchases.activeSubscriptions
            }
            #expect(try await activeSubscriptions() == 1)
            #expect(try await act("\(subscriptionForm)&action=revoke").status == .seeOther)
            let revoked = try #require(try await store.purchase(appKey: "quiosc", store: .apple, originalID: "2000000123"))
            #expect(revoked.revokedByOperator && revoked.purchase.state(at: kiosk.clock.now) == .revoked)
            #expect(try await activeSubscriptions() == 0)
            let revokedPage = text(try await get(client, cookie, ConsolePage.purchaseURL(appKey: "quiosc", store: .apple, originalID: "2000000123")))
            #expect(revokedPage.contains(#"<dd id="state" class="purchase_revoked">Revocada</dd>"#) && revokedPage.contains(#"id="revoked-by-operator""#)
                    && revokedPage.contains(#"name="action" value="restore""#))
            let revokeEntry = try #require(try await store.auditEntries(limit: 1).first)
            #expect(revokeEntry.action == "purchase.revoke" && revokeEntry.subject == "quiosc apple 2000000123")
            #expect(revokeEntry.before == "activa; reader \(una); devices none"
                    && revokeEntry.after == "revocada; reader \(una); devices none; revoked by an operator")
            #expect(try await act("\(subscriptionForm)&action=revoke").status == .seeOther)
            #expect(try await store.auditEntries(limit: 100).count == 2, "sent twice, done once")
            #expect(try await act("\(subscriptionForm)&action=restore").status == .seeOther)
            let restored = try #require(try await store.purchase(appKey: "quiosc", store: .apple, originalID: "2000000123"))
            #expect(!restored.revokedByOperator && restored.purchase.state(at: kiosk.clock.now) == .active)
            #expect(try await activeSubscriptions() == 1)
            #expect(try await store.auditEntries(limit: 1).first?.action == "purchase.restore")

            // The dashboard counts them: one subscription active, the refunded issue, revenue per currency.
            let dashboard = text(try await get(client, cookie, "/admin"))
            #expect(dashboard.contains(#"<td id="active-subscriptions">1</td>"#) && dashboard.contains(#"<td id="refunds">1</td>"#))
            #expect(dashboard.contains(#"<tr id="revenue-EUR"><th scope="row">EUR</th><td>2</td><td>17.49</td></tr>"#), "4 990 + 12 495 thousandths")
            #expect(dashboard.contains(#"<tr id="store-total"><th scope="row">Σ</th><td>1</td><td>1</td><td>1</td><td>3</td></tr>"#))
        }
    }
}
