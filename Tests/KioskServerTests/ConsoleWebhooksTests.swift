import Foundation
import Hummingbird
import HummingbirdTesting
import KioskModels
import KioskSQLite
import KioskTestSupport
import Testing
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskPasswords

/// The console's webhook endpoints (`/admin/webhooks`) and delivery log (`/admin/webhook?id=N`), over real
/// HTTP on the loopback, on a real SQLite file and a real PostgreSQL database: added with a secret shown
/// once, validated, enabled, disabled, rotated, tested, sent again and deleted, audited; refused without the
/// session's token; an editor's own only; the file's endpoints read-only; the dashboard's notice.
@Suite struct ConsoleWebhooksTests {
    typealias EngineKiosk = ConsolePurchasesTests.EngineKiosk
    static func text(_ response: TestResponse) -> String { ConsoleTests.text(response) }
    static func html(_ text: String) -> String { ConsolePurchasesTests.html(text) }
    static func escape(_ text: String) -> String { ConsolePurchasesTests.escape(text) }
    static func notice(_ html: String) -> String { ConsolePurchasesTests.notice(html) }
    static func get(_ client: some TestClientProtocol, _ cookie: String, _ uri: String) async throws -> TestResponse {
        try await ConsolePurchasesTests.get(client, cookie, uri)
    }
    static func secret(_ html: String) -> String? {
        html.firstMatch(of: /<code id="secret-value">(whsec_[^<]+)<\/code>/).map { String($0.1) }
    }
    static let fileSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    @Test func endpointsAreAddedValidatedChangedAndAuditedOnSQLite() async throws {
        try await Self.endpoints(try await EngineKiosk.sqlite())
    }

    @Test(.enabled(if: TestPostgresServer.configured, TestPostgresServer.skipReason))
    func endpointsAreAddedValidatedChangedAndAuditedOnPostgreSQL() async throws {
        try await TestPostgresServer.withDatabase { url in
            let kiosk = try await EngineKiosk.postgres(url)
            do { try await Self.endpoints(kiosk) } catch { await kiosk.close(); throw error }
            await kiosk.close()
        }
    }

    static func endpoints(_ kiosk: EngineKiosk) async throws {
        let store = kiosk.store, now = kiosk.clock.now
        try await kiosk.app.test(.live) { client in
            let cookie = try await kiosk.signIn("marta")
            let empty = text(try await get(client, cookie, "/admin/webhooks"))
            #expect(empty.contains(#"href="/admin/webhooks" aria-current="page""#) && empty.contains("Cap resultat."))
            #expect(empty.contains(#"name="type_purchase.granted""#) && !empty.contains(#"name="type_webhook.test""#),
                    "an operator chooses among every type but the test's")
            let csrf = try ConsoleTests.csrf(empty)
            func post(_ body: String) async throws -> TestResponse {
                try await ConsoleTests.post(client, cookie, to: "/admin/webhooks", body)
            }
            let good = "action=add&name=Redacci%C3%B3&url=\(escape("https://hooks.example.com/kiosk?a=1&b=2"))&type_issue.published=1&type_issue.withdrawn=1"

            // Without the session's token: refused, nothing stored.
            #expect(try await post(good).status == .forbidden)
            #expect(try await post("csrf=AAAA&" + good).status == .forbidden)
            #expect(try await store.webhookEndpoints(owner: nil).isEmpty)

            // Refused with what is wrong, the form kept: nothing stored, nothing audited.
            let refusals: [(String, String, String)] = [
                ("", "https://hooks.example.com/", "Nom: ha de tenir d&#39;1 a 100 caràcters"),
                (String(repeating: "n", count: 101), "https://hooks.example.com/", "Nom: ha de tenir d&#39;1 a 100 caràcters"),
                ("CRM", "ftp://hooks.example.com/", html("URL: must be an http:// or https:// URL, got \"ftp://hooks.example.com/\"")),
                ("CRM", "https://user:pw@hooks.example.com/", "URL: must not carry a user name or password"),
                ("CRM", "http://10.0.0.5/hook", html("URL: 10.0.0.5 is a private network address; webhooks may only go to public addresses (to allow this host, add \"10.0.0.5\" to webhooks.allow_hosts)")),
                ("CRM", "http://localhost:9000/hook", "URL: localhost is a name for local or private networks"),
                ("CRM", "http://169.254.169.254/latest", "URL: 169.254.169.254 is a link-local address"),
            ]
            for (name, url, message) in refusals {
                let refused = try await post("csrf=\(csrf)&action=add&name=\(escape(name))&url=\(escape(url))&type_issue.published=1")
                let page = text(refused)
                #expect(refused.status == .unprocessableContent && page.contains(message), "\(url): \(notice(page))")
                #expect(page.contains(#"name="url" value="\#(html(url))""#) && page.contains(#"name="type_issue.published" value="1" checked"#),
                        "the form keeps what was entered")
            }
            #expect(try await store.webhookEndpoints(owner: nil).isEmpty)
            #expect(try await store.auditEntries(limit: 10).isEmpty)

            // Added: the secret is shown on this answer only, with how to verify; stored as shown; audited without it.
            let added = try await post("csrf=\(csrf)&" + good)
            let addedPage = text(added)
            let secret = try #require(Self.secret(addedPage), "\(notice(addedPage))")
            #expect(added.status == .ok && addedPage.contains("docs/events.md") && addedPage.contains("no es tornarà a mostrar"))
            let first = try #require(try await store.webhookEndpoints(owner: nil).first)
            #expect(first.source == .console && first.name == "Redacció" && first.owner == "marta" && first.enabled
                    && first.url == "https://hooks.example.com/kiosk?a=1&b=2" && first.types == [.issuePublished, .issueWithdrawn])
            #expect(first.secrets == [secret] && secret.hasPrefix("whsec_") && secret.count > 30)
            let addEntry = try #require(try await store.auditEntries(limit: 1).first)
            #expect(addEntry.actor == "marta" && addEntry.action == "webhook.add" && addEntry.subject == "webhook \(first.id) Redacció")
            #expect(addEntry.after == "enabled; https://hooks.example.com/kiosk?a=1&b=2; issue.published issue.withdrawn; owner marta; 1 secret")
            let list = text(try await get(client, cookie, "/admin/webhooks"))
            #expect(!list.contains(secret) && Self.secret(list) == nil, "never shown again")
            #expect(list.contains(#"<td class="types">issue.published, issue.withdrawn</td><td class="owner">marta</td>"#))
            #expect(list.contains(#"<td class="secret">Definit</td>"#))
            #expect(list.contains(#"<code>\#(html(first.url))</code>"#))

            // A second, of every type.
            let allTypes = try await post("csrf=\(csrf)&action=add&name=Tot&url=\(escape("https://all.example.org/in"))")
            #expect(allTypes.status == .ok && Self.secret(text(allTypes)) != nil)
            let second = try #require(try await store.webhookEndpoints(owner: nil).first { $0.name == "Tot" })
            #expect(second.types.isEmpty)
            #expect(text(try await get(client, cookie, "/admin/webhooks")).contains(#"<td class="types">Tots</td>"#))
            func entries() async throws -> Int { try await store.auditEntries(limit: 100).count }
            #expect(try await entries() == 2)

            // Disabled with a reason, once; enabled again.
            #expect(try await post("action=disable&id=\(first.id)").status == .forbidden, "no token")
            let disabled = try await post("csrf=\(csrf)&action=disable&id=\(first.id)")
            #expect(disabled.status == .seeOther && disabled.headers[.location] == "/admin/webhooks#webhook-\(first.id)")
            let off = try #require(try await store.webhookEndpoint(id: first.id))
            #expect(!off.enabled && off.disabledReason == "disabled by marta in the console" && off.secrets == [secret])
            #expect(text(try await get(client, cookie, "/admin/webhooks")).contains("Desactivada: disabled by marta in the console"))
            let disableEntry = try #require(try await store.auditEntries(limit: 1).first)
            #expect(disableEntry.action == "webhook.disable" && disableEntry.before.hasPrefix("enabled;")
                    && disableEntry.after.hasPrefix("disabled (disabled by marta in the console);"))
            #expect(try await post("csrf=\(csrf)&action=disable&id=\(first.id)").status == .seeOther)
            #expect(try await entries() == 3, "disabling it twice changes it once")
            #expect(try await post("csrf=\(csrf)&action=enable&id=\(first.id)").status == .seeOther)
            let on = try #require(try await store.webhookEndpoint(id: first.id))
            #expect(on.enabled && on.disabledReason == nil)
            #expect(try await store.auditEntries(limit: 1).first?.action == "webhook.enable")

            // Rotated: the new secret first, shown once, the old kept second; no second rotation; finished.
            let rotated = try await post("csrf=\(csrf)&action=rotate&id=\(first.id)")
            let newSecret = try #require(Self.secret(text(rotated)))
            #expect(rotated.status == .ok && newSecret != secret)
            #expect(try await store.webhookEndpoint(id: first.id)?.secrets == [newSecret, secret])
            let rotateEntry = try #require(try await store.auditEntries(limit: 1).first)
            #expect(rotateEntry.action == "webhook.rotate" && rotateEntry.after.hasSuffix("2 secrets")
                    && !rotateEntry.after.contains("whsec_") && !rotateEntry.before.contains("whsec_"))
            let rotating = text(try await get(client, cookie, "/admin/webhooks"))
            #expect(!rotating.contains(newSecret) && rotating.contains(#"value="finish_rotation""#) && rotating.contains("en rotació"))
            let again = try await post("csrf=\(csrf)&action=rotate&id=\(first.id)")
            #expect(again.status == .unprocessableContent && notice(text(again)).contains("acabeu la rotació"))
            #expect(try await post("csrf=\(csrf)&action=finish_rotation&id=\(first.id)").status == .seeOther)
            #expect(try await store.webhookEndpoint(id: first.id)?.secrets == [newSecret])
            #expect(try await store.auditEntries(limit: 1).first?.action == "webhook.finish_rotation")

            // A test event: queued to that endpoint only, even once events are offered to every endpoint.
            let tested = try await post("csrf=\(csrf)&action=test&id=\(first.id)")
            #expect(tested.status == .seeOther && tested.headers[.location] == "/admin/webhook?id=\(first.id)")
            _ = try await store.dispatchEvents(limit: 1_000, at: now)
            let claimed = try await store.claimDeliveries(worker: "test", now: now, leaseUntil: now + 60, limit: 1_000)
            let tests = claimed.filter { $0.event.type == .webhookTest }
            #expect(tests.map(\.endpoint.id) == [first.id])
            let test = try #require(tests.first)
            let testEntry = try #require(try await store.auditEntries(limit: 1).first)
            #expect(testEntry.action == "webhook.test" && testEntry.after == "\(test.event.publicID) queued")

            // The delivery log: time, event, attempt, status or none, latency, the answer escaped.
            let answer = #"<script>alert("x")</script> & more"#
            #expect(try await store.finishDelivery(test, worker: "test", attempt: DeliveryAttempt(
                deliveryID: test.id, endpointID: first.id, eventID: test.event.id, eventType: .webhookTest, attempt: 1, time: now,
                status: 500, latencyMilliseconds: 12, answer: answer), next: .retry(at: now + 5), endpoint: .startedFailing))
            let retry = try await store.claimDeliveries(worker: "test", now: now + 5, leaseUntil: now + 65, limit: 10)
                .filter { $0.event.id == test.event.id }
            let secondTry = try #require(retry.first)
            #expect(try await store.finishDelivery(secondTry, worker: "test", attempt: DeliveryAttempt(
                deliveryID: secondTry.id, endpointID: first.id, eventID: test.event.id, eventType: .webhookTest, attempt: 2, time: now + 5,
                status: nil, latencyMilliseconds: 15_000, answer: "timed out after 15 s"), next: .givenUp, endpoint: .none))
            let log = text(try await get(client, cookie, "/admin/webhook?id=\(first.id)"))
            #expect(log.contains(html(answer)) && !log.contains("<script>alert"), "the answer's bytes are escaped")
            let rows = log.matches(of: /<tr class="attempt[^"]*" data-event="(evt_\d+)"><td>[^<]*<\/td><td><code>[^<]*<\/code> ([a-z.]+)<\/td><td>(\d+)<\/td><td class="status">([^<]*)<\/td><td>([^<]*)<\/td>/)
                .map { "\($0.1) \($0.2) \($0.3) \($0.4) \($0.5)" }
            #expect(rows == ["\(test.event.publicID) webhook.test 2 sense resposta 15000 ms", "\(test.event.publicID) webhook.test 1 500 12 ms"])
            #expect(log.matches(of: /value="send_again"/).count == 1, "one button per event")

            // Sent again: a new delivery of that event to that endpoint; an event no longer kept is refused.
            let sent = try await post("csrf=\(csrf)&action=send_again&id=\(first.id)&event=\(test.event.publicID)")
            #expect(sent.status == .seeOther)
            let queued = try await store.claimDeliveries(worker: "test", now: now + 10, leaseUntil: now + 70, limit: 10)
            #expect(queued.map { "\($0.endpoint.id) \($0.event.id)" } == ["\(first.id) \(test.event.id)"])
            #expect(try await store.auditEntries(limit: 1).first?.action == "webhook.send_again")
            let gone = try await post("csrf=\(csrf)&action=send_again&id=\(first.id)&event=evt_999999")
            #expect(gone.status == .unprocessableContent && notice(text(gone)).hasPrefix("evt_999999: "))
            #expect(try await post("csrf=\(csrf)&action=send_again&id=\(first.id)&event=nope").status == .badRequest)
            #expect(try await post("csrf=\(csrf)&action=explode&id=\(first.id)").status == .badRequest)
            #expect(try await get(client, cookie, "/admin/webhook?id=999999").status == .notFound)

            // Deleted, with its log.
            let before = try await entries()
            #expect(try await post("csrf=\(csrf)&action=delete&id=\(first.id)").status == .seeOther)
            #expect(try await store.webhookEndpoint(id: first.id) == nil)
            #expect(try await store.deliveryLog(endpointID: first.id, limit: 10).isEmpty)
            let deleteEntry = try #require(try await store.auditEntries(limit: 1).first)
            #expect(deleteEntry.action == "webhook.delete" && deleteEntry.after == "deleted")
            #expect(try await entries() == before + 1)
            #expect(try await post("csrf=\(csrf)&action=delete&id=\(first.id)").status == .notFound)
        }
    }

    @Test func editorsSeeAndChangeTheirOwnEndpointsForIssuesAndEditionsOnly() async throws {
        let kiosk = try await EngineKiosk.sqlite()
        let store = kiosk.store
        let martas = try await store.saveWebhookEndpoint(WebhookEndpoint(
            source: .console, name: "Marta's CRM", owner: "marta", url: "https://crm.example.com/in", secrets: [Self.fileSecret],
            createdAt: kiosk.clock.now))
        try await kiosk.app.test(.live) { client in
            let cookie = try await kiosk.signIn("edi")
            let page = Self.text(try await Self.get(client, cookie, "/admin/webhooks"))
            #expect(page.contains(#"href="/admin/webhooks" aria-current="page""#) && !page.contains("Marta&#39;s CRM"))
            #expect(page.contains(#"name="type_issue.published""#) && page.contains(#"name="type_edition.added""#))
            #expect(!page.contains(#"name="type_purchase.granted""#) && !page.contains(#"name="type_reader.added""#))
            let csrf = try ConsoleTests.csrf(page)
            func post(_ body: String) async throws -> TestResponse {
                try await ConsoleTests.post(client, cookie, to: "/admin/webhooks", "csrf=\(csrf)&" + body)
            }
            let url = Self.escape("https://edi.example.com/hook")

            // Not every type, nor a reader's or purchase's.
            let untyped = try await post("action=add&name=Edi&url=\(url)")
            #expect(untyped.status == .unprocessableContent && Self.notice(Self.text(untyped)) == Self.html("Tipus d'esdeveniment: marqueu-ne almenys un."))
            #expect(try await post("action=add&name=Edi&url=\(url)&type_purchase.granted=1").status == .forbidden)
            #expect(try await store.webhookEndpoints(owner: "edi").isEmpty)
            let added = try await post("action=add&name=Edi&url=\(url)&type_issue.published=1")
            #expect(added.status == .ok && Self.secret(Self.text(added)) != nil)
            let own = try #require(try await store.webhookEndpoints(owner: "edi").first)
            #expect(own.types == [.issuePublished] && own.owner == "edi")

            // Their own, without an owner column; not Marta's, neither seen nor changed.
            let list = Self.text(try await Self.get(client, cookie, "/admin/webhooks"))
            #expect(list.contains(#"id="webhook-\#(own.id)""#) && !list.contains(#"id="webhook-\#(martas.id)""#) && !list.contains(#"class="owner""#))
            #expect(try await post("action=disable&id=\(own.id)").status == .seeOther)
            #expect(try await store.webhookEndpoint(id: own.id)?.enabled == false)
            #expect(try await Self.get(client, cookie, "/admin/webhook?id=\(martas.id)").status == .forbidden)
            for action in ["disable", "delete", "rotate", "test"] {
                #expect(try await post("action=\(action)&id=\(martas.id)").status == .forbidden, "\(action)")
            }
            #expect(try await store.webhookEndpoint(id: martas.id) == martas)

            // At most so many of one's own here: the next is refused and nothing is stored.
            for k in 1..<ConsolePage.consoleEndpointsPerOwner {
                _ = try await store.saveWebhookEndpoint(WebhookEndpoint(
                    source: .console, name: "Edi \(k)", owner: "edi", url: "https://edi.example.com/\(k)", secrets: [Self.fileSecret],
                    createdAt: kiosk.clock.now))
            }
            let full = try await post("action=add&name=Edi+more&url=\(url)&type_issue.published=1")
            #expect(full.status == .unprocessableContent && Self.notice(Self.text(full)).contains(Self.html("Ja teniu el màxim de webhooks")))
            #expect(try await store.webhookEndpoints(owner: "edi").count == ConsolePage.consoleEndpointsPerOwner)

            // An operator sees both, with their owners.
            let operatorCookie = try await kiosk.signIn("marta")
            let all = Self.text(try await Self.get(client, operatorCookie, "/admin/webhooks"))
            #expect(all.contains(#"<td class="owner">edi</td>"#) && all.contains(#"<td class="owner">marta</td>"#))
        }
    }

    @Test func fileEndpointsAreReadOnlyHereAndTroublesReachTheDashboard() async throws {
        let kiosk = try await EngineKiosk.sqlite()
        let store = kiosk.store, now = kiosk.clock.now
        try await store.syncFileEndpoints([WebhookEndpoint(source: .file, name: "crm", owner: "marta", url: "https://crm.example.com/hook",
                                                           types: [.readerAdded], secrets: [Self.fileSecret], createdAt: now)])
        let file = try #require(try await store.webhookEndpoints(owner: nil).first)
        let failing = try await store.saveWebhookEndpoint(WebhookEndpoint(
            source: .console, name: "Failing <b>", owner: "marta", url: "https://down.example.com/", secrets: [Self.fileSecret],
            failingSince: now - 2 * 86_400, createdAt: now))
        let recent = try await store.saveWebhookEndpoint(WebhookEndpoint(
            source: .console, name: "Briefly failing", owner: "marta", url: "https://flaky.example.com/", secrets: [Self.fileSecret],
            failingSince: now - 3_600, createdAt: now))
        try await kiosk.app.test(.live) { client in
            let cookie = try await kiosk.signIn("marta")
            let page = Self.text(try await Self.get(client, cookie, "/admin/webhooks"))
            let row = try #require(page.firstMatch(of: /<tr class="webhook" id="webhook-\d+">.*?<\/tr>/.dotMatchesNewlines()).map { String($0.0) })
            #expect(row.contains("Fitxer de configuració") && row.contains("es canvien allà"))
            #expect(!row.contains(#"value="rotate""#) && !row.contains(#"value="delete""#) && row.contains(#"value="disable""#))
            let csrf = try ConsoleTests.csrf(page)
            for action in ["delete", "rotate", "finish_rotation"] {
                let refused = try await ConsoleTests.post(client, cookie, to: "/admin/webhooks", "csrf=\(csrf)&action=\(action)&id=\(file.id)")
                #expect(refused.status == .conflict, "\(action)")
            }
            #expect(try await store.webhookEndpoint(id: file.id) == file)

            // No trouble yet but the one failing for two days; then the file's, disabled here (its state is the store's).
            let dashboard = Self.text(try await Self.get(client, cookie, "/admin"))
            let notice = try #require(dashboard.firstMatch(of: /<section class="notice" id="webhook-troubles".*?<\/section>/.dotMatchesNewlines()).map { String($0.0) })
            #expect(notice.contains(#"<a href="/admin/webhook?id=\#(failing.id)">Failing &lt;b&gt;</a>: Falla des del 2025-05-30 12:00 UTC"#))
            #expect(!notice.contains("Briefly failing") && !notice.contains(">crm<") && recent.failingSince != nil)
            #expect(try await ConsoleTests.post(client, cookie, to: "/admin/webhooks", "csrf=\(csrf)&action=disable&id=\(file.id)").status == .seeOther)
            #expect(try await store.webhookEndpoint(id: file.id)?.enabled == false)
            let after = Self.text(try await Self.get(client, cookie, "/admin"))
            #expect(after.contains(#"<a href="/admin/webhook?id=\#(file.id)">crm</a>: Desactivada (disabled by marta in the console)"#))

            // Disabled and enabled again, it starts afresh; an editor's dashboard names none of an operator's endpoints.
            for action in ["disable", "enable"] {
                #expect(try await ConsoleTests.post(client, cookie, to: "/admin/webhooks", "csrf=\(csrf)&action=\(action)&id=\(failing.id)").status == .seeOther)
            }
            let restarted = try #require(try await store.webhookEndpoint(id: failing.id))
            #expect(restarted.enabled && restarted.failingSince == nil)
            #expect(!Self.text(try await Self.get(client, cookie, "/admin")).contains("Failing &lt;b&gt;"))
            let editor = Self.text(try await Self.get(client, try await kiosk.signIn("edi"), "/admin"))
            #expect(!editor.contains(#"id="webhook-troubles""#))
        }
    }

    @Test func hostsAllowedInTheFileMayBeChosen() async throws {
        let hash = try await PasswordHashing().hash(ConsoleTests.password, cost: 4)
        let kiosk = try await TestKiosk { configuration in
            configuration.operators = [.init(username: "marta", passwordHash: hash, role: .operator)]
            configuration.webhooks.allowHosts = ["localhost"]
        }
        try await ConsoleTests.app(kiosk).test(.router) { client in
            let (_, cookie) = try await ConsoleTests.signIn(client, "marta")
            let csrf = try ConsoleTests.csrf(Self.text(try await Self.get(client, cookie, "/admin/webhooks")))
            func post(_ url: String) async throws -> TestResponse {
                try await ConsoleTests.post(client, cookie, to: "/admin/webhooks", "csrf=\(csrf)&action=add&name=Local&url=\(Self.escape(url))")
            }
            #expect(try await post("http://localhost:9000/hook").status == .ok)
            #expect(try await post("http://127.0.0.1:9000/hook").status == .unprocessableContent, "allowed by name, as written")
            #expect(try await kiosk.store.webhookEndpoints(owner: "marta").map(\.url) == ["http://localhost:9000/hook"])
        }
    }
}
