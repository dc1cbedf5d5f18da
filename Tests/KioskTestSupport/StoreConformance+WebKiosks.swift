import KioskModels
import Testing

extension StoreConformance {
    /// Web kiosks are part of the catalogue: a sync stores each app's exactly (base URL or none, sections
    /// in order with their aliases, default section), reports each change in the same words on every
    /// engine, removes one the catalogue no longer has (and an app's with the app), reads them back one by
    /// one and with the catalogue, and every change, and only a change, bumps the catalogue version.
    func webKiosks() async throws {
        let store = try await store()
        let quiosc = SampleCatalogue.quioscWebKiosk
        #expect(try await store.catalogue().webKiosks == [quiosc])
        #expect(try await store.webKiosk(appKey: "quiosc") == quiosc)
        #expect(try await store.webKiosk(appKey: "presencia") == nil, "none stored: Kiosk's own")
        #expect(try await store.webKiosk(appKey: "nope") == nil)

        var version = try await store.catalogueVersion()
        func bumped(_ what: String, _ expected: Bool = true) async throws {
            let now = try await store.catalogueVersion()
            #expect((now != version) == expected, "\(what): version \(version) -> \(now)")
            version = now
        }

        // A section added, an alias more, another default: one change, read back in order.
        var catalogue = try await store.catalogue()
        var edited = quiosc
        edited.sections[1].aliases.append("Perfil d'usuari")
        edited.sections.append(WebKiosk.Section(name: "cerca", path: "/cerca?hash=", aliases: ["buscar", "Recerca"]))
        edited.defaultSection = "compte"
        catalogue.webKiosks = [edited]
        #expect(try await store.syncCatalogue(catalogue, dryRun: true) == [WebKioskChange.set(edited)])
        try await bumped("a dry run", false)
        #expect(try await store.webKiosk(appKey: "quiosc") == quiosc, "a dry run changes nothing")
        #expect(try await store.syncCatalogue(catalogue, dryRun: false) == [
            "set web kiosk of app quiosc: base https://quiosc.example.cat; sections portada /?hash=, "
                + "compte /compte?hash= (fitxa, usuari, Perfil d'usuari), cerca /cerca?hash= (buscar, Recerca); default compte",
        ])
        try await bumped("a web kiosk changed")
        #expect(try await store.webKiosk(appKey: "quiosc") == edited)
        #expect(try await store.webKiosk(appKey: "quiosc")?.sections.map(\.name) == ["portada", "compte", "cerca"], "in order")
        #expect(try await store.syncCatalogue(catalogue, dryRun: false).isEmpty)
        try await bumped("the same again", false)

        // Kiosk's own base URL with sections of its own; sections kept in their order, not by name.
        let presencia = AppWebKiosk(appKey: "presencia", baseURL: nil,
                                    sections: [WebKiosk.Section(name: "zona", path: "/compte?hash="),
                                               WebKiosk.Section(name: "arxiu", path: "/?hash=", aliases: ["Hemeroteca"])])
        catalogue.webKiosks.append(presencia)
        #expect(try await store.syncCatalogue(catalogue, dryRun: false) == [WebKioskChange.set(presencia)])
        try await bumped("a web kiosk added")
        #expect(try await store.catalogue().webKiosks == [presencia, edited], "by app key")
        #expect(try await store.webKiosk(appKey: "presencia")?.baseURL == nil)

        // Removed: back to Kiosk's own; an app removed takes its web kiosk with it.
        catalogue.webKiosks = [presencia]
        #expect(try await store.syncCatalogue(catalogue, dryRun: false) == ["remove web kiosk of app quiosc (Kiosk's own)"])
        try await bumped("a web kiosk removed")
        #expect(try await store.webKiosk(appKey: "quiosc") == nil)
        catalogue.apps.removeAll { $0.key == "presencia" }
        catalogue.tariffLines.removeAll { $0.appKey == "presencia" }
        #expect(try await store.syncCatalogue(catalogue, dryRun: false) == ["remove app presencia"])
        try await bumped("an app removed")
        #expect(try await store.webKiosk(appKey: "presencia") == nil)
        #expect(try await store.catalogue().webKiosks.isEmpty)
    }
}
