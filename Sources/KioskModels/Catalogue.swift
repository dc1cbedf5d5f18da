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
/// The alphabets of names that travel in URLs, logs and headers.
public enum Identifier {
    /// An app key: 1-64 of ASCII letters, digits, `.`, `_` and `-` (it is a URL path segment).
    public static func isAppKey(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "-")
        }
    }
    public static let appKeyRule = "must be 1-64 characters of A-Z, a-z, 0-9, '.', '_' and '-'"

    /// An account's username: 1-128 characters, none of them a control character, a space, ':' or markup
    /// (`<`, `>`, `&`, `"`, `'`).
    public static func isUsername(_ text: String) -> Bool {
        (1...128).contains(text.unicodeScalars.count) && text.unicodeScalars.allSatisfy { scalar in
            !"<>&\"': ".unicodeScalars.contains(scalar) && !scalar.properties.isWhitespace
                && ![.control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .privateUse, .surrogate]
                    .contains(scalar.properties.generalCategory)
        }
    }
    public static let usernameRule = "must be 1-128 characters with no space, control character, ':', '<', '>', '&' or quote"
}

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
    /// What the apps sell in the stores, each app's in its order.
    public var products: [StoreProduct]
    public init(publications: [Publication], editions: [Edition], apps: [App], tariffLines: [TariffLine],
                accounts: [Account] = [], webKiosks: [AppWebKiosk] = [], products: [StoreProduct] = []) {
        self.publications = publications; self.editions = editions; self.apps = apps; self.tariffLines = tariffLines
        self.accounts = accounts; self.webKiosks = webKiosks; self.products = products
    }

    /// The products `appKey` sells, in its order.
    public func products(of appKey: String) -> [StoreProduct] { products.filter { $0.appKey == appKey } }

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
