import KioskSQLite
import KioskRPC
import Foundation
import Hummingbird
import HummingbirdTesting
import KioskModels
import KioskTestSupport
import Logging
import Testing
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskWiring
@testable import KioskPasswords

/// What an attack review found that stopped the server or leaked paid text, each with the request that
/// showed it and its variants: dates and periods in web pages, redirects, paid excerpts, ended sessions,
/// long passwords, publisher scopes.
@Suite struct HardeningTests {
    static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    // MARK: Dates, months and periods of the web pages

    @Test func archiveMonthsAtAndPastTheCalendarsEndsAnswerWithoutStoppingTheServer() async throws {
        let (kiosk, _) = try await ReaderWebKioskTests.kiosk()
        try await ReaderWebKioskTests.app(kiosk).test(.router) { client in
            for month in ["9999-12", "0001-01", "2025-06", "2024-02"] {
                let page = try await client.execute(uri: "/web/presencia/edicio/8?mes=\(month)", method: .get)
                #expect(page.status == .ok, "mes=\(month)")
            }
            for month in ["10000-01", "0000-12", "9999-13", "2025-00", "99999-12", "-001-01", "2025-6", "%F0%9F%98%80",
                          "2025-06-01", "9223372036854775807-01", "2025-0%CC%81"] {
                let page = try await client.execute(uri: "/web/presencia/edicio/8?mes=\(month)", method: .get)
                #expect(page.status == .badRequest, "mes=\(month)")
                #expect(ReaderWebKioskTests.text(page).contains("YYYY-MM"), "the page says what a month looks like")
            }
            let repeated = try await client.execute(uri: "/web/presencia/edicio/8?mes=9999-12&mes=10000-01", method: .get)
            #expect(repeated.status == .ok || repeated.status == .badRequest)
            for date in ["9999-12-31", "0001-01-01", "10000-01-01", "2025-02-29", "0000-00-00"] {
                let page = try await client.execute(uri: "/web/presencia/edicio/8/\(date)", method: .get)
                #expect(page.status == .notFound, "date \(date)")
            }
            let health = try await client.execute(uri: "/healthz", method: .get)
            #expect(health.status == .ok)
        }
    }

    @Test func theDashboardRefusesABackwardsOrUnreadablePeriodWithA400() async throws {
        let kiosk = try await ConsoleTests.kiosk()
        try await ConsoleTests.app(kiosk).test(.router) { client in
            let (_, cookie) = try await ConsoleTests.signIn(client, "edi")
            for query in ["from=2025-06-03&to=2025-06-01", "from=9999-12-31&to=0001-01-01", "from=0001-01-02&to=0001-01-01"] {
                let page = try await client.execute(uri: "/admin?\(query)", method: .get, headers: [.cookie: cookie])
                #expect(page.status == .badRequest, "\(query): \(ConsoleTests.text(page).prefix(3000))")
                #expect(ConsoleTests.text(page).contains("choose a start on or before the end"), "\(query)")
            }
            for query in ["from=10000-01-01", "to=2025-13-01", "from=yesterday", "to=%00"] {
                let page = try await client.execute(uri: "/admin?\(query)", method: .get, headers: [.cookie: cookie])
                #expect(page.status == .badRequest && ConsoleTests.text(page).contains("YYYY-MM-DD"), "\(query)")
            }
            for query in ["from=0001-01-01&to=9999-12-31", "from=2025-06-01&to=2025-06-01", "from=&to=", "from=2025-06-01"] {
                let page = try await client.execute(uri: "/admin?\(query)", method: .get, headers: [.cookie: cookie])
                #expect(page.status == .ok, "\(query)")
            }
        }
    }

    @Test func aSignInRedirectStaysOnThisServer() async throws {
        let (kiosk, userID) = try await ReaderWebKioskTests.kiosk()
        let hash = kiosk.runtime.runtime.environment.webKioskTokens.token(userID: userID, expires: kiosk.clock.now + 300)
        try await ReaderWebKioskTests.app(kiosk).test(.router) { client in
            for (path, expected) in [("/web/presencia", "/web/presencia"), ("//web/presencia", "/web/presencia"),
                                     ("/web//presencia/", "/web/presencia/"), ("/web/presencia/compte", "/web/presencia/compte")] {
                let answer = try await client.execute(uri: "\(path)?hash=\(hash)", method: .get)
                if answer.status == .seeOther {
                    #expect(answer.headers[.location] == expected, "\(path)")
                }
                #expect(answer.headers[.location]?.hasPrefix("//") != true && answer.headers[.location]?.contains("\\") != true)
            }
            #expect(WebPath.local("//evil.example/x") == "/evil.example/x")
            #expect(WebPath.local("/\\evil.example") == "/evil.example")
            #expect(WebPath.local("\\\\evil") == "/evil")
            #expect(WebPath.local("") == "/")
        }
    }

    // MARK: Paid text

    @Test func searchShowsExcerptsOnlyOfIssuesTheSearcherMayOpen() async throws {
        let kiosk = try await SearchMethodTests.searchKiosk()
        let userID = try await kiosk.addUser("subscriber", password: "pw-subscriber", subscriptions: [(1, "2025-05-30")])
        let tokens = kiosk.runtime.runtime.environment.webKioskTokens
        let result = try await kiosk.withServer { port in
            try await python(port, """
                c = lambda key: {(h["id"], h["data"], h["numero"]): h["fragment"] for h in p.epquiosc.cercar("quiosc", key, "girona", "", "", "", 100)}
                me = p.epusuaris.registrar("quiosc", "device-1", "subscriber", "pw-subscriber", {}, "iOS")
                anon = p.epusuaris.registrar("quiosc", "device-2", "", "", {}, "iOS")
                result = {"anonymous": list(c("").items()), "forged": list(c("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").items()),
                          "device": list(c(anon["iden_key"]).items()), "subscriber": list(c(me["iden_key"]).items()),
                          "free": p.epquiosc.cercar("quiosc", "", "setmanari", "8", "", "", 3)}
                """)
        }.value as! [String: Any]
        func excerpts(_ key: String) -> [String: String] {
            Dictionary(uniqueKeysWithValues: (result[key] as! [[Any]]).map { pair in
                let id = (pair[0] as! [String]).joined(separator: " ")
                return (id, pair[1] as! String)
            })
        }
        for key in ["anonymous", "forged", "device"] {
            let hits = excerpts(key)
            #expect(hits.count == 23, "\(key): every hit (11 + 12 pages) is still listed with its page")
            #expect(hits.values.allSatisfy { $0.isEmpty }, "\(key): no excerpt of a subscribers' edition")
        }
        let subscriber = excerpts("subscriber")
        #expect(subscriber.count == 23)
        #expect(subscriber.filter { $0.key.contains("2025-05-30") }.values.allSatisfy { $0.contains("<b>Girona</b>") },
                "the subscription covers 2025-05-30")
        #expect(subscriber.filter { $0.key.contains("2025-05-31") }.values.allSatisfy { $0.isEmpty }, "but not 2025-05-31")
        let free = result["free"] as? [[String: String]] ?? []
        #expect(free.count == 3 && free.allSatisfy { $0["fragment"]?.contains("<b>setmanari</b>") == true }, "a free line shows its text: \(free)")

        try await ReaderWebKioskTests.app(kiosk).test(.router) { client in
            let anonymous = ReaderWebKioskTests.text(try await client.execute(uri: "/web/quiosc/cerca?q=girona", method: .get))
            #expect(!anonymous.contains("<b>Girona</b>") && anonymous.contains("El text d&#39;aquesta pàgina és per a subscriptors")
                    || !anonymous.contains("<b>Girona</b>") && anonymous.contains("per a subscriptors"))
            let signIn = try await client.execute(uri: "/web/quiosc/compte?hash=\(tokens.token(userID: userID, expires: kiosk.clock.now + 300))",
                                                  method: .get)
            let cookie = try ReaderWebKioskTests.cookie(signIn)
            let signedIn = ReaderWebKioskTests.text(try await client.execute(uri: "/web/quiosc/cerca?q=girona", method: .get,
                                                                            headers: [.cookie: cookie]))
            #expect(signedIn.contains("<b>Girona</b>"), "the subscriber's issue shows its excerpt")
        }
    }

    @Test func eachClientHasASearchBudgetOverWhichCercarFaultsAndTheWebAnswers429() async throws {
        let kiosk = try await SearchMethodTests.searchKiosk {
            $0.limits.searchBurst = 3
            $0.limits.searchesPerMinute = 60
        }
        let result = try await kiosk.withServer { port in
            try await python(port, """
                import base64, urllib.request
                auth = "Basic " + base64.b64encode(b"\(TestKiosk.apiUser):\(TestKiosk.apiPassword)").decode()
                search = lambda: fault(lambda: p.epquiosc.cercar("quiosc", "", "girona", "", "", "", 5))
                def proxied(address):
                    body = xmlrpc.client.dumps(("quiosc", "", "girona", "", "", "", 5), "epquiosc.cercar").encode()
                    request = urllib.request.Request("http://127.0.0.1:\(port)/RPC2", data=body,
                                                     headers={"Content-Type": "text/xml", "X-Forwarded-For": address,
                                                              "Authorization": auth})
                    try:
                        xmlrpc.client.loads(urllib.request.urlopen(request).read())
                        return None
                    except xmlrpc.client.Fault as f:
                        return f.faultCode
                result = {"first": [search() for _ in range(3)], "over": search(),
                          "other": [proxied("203.0.113.9") for _ in range(3)], "otherOver": proxied("203.0.113.9")}
                """)
        }.value as! [String: Any]
        #expect((result["first"] as? [Any?])?.allSatisfy { $0 == nil || $0 is NSNull } == true, "the burst is answered: \(result)")
        let over = result["over"] as? [String: Any]
        #expect(over?["faultCode"] as? Int == 11)
        #expect((over?["faultString"] as? String)?.contains("try again in 1 seconds") == true, "\(String(describing: over))")
        #expect((result["other"] as? [Any?])?.allSatisfy { $0 == nil || $0 is NSNull } == true, "another client has its own budget")
        #expect(result["otherOver"] as? Int == 11)

        try await ReaderWebKioskTests.app(kiosk).test(.router) { client in
            for _ in 0..<3 {
                #expect(try await client.execute(uri: "/web/quiosc/cerca?q=girona", method: .get).status == .ok)
            }
            let refused = try await client.execute(uri: "/web/quiosc/cerca?q=girona", method: .get)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.headers[.retryAfter] == "1")
            #expect(ReaderWebKioskTests.text(refused).contains("Massa cerques"))
            kiosk.clock.advance(1)
            #expect(try await client.execute(uri: "/web/quiosc/cerca?q=girona", method: .get).status == .ok, "refilled a second later")
            #expect(try await client.execute(uri: "/web/quiosc/cerca?q=girona", method: .get).status == .tooManyRequests)
        }
    }

    // MARK: Sessions

    @Test func aReaderSignOutEndsTheSessionEvenForACopiedCookie() async throws {
        let (kiosk, userID) = try await ReaderWebKioskTests.kiosk()
        let tokens = kiosk.runtime.runtime.environment.webKioskTokens
        try await ReaderWebKioskTests.app(kiosk).test(.router) { client in
            func signIn() async throws -> String {
                let answer = try await client.execute(uri: "/web/quiosc/compte?hash=\(tokens.token(userID: userID, expires: kiosk.clock.now + 300))",
                                                      method: .get)
                return try ReaderWebKioskTests.cookie(answer)
            }
            func signedIn(_ cookie: String) async throws -> Bool {
                ReaderWebKioskTests.text(try await client.execute(uri: "/web/quiosc/compte", method: .get, headers: [.cookie: cookie]))
                    .contains("anna")
            }
            func csrf(_ cookie: String) async throws -> String {
                let page = ReaderWebKioskTests.text(try await client.execute(uri: "/web/quiosc/compte", method: .get, headers: [.cookie: cookie]))
                return try ConsoleTests.csrf(page)
            }
            let first = try await signIn(), second = try await signIn()
            let firstIn = try await signedIn(first), secondIn = try await signedIn(second)
            #expect(firstIn && secondIn)
            let out = try await client.execute(uri: "/web/quiosc/sortir", method: .post,
                                               headers: [.cookie: first, .contentType: "application/x-www-form-urlencoded"],
                                               body: ByteBuffer(string: "csrf=\(try await csrf(first))"))
            #expect(out.status == .seeOther)
            let firstAfter = try await signedIn(first), secondAfter = try await signedIn(second)
            #expect(!firstAfter, "the copied cookie of the ended session no longer signs in")
            #expect(secondAfter, "another browser's session goes on")

            let third = try await signIn()
            let everywhere = try await client.execute(uri: "/web/quiosc/sortir-arreu", method: .post,
                                                      headers: [.cookie: second, .contentType: "application/x-www-form-urlencoded"],
                                                      body: ByteBuffer(string: "csrf=\(try await csrf(second))"))
            #expect(everywhere.status == .seeOther)
            let secondEnded = try await !signedIn(second), thirdEnded = try await !signedIn(third)
            #expect(secondEnded && thirdEnded, "every session of the reader ended")
            kiosk.clock.advance(1)
            let fresh = try await signIn()
            let freshIn = try await signedIn(fresh)
            #expect(freshIn, "a new sign-in after it works")
        }
    }

    @Test func anOperatorsSignOutAndEndAllSessionsHoldOnEveryInstance() async throws {
        let kiosk = try await ConsoleTests.kiosk()
        let other = try await TestKiosk(sharingDatabaseOf: kiosk)
        try await ConsoleTests.app(kiosk).test(.router) { client in
            try await ConsoleTests.app(other).test(.router) { otherClient in
                func works(_ client: some TestClientProtocol, _ cookie: String) async throws -> Bool {
                    try await client.execute(uri: "/admin", method: .get, headers: [.cookie: cookie]).status == .ok
                }
                let (_, marta) = try await ConsoleTests.signIn(client, "marta")
                let (_, edi) = try await ConsoleTests.signIn(client, "edi")
                let (_, edi2) = try await ConsoleTests.signIn(otherClient, "edi")
                let bothInstances = try await works(otherClient, marta)
                #expect(bothInstances, "one session works on both instances")
                let page = ConsoleTests.text(try await client.execute(uri: "/admin", method: .get, headers: [.cookie: marta]))
                let out = try await ConsoleTests.post(client, marta, to: "/admin/sign-out", "csrf=\(try ConsoleTests.csrf(page))")
                #expect(out.status == .seeOther)
                let endedHere = try await !works(client, marta), endedThere = try await !works(otherClient, marta)
                #expect(endedHere && endedThere, "ended on both instances")

                let (_, marta2) = try await ConsoleTests.signIn(client, "marta")
                let accounts = ConsoleTests.text(try await client.execute(uri: "/admin/accounts", method: .get, headers: [.cookie: marta2]))
                let ended = try await ConsoleTests.post(client, marta2, to: "/admin/accounts/sessions",
                                                        "csrf=\(try ConsoleTests.csrf(accounts))&username=edi")
                #expect(ended.status == .seeOther)
                let ediHere = try await works(client, edi), ediThere = try await works(otherClient, edi2)
                #expect(!ediHere && !ediThere, "every session of edi, on every instance")
                let martaStill = try await works(client, marta2)
                #expect(martaStill)
                let audit = try await kiosk.store.auditEntries(limit: 5)
                #expect(audit.contains { $0.action == "account.end_sessions" && $0.subject == "operator:edi" && $0.actor == "marta" })
            }
        }
    }

    // MARK: Passwords

    @Test func aPasswordOverOneKibibyteIsWrongWithoutHashingIt() async throws {
        let phpass = "$P$B" + String(repeating: "A", count: 8) + String(repeating: "B", count: 22)
        let stored = try #require(StoredPasswordHash(phpass))
        let long = String(repeating: "x", count: PasswordLimits.maxBytes + 1)
        let start = ContinuousClock.now
        #expect(!PasswordHashing.check(String(repeating: "é", count: 1_000_000), against: stored))
        #expect(!PasswordHashing.check(long, against: stored))
        #expect(ContinuousClock.now - start < .seconds(20), "two bcrypt checks, not 2^13 MD5 rounds over a megabyte")
        await #expect(throws: KioskError.self) { _ = try await PasswordHashing().hash(long, cost: 4) }

        let kiosk = try await TestKiosk()
        _ = try await kiosk.addUser("legacy", password: "x")
        let fault = try await kiosk.withServer { port in
            try await python(port, """
                try:
                    p.epusuaris.registrar("quiosc", "d", "legacy", "x" * 1_000_000, {}, "iOS")
                    result = None
                except xmlrpc.client.Fault as f:
                    result = f.faultCode
                """)
        }.value as? Int
        #expect(fault == 6, "the same answer as a wrong password")
    }

    /// Behind the proxy on loopback the client is the last `X-Forwarded-For` address; a value that is no
    /// address (empty, junk) counts as the proxy itself, and a peer elsewhere is never overridden.
    @Test func theClientOfAChecksLimitIsAnAddressWhateverTheHeaderSays() {
        #expect(RuntimeMiddleware.client(forwardedFor: ["198.51.100.7"], peer: "127.0.0.1") == "198.51.100.7")
        #expect(RuntimeMiddleware.client(forwardedFor: ["a, 10.0.0.1", "203.0.113.9, 2001:db8::1"], peer: "::1") == "2001:db8::1")
        for junk in ["1.2.3.4, \t,", "", ",", "<b>", "evil.example", String(repeating: "1", count: 80)] {
            #expect(RuntimeMiddleware.client(forwardedFor: [junk], peer: "127.0.0.1") == "127.0.0.1", "\(junk)")
        }
        #expect(RuntimeMiddleware.client(forwardedFor: ["198.51.100.7"], peer: "192.0.2.1") == "192.0.2.1")
        #expect(RuntimeMiddleware.client(forwardedFor: [], peer: nil) == "unknown peer")
    }

    @Test func checkAdmissionBoundsEachUsernameAndClient() {
        let admission = CheckAdmission(perUsername: 2, perClient: 3)
        let a1 = admission.admit(username: "a", client: "1.1.1.1"), a2 = admission.admit(username: "a", client: "2.2.2.2")
        #expect(a1 != nil && a2 != nil)
        #expect(admission.admit(username: "a", client: "3.3.3.3") == nil, "a third check for one username waits nowhere")
        let b = admission.admit(username: "b", client: "1.1.1.1"), c = admission.admit(username: "c", client: "1.1.1.1")
        #expect(b != nil && c != nil)
        #expect(admission.admit(username: "d", client: "1.1.1.1") == nil, "a fourth check from one client waits nowhere")
        #expect(admission.admit(username: "d", client: "4.4.4.4") != nil, "others are let in")
        if let a1 { admission.release(a1) }
        #expect(admission.admit(username: "e", client: "1.1.1.1") != nil && admission.admit(username: "a", client: "5.5.5.5") != nil)
        let empty1 = admission.admit(username: "", client: ""), empty2 = admission.admit(username: "", client: "")
        #expect(empty1 != nil && empty2 != nil)
        #expect(admission.admit(username: "", client: "6.6.6.6") == nil, "the empty username is limited like any other")
    }

    /// A flood of wrong passwords from one client cannot hold back another reader's sign-in by more
    /// than a few checks: the flood's excess is refused at once (429), the other's check waits its turn.
    @Test func aFloodOfPasswordChecksFromOneClientDoesNotDelayOthers() async throws {
        let kiosk = try await TestKiosk { DevelopmentAccounts.atRepositoryCost(&$0) }
        let report = try await kiosk.withServer { port in
            try await python(port, """
                import threading, time, urllib.request, base64
                def call(user, password, forwarded):
                    request = urllib.request.Request(f"http://127.0.0.1:\(port)/RPC2", data=b"<methodCall><methodName>system.listMethods</methodName></methodCall>",
                        headers={"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode(), "Content-Type": "text/xml",
                                 "X-Forwarded-For": forwarded})
                    try:
                        return urllib.request.urlopen(request, timeout=120).status
                    except urllib.error.HTTPError as e:
                        return e.code
                start = time.monotonic()
                call("publisher", "wrong-alone", "198.51.100.8")  # one check with nothing ahead of it
                alone = time.monotonic() - start
                statuses = []
                def flood(i):
                    statuses.append(call(f"flood{i % 7}", f"wrong-{i}", "203.0.113.9"))
                threads = [threading.Thread(target=flood, args=(i,)) for i in range(60)]
                for t in threads: t.start()
                time.sleep(0.3)
                start = time.monotonic()
                other = call("kiosk", "secret", "198.51.100.7")
                waited = time.monotonic() - start
                for t in threads: t.join()
                result = {"other": other, "waited": waited, "alone": alone, "statuses": sorted(set(statuses)), "refused": statuses.count(429)}
                """)
        }.value as! [String: Any]
        #expect(report["other"] as? Int == 200)
        #expect((report["refused"] as? Int ?? 0) >= 40, "most of the flood is refused at once: \(report)")
        #expect(Set(report["statuses"] as? [Int] ?? []).isSubset(of: [401, 429]))
        // At most 4 of the flood's checks (the client's limit) are ahead of it, each one bcrypt at cost 11 like
        // its own: about five checks' time, against the sixty the flood holds. Measured against one check
        // alone in the same run, so a loaded machine slows both sides.
        let waited = report["waited"] as? Double ?? 99, alone = report["alone"] as? Double ?? 0
        #expect(waited < alone * 8 + 0.5, "\(report)")
    }

    /// Durations are added to clock times: a huge one is refused by key at load, not an overflow later.
    @Test(arguments: ["web_session_lifetime_seconds", "console_session_lifetime_seconds", "web_kiosk_token_lifetime_seconds"])
    func hugeDurationsInTheConfigurationAreRefusedByKey(_ key: String) throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func setting(_ value: String) -> (String) -> String {
            { text in text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix(key + ":") }
                .joined(separator: "\n") + "\n\(key): \(value)\n" }
        }
        for value in ["9223372036854775807", "0", "-5"] {
            let path = try writeTestConfiguration(in: directory, edit: setting(value))
            #expect(throws: ConfigurationError.self) { _ = try KioskConfiguration.load(from: path) }
            do { _ = try KioskConfiguration.load(from: path) } catch {
                #expect("\(error)".contains(key) && "\(error)".contains("ten years"), "\(error)")
            }
        }
        let fine = try writeTestConfiguration(in: directory, edit: setting("3600"))
        _ = try KioskConfiguration.load(from: fine)
    }

    // MARK: Publisher scopes

    @Test func aScopedPublisherIsRefusedOutsideItsScopeAndTheRefusalIsAudited() async throws {
        let kiosk = try await TestKiosk { configuration in
            configuration.publishers = configuration.publishers.map {
                var scoped = $0
                scoped.editions = [8]
                return scoped
            }
        }
        let auth: HTTPFields = [.authorization: Self.basic("publisher", "publisher-secret")]
        try await ConsoleTests.app(kiosk).test(.router) { client in
            let outside = try await client.execute(uri: "/publish/1/2025-06-01", method: .delete, headers: auth)
            #expect(outside.status == .forbidden && String(buffer: outside.body).contains("edition 1"))
            let restore = try await client.execute(uri: "/publish/1/2025-06-01/restore", method: .post, headers: auth)
            #expect(restore.status == .forbidden)
            var upload = auth
            upload[.contentType] = "application/pdf"
            let put = try await client.execute(uri: "/publish/2/2025-06-01", method: .put, headers: upload,
                                               body: ByteBuffer(string: "%PDF-1.4 not really"))
            #expect(put.status == .forbidden)
            let inside = try await client.execute(uri: "/publish/8/2025-06-01", method: .delete, headers: auth)
            #expect(inside.status == .notFound, "its own edition: the usual answer (no such issue)")
        }
        let refusals = try await kiosk.store.auditEntries(limit: 10).filter { $0.action == "publish.refused" }
        #expect(refusals.count == 3 && refusals.allSatisfy { $0.actor == "publisher:publisher" })
        #expect(refusals.contains { $0.subject == "edition 1 2025-06-01" && $0.after.contains("withdraw") })
    }

    @Test func scopesComeFromTheFileAndTheConsoleAndUnknownIdsAreRefused() async throws {
        var configuration = try KioskConfiguration.load(from: TestKiosk.repositoryRoot + "/Config/kiosk.yaml")
        configuration.publishers[0].publications = [999]
        #expect(throws: ConfigurationError.self) { try configuration.validate(file: "kiosk.yaml") }
        configuration.publishers[0].publications = [1]
        try configuration.validate(file: "kiosk.yaml")
        #expect(configuration.catalogue.accounts.first { $0.kind == .publisher }?.scope == PublisherScope(publications: [1]))
        configuration.apiClients[0].editions = [1]
        #expect(throws: ConfigurationError.self) { try configuration.validate(file: "kiosk.yaml") }

        #expect(PublisherScope(stored: PublisherScope(publications: [3, 1], editions: [7]).description)
                == PublisherScope(publications: [1, 3], editions: [7]))
        #expect(PublisherScope(stored: "publications ; editions ") == PublisherScope())
        #expect(PublisherScope(stored: "everything") == nil && PublisherScope(stored: "publications -1; editions ") == nil)

        let kiosk = try await ConsoleTests.kiosk()
        try await ConsoleTests.app(kiosk).test(.router) { client in
            let (_, cookie) = try await ConsoleTests.signIn(client, "marta")
            let page = ConsoleTests.text(try await client.execute(uri: "/admin/accounts", method: .get, headers: [.cookie: cookie]))
            let token = try ConsoleTests.csrf(page)
            let bad = try await ConsoleTests.post(client, cookie, to: "/admin/accounts",
                                                  "csrf=\(token)&action=scope&kind=publisher&username=publisher&publications=1,x")
            #expect(bad.status == .unprocessableContent)
            let unknown = try await ConsoleTests.post(client, cookie, to: "/admin/accounts",
                                                      "csrf=\(token)&action=scope&kind=publisher&username=publisher&editions=4242")
            #expect(unknown.status == .unprocessableContent && ConsoleTests.text(unknown).contains("4242"))
            let set = try await ConsoleTests.post(client, cookie, to: "/admin/accounts",
                                                  "csrf=\(token)&action=scope&kind=publisher&username=publisher&publications=1&editions=8")
            #expect(set.status == .seeOther)
            let stored = try await kiosk.store.accounts().first { $0.kind == .publisher }
            #expect(stored?.scope == PublisherScope(publications: [1], editions: [8]))
            let audit = try await kiosk.store.auditEntries(limit: 1).first
            #expect(audit?.action == "account.scope" && audit?.after.contains("publications 1; editions 8") == true)
        }
    }

    // MARK: Logs and identifiers

    @Test func logValuesAreQuotedSoNoValueForgesAFieldOrALine() {
        #expect(Logfmt.value("plain") == "plain")
        #expect(Logfmt.value("zz section=admin") == #""zz section=admin""#)
        #expect(Logfmt.value("a\nb") == #""a\nb""#)
        #expect(Logfmt.value("a\u{2028}b") == #""a\u{2028}b""#)
        #expect(Logfmt.value(#"say "hi" \ bye"#) == #""say \"hi\" \\ bye""#)
        #expect(Logfmt.value("") == #""""#)
        #expect(Logfmt.escaped("line\r\nnext\u{85}\u{1B}[31m") == #"line\r\nnext\u{85}\u{1b}[31m"#)
        #expect(Logfmt.key("a b=c") == "a_b_c")
    }

    @Test func appKeysAndUsernamesKeepToASafeAlphabet() {
        for key in ["quiosc", "presencia", "el-punt_avui.2"] { #expect(Identifier.isAppKey(key), "\(key)") }
        for key in ["", "a b", "a/b", "<script>", "quiosc\n", "q\u{0}", "è", String(repeating: "a", count: 65), "a%2F"] {
            #expect(!Identifier.isAppKey(key), "\(key)")
        }
        for name in ["kiosk", "publisher", "joan.puig@example.cat", "Núria"] { #expect(Identifier.isUsername(name), "\(name)") }
        for name in ["", "a b", "a:b", "<b>", "x\u{2028}", "x\u{200B}", "tab\t", "quote\""] { #expect(!Identifier.isUsername(name), "\(name)") }
    }
}
