import KioskTestSupport
import KioskSQLite
import Foundation
import Hummingbird
import HummingbirdTesting
import KioskModels
import Testing
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskPasswords

/// Accounts in the console (`/admin/accounts`): API clients, publishers and operators as stored data,
/// edited under the catalogue's rule; and authentication reading them from the store, so a change made on
/// one instance is enforced by another at its next request.
@Suite struct ConsoleAccountsTests {
    static func post(_ client: some TestClientProtocol, _ cookie: String, _ body: String) async throws -> TestResponse {
        try await ConsoleTests.post(client, cookie, to: "/admin/accounts", body)
    }

    @Test func operatorsAddResetChangeAndRemoveAccountsValidatedAndAuditedWithoutHashes() async throws {
        let kiosk = try await ConsoleTests.kiosk()
        try await ConsoleTests.app(kiosk).test(.router) { client in
            let (_, cookie) = try await ConsoleTests.signIn(client, "marta")
            let page = try await client.execute(uri: "/admin/accounts", method: .get, headers: [.cookie: cookie])
            let html = ConsoleTests.text(page)
            #expect(page.status == .ok && html.contains("id=\"api_client-kiosk\"") && html.contains("id=\"publisher-publisher\"")
                    && html.contains("id=\"operator-edi\""), "the file's accounts seeded the table")
            let token = try ConsoleTests.csrf(html)

            #expect(try await Self.post(client, cookie, "action=add&kind=api_client&username=app2&password=app2-password&password2=app2-password")
                .status == .forbidden, "no CSRF token")
            for (body, problem) in [
                ("action=add&kind=api_client&username=app2&password=app2-password&password2=other-password", "the two passwords differ"),
                ("action=add&kind=api_client&username=app2&password=short&password2=short", "at least 8 characters"),
                ("action=add&kind=api_client&username=a%3Ab&password=app2-password&password2=app2-password", "username: must be 1-128 characters with no space, control character, &#39;:&#39;"),
                ("action=add&kind=publisher&username=%3Cscript%3E&password=app2-password&password2=app2-password", "username: must be 1-128 characters"),
                ("action=add&kind=api_client&username=kiosk&password=app2-password&password2=app2-password", "api_client:kiosk: already exists"),
                ("action=remove&kind=operator&username=marta", "vostre propi compte"),
                ("action=role&kind=operator&username=marta&role=editor", "vostre propi compte"),
            ] {
                let refused = try await Self.post(client, cookie, "csrf=\(token)&\(body)")
                #expect(refused.status == .unprocessableContent && ConsoleTests.text(refused).contains(problem),
                        "\(body): \(ConsoleTests.text(refused).firstMatch(of: /class="notice" role="alert">([^<]*)/)?.1 ?? "")")
            }
            #expect(try await kiosk.store.accounts().count == 4, "nothing refused was written")

            let added = try await Self.post(client, cookie, "csrf=\(token)&action=add&kind=api_client&username=app2&password=app2-password&password2=app2-password")
            #expect(added.status == .seeOther)
            let app2 = try #require(try await kiosk.store.accounts().first { $0.label == "api_client:app2" })
            #expect(try await PasswordHashing().verify("app2-password", against: app2.passwordHash, username: ""))

            // Both passwords left empty: one is generated, shown once, and works.
            let generated = try await Self.post(client, cookie, "csrf=\(token)&action=add&kind=operator&username=pau&role=operator")
            let shown = try #require(ConsoleTests.text(generated).firstMatch(of: /operator:pau: ([A-Za-z0-9_-]{24})</)?.1)
            #expect(generated.status == .ok)
            let pau = try #require(try await kiosk.store.accounts().first { $0.label == "operator:pau" })
            #expect(pau.role == .operator)
            #expect(try await PasswordHashing().verify(String(shown), against: pau.passwordHash, username: ""))
            #expect(!ConsoleTests.text(try await client.execute(uri: "/admin/accounts", method: .get, headers: [.cookie: cookie]))
                .contains(String(shown)), "shown only once")

            for body in ["action=password&kind=publisher&username=publisher&password=new-publisher&password2=new-publisher",
                         "action=role&kind=operator&username=edi&role=operator", "action=remove&kind=api_client&username=kiosk"] {
                let answer = try await Self.post(client, cookie, "csrf=\(token)&\(body)")
                #expect(answer.status == .seeOther, "\(body): \(ConsoleTests.text(answer))")
            }
            let stored = try await kiosk.store.accounts()
            #expect(stored.map(\.label) == ["api_client:app2", "operator:edi", "operator:marta", "operator:pau", "publisher:publisher"])
            #expect(stored.first { $0.username == "edi" }?.role == .operator)

            for body in ["action=role&kind=operator&username=edi&role=editor", "action=remove&kind=operator&username=pau"] {
                #expect(try await Self.post(client, cookie, "csrf=\(token)&\(body)").status == .seeOther, "\(body)")
            }
            let entries = try await kiosk.store.auditEntries(limit: 20)
            #expect(entries.map(\.action) == ["account.remove", "account.role", "account.remove", "account.role", "account.password",
                                              "account.add", "account.add"])
            #expect(entries[1] == AuditEntry(time: kiosk.clock.now, actor: "marta", action: "account.role", subject: "operator:edi",
                                             before: "operator:edi (operator)", after: "operator:edi (editor)"))
            #expect(entries.allSatisfy { !($0.before + $0.after).contains("$2") && !($0.before + $0.after).contains(String(shown)) },
                    "no hash or password in the audit log")
        }
    }

    @Test func editorsAndTheFileSourceCannotChangeAccountsAndARemovedOrRepasswordedOperatorIsSignedOut() async throws {
        let kiosk = try await ConsoleTests.kiosk()
        try await ConsoleTests.app(kiosk).test(.router) { client in
            let (_, editor) = try await ConsoleTests.signIn(client, "edi")
            #expect(try await client.execute(uri: "/admin/accounts", method: .get, headers: [.cookie: editor]).status == .forbidden)
            let editorsToken = try ConsoleTests.csrf(ConsoleTests.text(try await client.execute(uri: "/admin/issues", method: .get, headers: [.cookie: editor])))
            #expect(try await Self.post(client, editor, "csrf=\(editorsToken)&action=remove&kind=operator&username=marta").status == .forbidden)
            let (_, cookie) = try await ConsoleTests.signIn(client, "marta")
            let token = try ConsoleTests.csrf(ConsoleTests.text(try await client.execute(uri: "/admin/accounts", method: .get, headers: [.cookie: cookie])))
            // A new password ends the sessions signed in with the old one, at their next request.
            #expect(try await Self.post(client, cookie, "csrf=\(token)&action=password&kind=operator&username=edi"
                                        + "&password=edi-new-password&password2=edi-new-password").status == .seeOther)
            #expect(try await client.execute(uri: "/admin/issues", method: .get, headers: [.cookie: editor]).status == .seeOther)
            #expect(try await client.execute(uri: "/admin/issues", method: .get, headers: [.cookie: cookie]).status == .ok,
                    "another operator's session holds")
            let (signedIn, renewed) = try await ConsoleTests.signIn(client, "edi", password: "edi-new-password")
            #expect(signedIn.status == .seeOther)
            #expect(try await client.execute(uri: "/admin/issues", method: .get, headers: [.cookie: renewed]).status == .ok)
            #expect(try await Self.post(client, cookie, "csrf=\(token)&action=remove&kind=operator&username=edi").status == .seeOther)
            // edi's session ends with the account, at the next request.
            #expect(try await client.execute(uri: "/admin/issues", method: .get, headers: [.cookie: renewed]).status == .seeOther)
            #expect(try await ConsoleTests.signIn(client, "edi").0.status == .unauthorized)
        }

        let file = try await ConsoleTests.kiosk(source: .file)
        try await ConsoleTests.app(file).test(.router) { client in
            let (_, cookie) = try await ConsoleTests.signIn(client, "marta")
            let page = ConsoleTests.text(try await client.execute(uri: "/admin/accounts", method: .get, headers: [.cookie: cookie]))
            #expect(page.contains("catalogue_source: file") && page.contains("operator-edi") && !page.contains("value=\"remove\""))
            let refused = try await Self.post(client, cookie, "csrf=\(try ConsoleTests.csrf(page))&action=remove&kind=operator&username=edi")
            #expect(refused.status == .conflict)
            #expect(try await file.store.accounts().count == 4)
        }
    }

    /// Two instances of the real binary on one database: accounts changed in the console of the first are
    /// enforced by the second at its very next request (Basic auth of API clients and publishers, and the
    /// console's sign-in and sessions), although it had verified and cached the old credentials.
    @Test(arguments: ["sqlite", "postgres"])
    func aChangeOnOneInstanceIsEnforcedByAnotherAtOnce(_ engine: String) async throws {
        if engine == "postgres" {
            guard TestPostgresServer.configured else { return }
            try await TestPostgresServer.withDatabase { try await Self.twoInstancesEnforceAChangeAtOnce(database: ["--database", $0]) }
        } else {
            try await Self.twoInstancesEnforceAChangeAtOnce(database: [])
        }
    }

    /// The scenario above with `database` (the instances' `--database` arguments; none: the configuration's SQLite file).
    static func twoInstancesEnforceAChangeAtOnce(database: [String]) async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let hash = try await PasswordHashing().hash(ConsoleTests.password, cost: 4)
        let config = try writeTestConfiguration(in: directory) {
            $0 + "\ncatalogue_source: console\noperators:\n  - { username: marta, password_hash: \"\(hash)\", role: operator }\n"
                + "  - { username: edi, password_hash: \"\(hash)\", role: editor }\n"
        }
        let environment = EndToEndTests.environment
        let first = try await ServerProcess(["--config", config] + database, environment: environment)
        let second = try await ServerProcess(["--config", config] + database, environment: environment)
        let script = #"""
            import http.cookiejar, json, re, sys, urllib.error, urllib.parse, urllib.request, xmlrpc.client
            first, second, password = sys.argv[1], sys.argv[2], sys.argv[3]
            def rpc(base, user, pw):
                try:
                    xmlrpc.client.ServerProxy(base.replace("http://", "http://%s:%s@" % (user, pw)) + "/RPC2").epquiosc.getEdicions("quiosc", "d")
                    return 200
                except xmlrpc.client.ProtocolError as e:
                    return e.errcode
            def publish(base, user, pw):
                request = urllib.request.Request(base + "/publish/8/2031-01-01", method="DELETE")
                request.add_header("Authorization", "Basic " + __import__("base64").b64encode(("%s:%s" % (user, pw)).encode()).decode())
                try:
                    return urllib.request.urlopen(request).status
                except urllib.error.HTTPError as e:
                    return e.code
            def console(base, user, pw):
                jar = http.cookiejar.CookieJar()
                opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
                page = opener.open(base + "/admin/sign-in").read().decode()
                csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
                try:
                    answer = opener.open(base + "/admin/sign-in", urllib.parse.urlencode({"csrf": csrf, "username": user, "password": pw}).encode())
                except urllib.error.HTTPError as e:
                    return opener, str(e.code)
                return opener, answer.geturl()
            def change(opener, base, **fields):
                page = opener.open(base + "/admin/accounts").read().decode()
                fields["csrf"] = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
                return opener.open(base + "/admin/accounts", urllib.parse.urlencode(fields).encode()).status
            out = {}
            out["before"] = [rpc(second, "kiosk", "secret"), rpc(second, "kiosk", "secret"), publish(second, "publisher", "publisher-secret")]
            edi, landed = console(second, "edi", password)
            out["edi_signed_in"] = landed.endswith("/admin")
            marta, _ = console(first, "marta", password)
            change(marta, first, action="password", kind="api_client", username="kiosk", password="new-secret-1", password2="new-secret-1")
            change(marta, first, action="add", kind="api_client", username="app2", password="app2-password", password2="app2-password")
            change(marta, first, action="remove", kind="publisher", username="publisher")
            change(marta, first, action="remove", kind="operator", username="edi")
            out["after"] = [rpc(second, "kiosk", "secret"), rpc(second, "kiosk", "new-secret-1"), rpc(second, "app2", "app2-password"),
                            publish(second, "publisher", "publisher-secret")]
            out["edi_after"] = edi.open(second + "/admin").geturl()
            out["edi_sign_in"] = console(second, "edi", password)[1]
            print(json.dumps(out))
            """#
        let output = try await runClient("python3", ["-c", script, "http://127.0.0.1:\(first.port)", "http://127.0.0.1:\(second.port)",
                                                     ConsoleTests.password])
        for server in [first, second] {
            server.signal(SIGTERM)
            _ = try await server.waitForExit()
        }
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
        #expect(report["before"] as? [Int] == [200, 200, 404], "the file's accounts, seeded; the publisher is let in (no such issue)")
        #expect(report["edi_signed_in"] as? Bool == true)
        #expect(report["after"] as? [Int] == [401, 200, 200, 401], "\(report)")
        #expect((report["edi_after"] as? String)?.hasSuffix("/admin/sign-in") == true, "a removed operator's session ends")
        #expect(report["edi_sign_in"] as? String == "401", "and they cannot sign in again")
    }
}

/// The catalogue version behind authentication is read once per burst, never before a caller asked.
@Suite struct CoalescedReadTests {
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        var current: Int { lock.withLock { value } }
        func next() -> Int { lock.withLock { value += 1; return value } }
    }

    @Test func concurrentCallersShareTheNextReadAndNeverGetAnOlderOne() async throws {
        let counter = Counter()
        let reads = CoalescedRead<Int> {
            let number = counter.next()
            try await Task.sleep(for: .milliseconds(20))
            return number
        }
        let answers = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<100 {
                group.addTask {
                    try await Task.sleep(for: .milliseconds(index % 10))
                    let before = counter.current
                    return (before, try await reads.value())
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.allSatisfy { $0.1 > $0.0 }, "every answer comes from a read that began after the call")
        #expect(counter.current < 20, "\(counter.current) reads for 100 callers")
    }
}
