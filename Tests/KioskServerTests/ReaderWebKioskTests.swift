import KioskSQLite
import KioskRPC
import KioskEditions
import KioskConfig
import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import KioskModels
import KioskTestSupport
import Logging
import Testing
@testable import KioskHTTP
@testable import KioskWiring
@testable import KioskPasswords

/// The reader's web kiosk (`/web/{app}/…`) over HTTP: pages, sign-in by `hash`, entitlement, sessions, CSRF.
/// The same flows in a real browser: `ReaderWebKioskBrowserTests`.
@Suite struct ReaderWebKioskTests {
    /// A kiosk with issues in two months of a subscribers' edition (1) and one of the free edition (8),
    /// and a reader subscribed to edition 1 until 2025-06-15.
    static func kiosk() async throws -> (TestKiosk, userID: Int) {
        let kiosk = try await TestKiosk()
        for date in ["2025-05-20", "2025-06-10", "2025-06-20"] { try await kiosk.addIssue(edition: 1, date: date, pages: 2) }
        try await kiosk.addIssue(edition: 8, date: "2025-05-31", pages: 2)
        let userID = try await kiosk.addUser("anna", password: "pw", name: "Anna Puig", email: "anna@example.cat",
                                             subscriptions: [(1, "2025-06-15")])
        return (kiosk, userID)
    }

    static func app(_ kiosk: TestKiosk) -> some ApplicationProtocol {
        Application(router: buildRouter(runtime: kiosk.runtime), logger: Logger(label: "test"))
    }

    static func text(_ response: TestResponse) -> String { String(buffer: response.body) }

    /// The `kiosk_reader=…` pair of a `Set-Cookie`, for the next request's `Cookie`.
    static func cookie(_ response: TestResponse) throws -> String {
        let header = try #require(response.headers[.setCookie])
        return String(header.split(separator: ";")[0])
    }

    @Test func anonymousReadersSeeTheShelfAndFreeIssuesInTheirLanguage() async throws {
        let (kiosk, _) = try await Self.kiosk()
        try await Self.app(kiosk).test(.router) { client in
            let shelf = try await client.execute(uri: "/web/quiosc/", method: .get)
            #expect(shelf.status == .ok)
            #expect(shelf.headers[.contentType] == "text/html; charset=utf-8")
            #expect(shelf.headers[.cacheControl] == "private, no-store")
            let html = Self.text(shelf)
            #expect(html.contains("<html lang=\"ca\">") && html.contains("No heu entrat amb cap compte"))
            #expect(html.contains("href=\"/web/quiosc/edicio/1/2025-06-20\"") && html.contains("href=\"/web/quiosc/edicio/8/2025-05-31\""))
            #expect(html.contains("/1/2025-06-20/r1/jpg/001.jpg"), "the newest issue's cover, by a signed link")
            #expect(shelf.body.readableBytes < 100_000)

            let english = try await client.execute(uri: "/web/quiosc/", method: .get,
                                                   headers: [.acceptLanguage: "fr-FR, en-GB;q=0.8, ca;q=0.5"])
            #expect(Self.text(english).contains("<html lang=\"en\">") && Self.text(english).contains("You are not signed in"))
            #expect(english.headers[.contentLanguage] == "en")

            let free = try await client.execute(uri: "/web/quiosc/edicio/8/2025-05-31", method: .get)
            #expect(free.status == .ok)
            #expect(Self.text(free).contains("/8/2025-05-31/r1/pdf/002.pdf") && Self.text(free).contains("8-2025-05-31.zip"))

            let paid = try await client.execute(uri: "/web/quiosc/edicio/1/2025-06-10", method: .get)
            #expect(paid.status == .forbidden)
            #expect(Self.text(paid).contains("Aquest número és per a subscriptors.") && !Self.text(paid).contains("pdf/001.pdf"))

            #expect(try await client.execute(uri: "/web/nowhere/", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/web/quiosc/edicio/5/2025-06-10", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/web/quiosc/edicio/8/2025-06-01", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/web/quiosc/edicio/8/yesterday", method: .get).status == .notFound)
        }
    }

    @Test func aHashSignsTheReaderInAndEntitlementIsDecidedAsForGetEdicio() async throws {
        let (kiosk, userID) = try await Self.kiosk()
        let tokens = kiosk.runtime.runtime.environment.webKioskTokens
        let hash = tokens.token(userID: userID, expires: kiosk.clock.now + 300)
        try await Self.app(kiosk).test(.router) { client in
            let signIn = try await client.execute(uri: "/web/quiosc/compte?hash=\(hash)", method: .get)
            #expect(signIn.status == .seeOther)
            #expect(signIn.headers[.location] == "/web/quiosc/compte", "the hash leaves the address bar")
            let setCookie = try #require(signIn.headers[.setCookie])
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Lax") && setCookie.contains("Path=/web"))
            #expect(!setCookie.contains("Secure"), "served over plain HTTP here")
            let cookie = try Self.cookie(signIn)

            let account = Self.text(try await client.execute(uri: "/web/quiosc/compte", method: .get, headers: [.cookie: cookie]))
            #expect(account.contains("Anna Puig") && account.contains("<time datetime=\"2025-06-15\">"))
            #expect(account.contains("El Punt Avui · Nacional"))

            // Subscribed until 2025-06-15: the issue of the 10th, not the one of the 20th.
            let covered = try await client.execute(uri: "/web/quiosc/edicio/1/2025-06-10", method: .get, headers: [.cookie: cookie])
            #expect(covered.status == .ok && Self.text(covered).contains("/1/2025-06-10/r1/pdf/001.pdf"))
            let after = try await client.execute(uri: "/web/quiosc/edicio/1/2025-06-20", method: .get, headers: [.cookie: cookie])
            #expect(after.status == .forbidden)

            // An expired or forged hash signs nobody in and says so.
            let stale = tokens.token(userID: userID, expires: kiosk.clock.now - 1)
            for bad in [stale, hash.dropLast() + "A", "1.99999999999.x"] {
                let page = try await client.execute(uri: "/web/quiosc/?hash=\(bad)", method: .get)
                #expect(page.status == .ok && page.headers[.setCookie] == nil)
                #expect(Self.text(page).contains("L&#39;enllaç ha caducat"))
            }
            // A tampered cookie is an anonymous reader.
            let stored = try #require(try await kiosk.store.user(id: userID))
            // The cookie's first part is the payload and the session's id; another user's payload keeps the signature.
            let session = try #require(cookie.split(separator: "=", maxSplits: 1).last?.split(separator: ".").first)
            let decoded = try #require(Base64URL.decode(String(session)))
            let id = try #require(String(decoding: decoded, as: UTF8.self).split(separator: "\n").last)
            let forged = Base64URL.encode(Array((WebSessions.payload(String(userID + 1), passwordHash: stored.passwordHash) + "\n" + id).utf8))
            let tampered = cookie.replacingOccurrences(of: "kiosk_reader=\(session).", with: "kiosk_reader=\(forged).")
            #expect(tampered != cookie)
            #expect(try await client.execute(uri: "/web/quiosc/edicio/1/2025-06-10", method: .get,
                                             headers: [.cookie: tampered]).status == .forbidden)
            // A new password (a reset in the console) ends the session at its next request; a new link signs in again.
            #expect(try await kiosk.store.setPasswordHash(username: "anna", to: try await PasswordHashing().hash("pw2", cost: 4)))
            #expect(try await client.execute(uri: "/web/quiosc/edicio/1/2025-06-10", method: .get,
                                             headers: [.cookie: cookie]).status == .forbidden)
            let renewed = try Self.cookie(try await client.execute(uri: "/web/quiosc/compte?hash=\(hash)", method: .get))
            #expect(try await client.execute(uri: "/web/quiosc/edicio/1/2025-06-10", method: .get,
                                             headers: [.cookie: renewed]).status == .ok)
            // The session ends with its lifetime.
            kiosk.clock.advance(Int64(kiosk.configuration.webSessionLifetimeSeconds) + 1)
            #expect(try await client.execute(uri: "/web/quiosc/edicio/1/2025-06-10", method: .get,
                                             headers: [.cookie: renewed]).status == .forbidden)
        }
        // Each issue page opened (twice, before and after the new password) is a download, recorded with the web OS and the reader.
        let downloads = try await kiosk.store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT edition_id, date, user_id, os FROM downloads ORDER BY id")
        }
        #expect(downloads.map { [$0[0] as Int64, $0[2] as Int64] } == [[1, Int64(userID)], [1, Int64(userID)]])
        #expect(downloads.map { $0[3] as String } == ["web", "web"])
    }

    @Test func signingOutNeedsTheFormsCSRFToken() async throws {
        let (kiosk, userID) = try await Self.kiosk()
        let hash = kiosk.runtime.runtime.environment.webKioskTokens.token(userID: userID, expires: kiosk.clock.now + 300)
        try await Self.app(kiosk).test(.router) { client in
            let cookie = try Self.cookie(try await client.execute(uri: "/web/quiosc/?hash=\(hash)", method: .get))
            let shelf = Self.text(try await client.execute(uri: "/web/quiosc/", method: .get, headers: [.cookie: cookie]))
            let token = try #require(shelf.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1)
            let form: HTTPFields = [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"]
            for forged in ["", "csrf=", "csrf=\(token.dropLast())x"] {
                let refused = try await client.execute(uri: "/web/quiosc/sortir", method: .post, headers: form,
                                                       body: ByteBuffer(string: forged))
                #expect(refused.status == .forbidden)
            }
            let signedOut = try await client.execute(uri: "/web/quiosc/sortir", method: .post, headers: form,
                                                     body: ByteBuffer(string: "csrf=\(token)"))
            #expect(signedOut.status == .seeOther && signedOut.headers[.location] == "/web/quiosc/")
            #expect(signedOut.headers[.setCookie]?.contains("Max-Age=0") == true)
        }
    }

    @Test func theArchiveGoesMonthByMonth() async throws {
        let (kiosk, _) = try await Self.kiosk()
        try await Self.app(kiosk).test(.router) { client in
            let june = Self.text(try await client.execute(uri: "/web/quiosc/edicio/1", method: .get))
            #expect(june.contains("juny 2025") && june.contains("/web/quiosc/edicio/1/2025-06-10") && june.contains("/web/quiosc/edicio/1/2025-06-20"))
            #expect(june.contains("href=\"/web/quiosc/edicio/1?mes=2025-05\"") && !june.contains("rel=\"next\""))
            let may = Self.text(try await client.execute(uri: "/web/quiosc/edicio/1?mes=2025-05", method: .get,
                                                         headers: [.acceptLanguage: "en"]))
            #expect(may.contains("May 2025") && may.contains("/web/quiosc/edicio/1/2025-05-20") && !may.contains("2025-06-10\""))
            #expect(may.contains("href=\"/web/quiosc/edicio/1?mes=2025-06\"") && !may.contains("rel=\"prev\""))
        }
    }

    @Test func theSearchBoxFindsPagesOfTheAppsEditionsNewestFirst() async throws {
        let kiosk = try await TestKiosk()
        for (edition, date, word) in [(1, "2025-06-10", "Presència"), (8, "2025-06-12", "presencia"), (1, "2025-06-20", "altre")] {
            var pages = IssueFolders.smallPages(2)
            pages[1].text = "La \(word) del <consell> a Girona"
            let folder = try await IssueFolders.writeFolder(kiosk.directory.path + "/in-\(edition)-\(date)", pages: pages,
                                                      sections: [(1, "Portada")])
            _ = try await kiosk.editions.publisher().publish(editionID: edition, date: IssueDate(date)!, from: folder)
        }
        try await Self.app(kiosk).test(.router) { client in
            let shelf = Self.text(try await client.execute(uri: "/web/quiosc/", method: .get))
            #expect(shelf.contains("role=\"search\"") && shelf.contains("action=\"/web/quiosc/cerca\""))
            let found = try await client.execute(uri: "/web/quiosc/cerca?q=presencia", method: .get)
            #expect(found.status == .ok)
            let html = Self.text(found)
            let links = html.matches(of: /href="(\/web\/quiosc\/edicio\/[^"]+)"/).map { String($0.1) }
            #expect(links == ["/web/quiosc/edicio/8/2025-06-12#p2", "/web/quiosc/edicio/1/2025-06-10#p2"], "newest first, accents folded")
            #expect(html.contains("<b>presencia</b>") && html.contains("&lt;consell&gt;"), "the free line's excerpt marks the word and escapes the page's text")
            #expect(!html.contains("<b>Presència</b>"), "no excerpt of a subscribers' page for an anonymous reader")
            #expect(html.contains("value=\"presencia\""), "the box keeps the query")
            // Presència's app offers edition 8 only.
            let other = Self.text(try await client.execute(uri: "/web/presencia/cerca?q=presencia", method: .get))
            #expect(other.contains("/web/presencia/edicio/8/2025-06-12#p2") && !other.contains("edicio/1/"))
            // Hostile text is answered, never an error page.
            for query in ["%22unbalanced", "NEAR(a%20b)", "*", String(repeating: "a%20", count: 400)] {
                let answer = try await client.execute(uri: "/web/quiosc/cerca?q=\(query)", method: .get)
                #expect(answer.status == .ok, "\(query)")
            }
        }
    }

    @Test func sessionCookiesAreSecureBehindHTTPS() async throws {
        let kiosk = try await TestKiosk { $0.server.publicURL = "https://kiosk.example.cat" }
        let userID = try await kiosk.addUser("joan", password: "pw")
        let hash = kiosk.runtime.runtime.environment.webKioskTokens.token(userID: userID, expires: kiosk.clock.now + 60)
        try await Self.app(kiosk).test(.router) { client in
            let signIn = try await client.execute(uri: "/web/presencia/?hash=\(hash)", method: .get)
            #expect(signIn.headers[.setCookie]?.contains("Secure") == true)
        }
    }

    @Test func everyWordIsInBothLanguagesAndTheLanguageFollowsAcceptLanguage() {
        #expect(Set(WebStrings.catalan.keys) == Set(WebStrings.english.keys))
        #expect(WebLanguage(acceptLanguage: nil) == .ca)
        #expect(WebLanguage(acceptLanguage: "en-US,en;q=0.9") == .en)
        #expect(WebLanguage(acceptLanguage: "es-ES,es;q=0.9,ca;q=0.8,en;q=0.7") == .ca)
        #expect(WebLanguage(acceptLanguage: "de, en;q=0") == .ca, "q=0 means not acceptable")
        #expect(WebLanguage(acceptLanguage: "ca;q=0.2, EN;q=0.3") == .en)
    }
}
