/// A title, e.g. "El Punt Avui" (the seed's *publicació*).
public struct Publication: Sendable, Hashable, Codable {
    public var id: Int
    public var name: String
    public init(id: Int, name: String) { self.id = id; self.name = name }
}

/// A variant of a title sold on its own, e.g. "Comarques Gironines" (*edició*, `EDICIO_ID`).
public struct Edition: Sendable, Hashable, Codable {
    public var id: Int
    public var publicationID: Int
    public var name: String
    /// The day the edition was created (`data_alta` on the wire).
    public var createdOn: IssueDate
    public init(id: Int, publicationID: Int, name: String, createdOn: IssueDate) {
        self.id = id; self.publicationID = publicationID; self.name = name; self.createdOn = createdOn
    }
}

/// A section of an issue, e.g. "Esports" (*secció*).
public struct Section: Sendable, Hashable, Codable {
    public var id: Int
    public var name: String
    public init(id: Int, name: String) { self.id = id; self.name = name }
}

/// One reader app build (`APP_KEY`): a multi-title kiosk or a one-title app.
public struct App: Sendable, Hashable, Codable {
    public var key: String
    public var name: String
    /// Free downloads a device gets on this app.
    public var demoQuota: Int
    public init(key: String, name: String, demoQuota: Int) {
        self.key = key; self.name = name; self.demoQuota = demoQuota
    }
}

/// On what terms a tariff line offers its edition.
public enum LineAccess: String, Sendable, Hashable, Codable, CaseIterable {
    /// Anyone may download every issue.
    case free
    /// Subscribers (or a demo grant) only.
    case subscribers
}

/// An edition an app offers, in what order and on what terms (`APPS_LINIES_TARIFA`).
public struct TariffLine: Sendable, Hashable, Codable {
    public var appKey: String
    public var editionID: Int
    /// The line's order number (`ordre`).
    public var order: Int
    public var access: LineAccess
    public init(appKey: String, editionID: Int, order: Int, access: LineAccess) {
        self.appKey = appKey; self.editionID = editionID; self.order = order; self.access = access
    }
}

/// The catalogue an operator configures: synced into the store on start and on reload.
public struct Catalogue: Sendable, Hashable {
    public var publications: [Publication]
    public var editions: [Edition]
    public var apps: [App]
    public var tariffLines: [TariffLine]
    /// API clients, publishers and operators: kept and owned like the rest of the catalogue.
    public var accounts: [Account]
    /// The apps' web kiosks, at most one an app; an app without one keeps Kiosk's own.
    public var webKiosks: [AppWebKiosk]
    public init(publications: [Publication], editions: [Edition], apps: [App], tariffLines: [TariffLine],
                accounts: [Account] = [], webKiosks: [AppWebKiosk] = []) {
        self.publications = publications; self.editions = editions; self.apps = apps; self.tariffLines = tariffLines
        self.accounts = accounts; self.webKiosks = webKiosks
    }

    /// The app's stored web kiosk, nil when it keeps Kiosk's own.
    public func webKiosk(of appKey: String) -> AppWebKiosk? { webKiosks.first { $0.appKey == appKey } }
}

/// An edition as an app offers it: the line, the edition and its title.
public struct OfferedEdition: Sendable, Hashable {
    public var line: TariffLine
    public var edition: Edition
    public var publicationName: String
    public init(line: TariffLine, edition: Edition, publicationName: String) {
        self.line = line; self.edition = edition; self.publicationName = publicationName
    }
}
