import KioskModels

/// The catalogue of the repository's configuration (`Config/kiosk.yaml`), for tests that do not read it
/// (KioskServerTests checks that the two agree).
///
/// El Quiosc (`quiosc`, 3 demos) offers Nacional (1, order 10) and Comarques Gironines (2, order 20) to
/// subscribers and Presència (8, order 30) free; the Presència app (`presencia`, 1 demo) offers 8 to
/// subscribers.
public enum SampleCatalogue {
    public static let catalogue = Catalogue(
        publications: [Publication(id: 1, name: "El Punt Avui"), Publication(id: 3, name: "Presència")],
        editions: [
            Edition(id: 1, publicationID: 1, name: "Nacional", createdOn: IssueDate("2010-03-01")!),
            Edition(id: 2, publicationID: 1, name: "Comarques Gironines", createdOn: IssueDate("2010-03-01")!),
            Edition(id: 8, publicationID: 3, name: "Presència", createdOn: IssueDate("2011-10-02")!),
        ],
        apps: [App(key: "quiosc", name: "El Quiosc", demoQuota: 3), App(key: "presencia", name: "Presència", demoQuota: 1)],
        tariffLines: [
            TariffLine(appKey: "quiosc", editionID: 1, order: 10, access: .subscribers),
            TariffLine(appKey: "quiosc", editionID: 2, order: 20, access: .subscribers),
            TariffLine(appKey: "quiosc", editionID: 8, order: 30, access: .free),
            TariffLine(appKey: "presencia", editionID: 8, order: 1, access: .subscribers),
        ],
        webKiosks: [quioscWebKiosk])

    /// El Quiosc's web kiosk as the catalogue keeps it; Presència has none (Kiosk's own).
    public static let quioscWebKiosk = AppWebKiosk(
        appKey: "quiosc", baseURL: "https://quiosc.example.cat",
        sections: [WebKiosk.Section(name: "portada", path: "/?hash="),
                   WebKiosk.Section(name: "compte", path: "/compte?hash=", aliases: ["fitxa", "usuari"])],
        defaultSection: "portada")

    /// The apps' web kiosks (`hashQuiosc`) of the same configuration.
    public static let webKiosks = [
        "quiosc": WebKiosk(
            baseURL: "https://quiosc.example.cat",
            sections: [WebKiosk.Section(name: "portada", path: "/?hash="),
                       WebKiosk.Section(name: "compte", path: "/compte?hash=", aliases: ["fitxa", "usuari"])],
            defaultSection: "portada"),
        // No web_kiosk in the file: Kiosk's own, at the default public URL.
        "presencia": WebKiosk(baseURL: "http://127.0.0.1:8080/web/presencia",
                              sections: [WebKiosk.Section(name: "portada", path: "/?hash="),
                                         WebKiosk.Section(name: "compte", path: "/compte?hash=")]),
    ]

    /// 2025-06-01 12:00 UTC, where the tests' clocks start.
    public static let startTime: Int64 = 1_748_779_200
}
