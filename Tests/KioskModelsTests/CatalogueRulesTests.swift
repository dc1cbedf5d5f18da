import KioskModels
import Testing

/// The catalogue's rules, as the console and the configuration file both apply them.
@Suite struct CatalogueRulesTests {
    static let hash = "$2b$04$" + String(repeating: "a", count: 53)

    static var valid: Catalogue {
        Catalogue(
            publications: [Publication(id: 1, name: "El Punt Avui")],
            editions: [Edition(id: 1, publicationID: 1, name: "Girona", createdOn: IssueDate("2020-01-01")!),
                       Edition(id: 2, publicationID: 1, name: "Barcelona", createdOn: IssueDate("2020-01-01")!)],
            apps: [App(key: "quiosc", name: "Quiosc", demoQuota: 3)],
            tariffLines: [TariffLine(appKey: "quiosc", editionID: 1, order: 1, access: .subscribers)],
            accounts: [Account(kind: .publisher, username: "ana", passwordHash: hash, scope: PublisherScope(editions: [2]))],
            webKiosks: [AppWebKiosk(appKey: "quiosc", baseURL: "https://quiosc.example.cat",
                                    sections: [WebKiosk.Section(name: "portada", path: "/?hash=", aliases: ["inici"])])])
    }

    func problem(_ change: (inout Catalogue) -> Void) -> CatalogueProblem? {
        var catalogue = Self.valid
        change(&catalogue)
        do { try catalogue.validate(); return nil } catch { return error }
    }

    @Test func aValidCatalogueHasNoProblem() throws {
        try Self.valid.validate()
    }

    @Test func eachRuleNamesWhatItIsAboutInAnOperatorsWords() {
        let cases: [((inout Catalogue) -> Void, CatalogueProblem.Place, String)] = [
            ({ $0.publications.append(Publication(id: 1, name: "Una altra")) }, .publication(1),
             "Publication 1, id: must be a positive id used once, got 1"),
            ({ $0.editions[1].name = " " }, .edition(1), "Edition 2, name: must be 1 to 200 characters on one line"),
            ({ $0.editions[0].publicationID = 9 }, .edition(0), "Edition 1, publication: publication 9 is not defined"),
            ({ $0.apps[0].demoQuota = -1 }, .app(0), "App quiosc, demo quota: must be 0 to 1000000"),
            ({ $0.tariffLines.append(TariffLine(appKey: "quiosc", editionID: 1, order: 2, access: .free)) }, .tariffLine(1),
             "The line of edition 1 in app quiosc, edition: edition 1 has two lines in app quiosc"),
            ({ $0.tariffLines[0].editionID = 7 }, .tariffLine(0),
             "The line of edition 7 in app quiosc, edition: edition 7 is not defined under publications"),
            ({ $0.webKiosks[0].baseURL = "quiosc.example.cat" }, .webKiosk(appKey: "quiosc"),
             "The web kiosk of app quiosc, base URL: must start with http:// or https://"),
            ({ $0.webKiosks[0].sections.append(WebKiosk.Section(name: "compte", path: "/compte?hash=", aliases: ["PORTADA"])) },
             .webKiosk(appKey: "quiosc"),
             "The web kiosk of app quiosc, aliases of section \"compte\": \"PORTADA\" already names section \"portada\""),
            ({ $0.accounts[0].scope = PublisherScope(editions: [5]) }, .account(0),
             "Publisher ana, editions: edition 5 is not defined under publications"),
            ({ $0.accounts[0].passwordHash = "secret" }, .account(0),
             "Publisher ana, password hash: must be a bcrypt hash ($2a$/$2b$/$2y$); make one with `KioskServer hash-password`"),
        ]
        for (change, place, message) in cases {
            let found = problem(change)
            #expect(found?.place == place, "\(message)")
            #expect(found?.description == message)
            #expect(found.map { !$0.description.contains("[") || $0.description.contains("$2a$") } ?? false, "no key paths")
        }
    }
}
