import KioskTestSupport
import KioskSQLite
import Foundation
import Hummingbird
import HummingbirdTesting
import KioskModels
import Logging
import Testing
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskPasswords

/// The operator console over HTTP: sign-in, lock-out, CSRF on every form, roles, changes validated
/// and audited. The same in a real browser, across two instances: `ConsoleBrowserTests`.
@Suite struct ConsoleTests {
    static let password = "console-password"

    static func kiosk(source: KioskConfiguration.CatalogueSource = .console) async throws -> TestKiosk {
        let hash = try await PasswordHashing().hash(password, cost: 4)
        return try await TestKiosk { configuration in
            configuration.catalogueSource = source
            configuration.operators = [.init(username: "marta", passwordHash: hash, role: .operator),
                                       .init(username: "edi", passwordHash: hash, role: .editor)]
        }
    }

    static func app(_ kiosk: TestKiosk) -> some ApplicationProtocol {
        Application(router: buildRouter(runtime: kiosk.runtime), logger: Logger(label: "test"))
    }

    static func text(_ response: TestResponse) -> String { String(buffer: response.body) }
    static func cookies(_ response: TestResponse) -> [String] {
        response.headers[values: .setCookie].map { String($0.split(separator: ";")[0]) }
    }
    static func csrf(_ html: String) throws -> String { String(try #require(html.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1)) }
    static let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    /// Posts a form `body` to `uri` with the session `cookie`.
    static func post(_ client: some TestClientProtocol, _ cookie: String, to uri: String, _ body: String) async throws -> TestResponse {
        var headers = form
        headers[.cookie] = cookie
        return try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    /// Signs `username` in through the form; returns the `Cookie` header of the session.
    static func signIn(_ client: some TestClientProtocol, _ username: String, password: String = password) async throws -> (TestResponse, String) {
        let page = try await client.execute(uri: "/admin/sign-in", method: .get)
        let nonce = try #require(cookies(page).first)
        var headers = form
        headers[.cookie] = nonce
        let answer = try await client.execute(uri: "/admin/sign-in", method: .post, headers: headers,
                                              body: ByteBuffer(string: "csrf=\(try csrf(text(page)))&username=\(username)&password=\(password)"))
        return (answer, (cookies(answer).first ?? "") + "; " + nonce)
    }

    @Test func signInNeedsTheFormsTokenAndTheRightPasswordAndLocksOut() async throws {
        let kiosk = try await Self.kiosk()
        try await Self.app(kiosk).test(.router) { client in
            let anonymous = try await client.execute(uri: "/admin", method: .get)
            #expect(anonymous.status == .seeOther && anonymous.headers[.location] == "/admin/sign-in")

            let (signedIn, cookie) = try await Self.signIn(client, "marta")
            #expect(signedIn.status == .seeOther && signedIn.headers[.location] == "/admin")
            let setCookie = try #require(signedIn.headers[.setCookie])
            #expect(setCookie.hasPrefix("kiosk_operator=") && setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict")
                    && setCookie.contains("Path=/admin"))
            let dashboard = try await client.execute(uri: "/admin", method: .get, headers: [.cookie: cookie])
            #expect(dashboard.status == .ok && Self.text(dashboard).contains("<svg") && Self.text(dashboard).contains("marta"))
            #expect(dashboard.body.readableBytes < 100_000)
            #expect(dashboard.headers[.contentSecurityPolicy]?.contains("script-src 'self';") == true, "no inline script runs")
            #expect(dashboard.headers[.cacheControl] == "private, no-store")

            // No token, or a token of another nonce: refused before any password is checked.
            let forged = try await client.execute(uri: "/admin/sign-in", method: .post, headers: Self.form,
                                                  body: ByteBuffer(string: "username=marta&password=\(Self.password)"))
            #expect(forged.status == .forbidden)

            // Five wrong passwords lock the name out, the right one included, until the window passes.
            for _ in 0..<5 { #expect(try await Self.signIn(client, "edi", password: "wrong").0.status == .unauthorized) }
            let locked = try await Self.signIn(client, "edi")
            #expect(locked.0.status == .tooManyRequests && Self.text(locked.0).contains("Massa intents fallits"))
            #expect(try await Self.signIn(client, "nobody").0.status == .unauthorized)

            // The dashboard counts the period's failed sign-ins (the six above) and bundles built.
            let after = Self.text(try await client.execute(uri: "/admin", method: .get, headers: [.cookie: cookie]))
            let failures = after.firstMatch(of: /id="sign-in-failures">(\d+)</)?.1
            #expect(failures == "6", "\(failures ?? "no figure")")
            func builds() async throws -> Int? {
                let page = Self.text(try await client.execute(uri: "/admin?from=2000-01-01&to=2100-12-31", method: .get, headers: [.cookie: cookie]))
                return page.firstMatch(of: /id="bundle-builds">(\d+)</).flatMap { Int($0.1) }
            }
            let before = try #require(try await builds())
            try await kiosk.addIssue(edition: 8, date: "2025-06-15")
            #expect(try await builds() == before + 1, "a publish builds its bundle")
        }
    }

    @Test func everyChangeNeedsTheSessionsCSRFTokenIsValidatedAndAudited() async throws {
        let kiosk = try await Self.kiosk()
        try await Self.app(kiosk).test(.router) { client in
            let (_, cookie) = try await Self.signIn(client, "marta")
            var headers = Self.form
            headers[.cookie] = cookie
            let apps = Self.text(try await client.execute(uri: "/admin/apps", method: .get, headers: [.cookie: cookie]))
            let token = try Self.csrf(apps)

            // A forged form (no token, or another session's) changes nothing.
            for body in ["action=quota&demo_quota=1", "csrf=AAAA&action=quota&demo_quota=1"] {
                let refused = try await client.execute(uri: "/admin/apps/quiosc", method: .post, headers: headers, body: ByteBuffer(string: body))
                #expect(refused.status == .forbidden)
            }
            #expect(try await kiosk.store.app(key: "quiosc")?.demoQuota == 3)

            // Validated like the file: a negative quota is refused with the key's path.
            let negative = try await client.execute(uri: "/admin/apps/quiosc", method: .post, headers: headers,
                                                    body: ByteBuffer(string: "csrf=\(token)&action=quota&demo_quota=-2"))
            #expect(negative.status == .unprocessableContent && Self.text(negative).contains("App quiosc, demo quota: must be 0 to 1000000"))

            let lowered = try await client.execute(uri: "/admin/apps/quiosc", method: .post, headers: headers,
                                                   body: ByteBuffer(string: "csrf=\(token)&action=quota&demo_quota=1"))
            #expect(lowered.status == .seeOther)
            #expect(try await kiosk.store.app(key: "quiosc")?.demoQuota == 1)

            // Tariff lines: reorder, switch access, remove, add.
            // The access is named, not switched: the same form twice leaves edition 2 free.
            for action in ["action=down&edition=1", "action=access&edition=2&access=free", "action=access&edition=2&access=free",
                           "action=remove&edition=8", "action=add&edition=8&access=free"] {
                let answer = try await client.execute(uri: "/admin/apps/quiosc", method: .post, headers: headers,
                                                      body: ByteBuffer(string: "csrf=\(token)&\(action)"))
                #expect(answer.status == .seeOther, "\(action): \(Self.text(answer))")
            }
            let lines = try await kiosk.store.catalogue().tariffLines.filter { $0.appKey == "quiosc" }.sorted { $0.order < $1.order }
            #expect(lines.map(\.editionID) == [2, 1, 8])
            #expect(lines.map(\.access) == [.free, .subscribers, .free])
            let unnamed = try await client.execute(uri: "/admin/apps/quiosc", method: .post, headers: headers,
                                                   body: ByteBuffer(string: "csrf=\(token)&action=access&edition=2&access=bogus"))
            #expect(unnamed.status == .unprocessableContent && Self.text(unnamed).contains("access: must be free or subscribers"))
            #expect(try await kiosk.store.catalogue().tariffLines.first { $0.appKey == "quiosc" && $0.editionID == 2 }?.access == .free)

            // Readers: add, subscribe, reset the password, clear a lock-out.
            for body in ["action=add&username=joan&name=Joan+Vila&email=joan%40example.cat&password=joan-password",
                         "action=subscribe&username=joan&edition=1&until=2026-06-30",
                         "action=password&username=joan&password=another-password", "action=unlock&username=joan"] {
                let answer = try await client.execute(uri: "/admin/readers", method: .post, headers: headers,
                                                      body: ByteBuffer(string: "csrf=\(token)&\(body)"))
                #expect(answer.status == .seeOther, "\(body): \(Self.text(answer))")
            }
            let joan = try #require(try await kiosk.store.user(username: "joan"))
            #expect(joan.name == "Joan Vila" && joan.email == "joan@example.cat")
            #expect(try await kiosk.store.subscriptions(userID: joan.id).map(\.until.description) == ["2026-06-30"])
            #expect(try await PasswordHashing().verify("another-password", against: joan.passwordHash, username: ""))
            let short = try await client.execute(uri: "/admin/readers", method: .post, headers: headers,
                                                 body: ByteBuffer(string: "csrf=\(token)&action=add&username=x&password=short"))
            #expect(short.status == .unprocessableContent)
            let found = Self.text(try await client.execute(uri: "/admin/readers?q=VILA", method: .get, headers: [.cookie: cookie]))
            #expect(found.contains("id=\"reader-joan\"") && found.contains("1 → 2026-06-30"))

            // The audit log: who, what, before and after.
            let audit = Self.text(try await client.execute(uri: "/admin/audit", method: .get, headers: [.cookie: cookie]))
            #expect(audit.contains("app.quota") && audit.contains("demo_quota 3;") && audit.contains("demo_quota 1;"))
            #expect(audit.contains("reader.add") && audit.contains("reader.password") && audit.contains(">marta<"))
            #expect(try await kiosk.store.auditEntries(limit: 100).count == 9)
        }
    }

    @Test func editorsPublishButDoNotConfigure() async throws {
        let kiosk = try await Self.kiosk()
        try await Self.app(kiosk).test(.router) { client in
            let (_, cookie) = try await Self.signIn(client, "edi")
            let issues = try await client.execute(uri: "/admin/issues", method: .get, headers: [.cookie: cookie])
            #expect(issues.status == .ok && !Self.text(issues).contains("/admin/apps"))
            for page in ["/admin/apps", "/admin/readers", "/admin/audit"] {
                #expect(try await client.execute(uri: page, method: .get, headers: [.cookie: cookie]).status == .forbidden, "\(page)")
            }
        }
    }

    /// An issue's page in the console: every page's image (served through its signed link), section and PDF,
    /// the bundle; images allowed from the links' origin; a withdrawn issue is 404 until restored.
    @Test func anIssuesPagesAreShownThroughSignedLinks() async throws {
        let kiosk = try await Self.kiosk()
        try await kiosk.addIssue(edition: 1, date: "2025-06-10", pages: 3)
        try await Self.app(kiosk).test(.router) { client in
            let (_, cookie) = try await Self.signIn(client, "edi")
            let list = Self.text(try await client.execute(uri: "/admin/issues?edition=1", method: .get, headers: [.cookie: cookie]))
            #expect(list.contains("href=\"/admin/issues/1/2025-06-10\""))
            let answer = try await client.execute(uri: "/admin/issues/1/2025-06-10", method: .get, headers: [.cookie: cookie])
            let page = Self.text(answer)
            #expect(answer.status == .ok)
            #expect(answer.headers[.contentSecurityPolicy]?.contains("img-src 'self' data: \(kiosk.configuration.publicURL)") == true)
            let images = page.matches(of: /<img src="([^"]+)" alt="Pàgina (\d)"/).map { (String($0.1), String($0.2)) }
            #expect(images.map(\.1) == ["1", "2", "3"])
            #expect(page.components(separatedBy: ">PDF</a>").count == 4 && page.contains(".zip"))
            let link = try #require(URLComponents(string: images[0].0.replacingOccurrences(of: "&amp;", with: "&")))
            let image = try await client.execute(uri: link.path + "?" + (link.query ?? ""), method: .get)
            #expect(image.status == .ok && image.headers[.contentType] == "image/jpeg")
            #expect(try await client.execute(uri: "/admin/issues/1/2025-06-11", method: .get, headers: [.cookie: cookie]).status == .notFound)
        }
        #expect(try await kiosk.store.withdrawIssue(editionID: 1, date: IssueDate("2025-06-10")!, at: kiosk.clock.now))
        try await Self.app(kiosk).test(.router) { client in
            let (_, cookie) = try await Self.signIn(client, "edi")
            let withdrawn = try await client.execute(uri: "/admin/issues/1/2025-06-10", method: .get, headers: [.cookie: cookie])
            #expect(withdrawn.status == .notFound && Self.text(withdrawn).contains("restaureu-lo"))
        }
    }

    @Test func withCatalogueSourceFileTheAppsAreShownNotEdited() async throws {
        let kiosk = try await Self.kiosk(source: .file)
        try await Self.app(kiosk).test(.router) { client in
            let (_, cookie) = try await Self.signIn(client, "marta")
            let apps = Self.text(try await client.execute(uri: "/admin/apps", method: .get, headers: [.cookie: cookie]))
            #expect(apps.contains("catalogue_source: file") && apps.contains("disabled"))
            var headers = Self.form
            headers[.cookie] = cookie
            let refused = try await client.execute(uri: "/admin/apps/quiosc", method: .post, headers: headers,
                                                   body: ByteBuffer(string: "csrf=\(try Self.csrf(apps))&action=quota&demo_quota=1"))
            #expect(refused.status == .conflict)
            #expect(try await kiosk.store.app(key: "quiosc")?.demoQuota == 3)
        }
    }

    @Test func theConsolesWordsAreInBothLanguagesAndTheChartHasEveryDay() {
        #expect(Set(ConsoleStrings.catalan.keys) == Set(ConsoleStrings.english.keys))
        let chart = DownloadsChart(from: IssueDate("2025-06-01")!, to: IssueDate("2025-06-10")!,
                                   byDay: [IssueDate("2025-06-03")!: 7, IssueDate("2025-06-09")!: 2]).svg(title: "D<ownloads")
        #expect(chart.components(separatedBy: "<rect").count == 11)
        #expect(chart.contains("<title>2025-06-03: 7</title>") && chart.contains("<title>2025-06-10: 0</title>"))
        #expect(chart.contains("D&lt;ownloads") && !chart.contains("D<ownloads"))
    }
}
