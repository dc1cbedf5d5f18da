import KioskSQLite
import KioskConfig
import Foundation
import Hummingbird
import HummingbirdTesting
import KioskModels
import Testing
@testable import KioskHTTP

/// The catalogue part of the console's apps page: publications and editions added and renamed, apps
/// added; validated like the file, audited, refused without the session's token, to editors and with
/// `catalogue_source: file`, and answered from at once by the wire methods.
@Suite struct ConsoleCatalogueTests {
    static func post(_ client: some TestClientProtocol, _ cookie: String, _ body: String) async throws -> TestResponse {
        try await ConsoleTests.post(client, cookie, to: "/admin/catalogue", body)
    }

    @Test func operatorsAddAndRenamePublicationsEditionsAndApps() async throws {
        let kiosk = try await ConsoleTests.kiosk()
        let before = try await kiosk.store.catalogue()
        try await ConsoleTests.app(kiosk).test(.router) { client in
            let (_, cookie) = try await ConsoleTests.signIn(client, "marta")
            let page = ConsoleTests.text(try await client.execute(uri: "/admin/apps", method: .get, headers: [.cookie: cookie]))
            #expect(page.contains("id=\"catalogue\"") && page.contains("value=\"El Punt Avui\"") && page.contains("name=\"created_on\""))
            let token = try ConsoleTests.csrf(page)

            #expect(try await Self.post(client, cookie, "action=add_publication&id=9&name=Nou").status == .forbidden, "no CSRF token")
            let refusals = [
                ("action=add_publication&id=1&name=Repetida", "Publication 1, id: must be a positive id used once", ""),
                ("action=add_publication&id=9&name=+", "Publication 9, name: must be 1 to 200 characters on one line", ""),
                ("action=add_publication&id=nou&name=Nou", "A new publication, id: must be a whole number", ""),
                ("action=add_edition&publication=77&id=90&name=Nova&created_on=2026-01-01", "publication 77 is not defined", ""),
                ("action=add_edition&publication=1&id=90&name=Nova&created_on=2026-02-30", "must be a date as YYYY-MM-DD", ""),
                ("action=add_edition&publication=1&id=2&name=Nova&created_on=2026-01-01", "must be a positive id used once", ""),
                ("action=add_app&key=quiosc&name=Una+altra", "App quiosc, key: ", "is used twice"),
                ("action=add_app&key=&name=Buida", "An app, key: must be 1-64 characters of A-Z", ""),
                ("action=add_app&key=%3Cb%3Ex%0A&name=Marca", "An app, key: must be 1-64 characters of A-Z", ""),
            ]
            for (body, first, second) in refusals {
                let answer = try await Self.post(client, cookie, "csrf=\(token)&\(body)")
                let html = ConsoleTests.text(answer)
                #expect(answer.status == .unprocessableContent && html.contains(first) && (second.isEmpty || html.contains(second)), "\(body): \(answer.status) \(html.firstMatch(of: /class="notice"[^<]*/).map { String($0.0) } ?? "")")
                #expect(!html.contains("apps[") && !html.contains("publications["), "operators read their own words, not the file's key paths: \(body)")
            }
            #expect(try await kiosk.store.catalogue() == before, "a refused change changes nothing")
            #expect(try await kiosk.store.auditEntries(limit: 10).isEmpty)

            for body in ["action=add_publication&id=9&name=Diari+Nou", "action=add_edition&publication=9&id=90&name=Girona&created_on=2026-01-01",
                         "action=rename_edition&id=90&name=Girona+i+comarques", "action=rename_publication&id=9&name=Diari+Nou+de+Girona",
                         "action=add_app&key=diarinou&name=Diari+Nou"] {
                let answer = try await Self.post(client, cookie, "csrf=\(token)&\(body)")
                #expect(answer.status == .seeOther, "\(body): \(ConsoleTests.text(answer))")
            }
            let catalogue = try await kiosk.store.catalogue()
            #expect(catalogue.publications.first { $0.id == 9 }?.name == "Diari Nou de Girona")
            #expect(catalogue.editions.first { $0.id == 90 } == Edition(id: 90, publicationID: 9, name: "Girona i comarques",
                                                                         createdOn: IssueDate("2026-01-01")!))
            #expect(catalogue.apps.first { $0.key == "diarinou" } == App(key: "diarinou", name: "Diari Nou", demoQuota: 0))
            let entries = try await kiosk.store.auditEntries(limit: 10)
            #expect(entries.map(\.action) == ["catalogue.add_app", "catalogue.rename_publication", "catalogue.rename_edition",
                                              "catalogue.add_edition", "catalogue.add_publication"])
            #expect(entries[2].subject == "edition 90" && entries[2].before == "Girona" && entries[2].after == "Girona i comarques")

            // The new app answers at once (no lines yet: an empty list, not "unknown appkey").
            let rpc: HTTPFields = [.contentType: "text/xml",
                                   .authorization: "Basic " + Data("\(TestKiosk.apiUser):\(TestKiosk.apiPassword)".utf8).base64EncodedString()]
            let call = "<?xml version=\"1.0\"?><methodCall><methodName>epquiosc.getEdicions</methodName><params>"
                + "<param><value><string>diarinou</string></value></param><param><value><string></string></value></param></params></methodCall>"
            let answer = ConsoleTests.text(try await client.execute(uri: "/RPC2", method: .post, headers: rpc, body: ByteBuffer(string: call)))
            #expect(answer.contains("<array><data></data></array>") || answer.contains("<array><data/></array>"), "\(answer)")
        }
    }

    @Test func editorsAndTheFileSourceCannotChangeTheCatalogue() async throws {
        let kiosk = try await ConsoleTests.kiosk()
        try await ConsoleTests.app(kiosk).test(.router) { client in
            let (_, editor) = try await ConsoleTests.signIn(client, "edi")
            let token = try ConsoleTests.csrf(ConsoleTests.text(try await client.execute(uri: "/admin/issues", method: .get, headers: [.cookie: editor])))
            #expect(try await Self.post(client, editor, "csrf=\(token)&action=add_publication&id=9&name=Nou").status == .forbidden)
        }
        let file = try await ConsoleTests.kiosk(source: .file)
        try await ConsoleTests.app(file).test(.router) { client in
            let (_, cookie) = try await ConsoleTests.signIn(client, "marta")
            let page = ConsoleTests.text(try await client.execute(uri: "/admin/apps", method: .get, headers: [.cookie: cookie]))
            #expect(page.contains("id=\"catalogue\"") && !page.contains("name=\"created_on\""), "shown, not editable")
            #expect(try await Self.post(client, cookie, "csrf=\(try ConsoleTests.csrf(page))&action=add_publication&id=9&name=Nou").status == .conflict)
            #expect(try await file.store.catalogue().publications.contains { $0.id == 9 } == false)
        }
    }
}
