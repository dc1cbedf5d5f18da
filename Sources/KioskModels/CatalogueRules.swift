import Foundation
import KioskIntegers

/// A catalogue rule broken: what it is about and what is wrong, in an operator's words. The configuration
/// file adds its key path (`apps[0].name`), the console shows `description`.
public struct CatalogueProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where in the catalogue: an index into its lists, or the app whose web kiosk it is.
    public enum Place: Sendable, Hashable {
        case publication(Int)
        case edition(Int)
        case app(Int)
        case tariffLine(Int)
        case webKiosk(appKey: String)
        case account(Int)
        /// A product of an app, by its place among that app's products.
        case product(appKey: String, index: Int)
    }

    public var place: Place
    /// The field, as the configuration file names it: `id`, `name`, `key`, `demo_quota`, `edition`,
    /// `base_url`, `sections`, `sections.<name>`, `default_section`, `aliases.<section>`, `username`,
    /// `password_hash`, `publications`, `editions`.
    public var field: String
    /// What it is about, e.g. `publication 3`, `app quiosc`, `the line of edition 7 in app quiosc`.
    public var subject: String
    /// What is wrong, e.g. `must be 1 to 200 characters on one line`.
    public var rule: String

    public init(_ place: Place, field: String, subject: String, rule: String) {
        self.place = place; self.field = field; self.subject = subject; self.rule = rule
    }

    /// `App quiosc, demo quota: must be 0 or more`.
    public var description: String {
        let words: String
        if field.hasPrefix("sections.") {
            words = "section \"\(field.dropFirst("sections.".count))\""
        } else if field.hasPrefix("aliases.") {
            words = "aliases of section \"\(field.dropFirst("aliases.".count))\""
        } else {
            words = field.replacingUnderscores
        }
        return subject.prefix(1).uppercased() + subject.dropFirst() + ", " + words + ": " + rule
    }
}

extension Catalogue {
    /// The first rule the catalogue breaks, checked in the file's order: publications and their editions,
    /// apps with their lines, web kiosks and products, then accounts.
    public func validate() throws(CatalogueProblem) {
        var publicationIDs = Set<Int>()
        for (index, publication) in publications.enumerated() {
            let subject = "publication \(publication.id)"
            guard publication.id > 0, publication.id <= Int(widening: Int32.max), publicationIDs.insert(publication.id).inserted else {
                throw CatalogueProblem(.publication(index), field: "id", subject: subject,
                                       rule: "must be a positive id used once, got \(publication.id)")
            }
            guard CatalogueName.isValid(publication.name) else {
                throw CatalogueProblem(.publication(index), field: "name", subject: subject, rule: CatalogueName.rule)
            }
        }
        var editionIDs = Set<Int>()
        for (index, edition) in editions.enumerated() {
            let subject = "edition \(edition.id)"
            guard edition.id > 0, edition.id <= Int(widening: Int32.max), editionIDs.insert(edition.id).inserted else {
                throw CatalogueProblem(.edition(index), field: "id", subject: subject, rule: "must be a positive id used once, got \(edition.id)")
            }
            guard publicationIDs.contains(edition.publicationID) else {
                throw CatalogueProblem(.edition(index), field: "publication", subject: subject,
                                       rule: "publication \(edition.publicationID) is not defined")
            }
            guard CatalogueName.isValid(edition.name) else {
                throw CatalogueProblem(.edition(index), field: "name", subject: subject, rule: CatalogueName.rule)
            }
        }
        var appKeys = Set<String>()
        for (index, app) in apps.enumerated() {
            let subject = "app \(app.key)"
            guard Identifier.isAppKey(app.key) else {
                throw CatalogueProblem(.app(index), field: "key", subject: "an app", rule: Identifier.appKeyRule)
            }
            guard appKeys.insert(app.key).inserted else {
                throw CatalogueProblem(.app(index), field: "key", subject: subject, rule: "\"\(app.key)\" is used twice")
            }
            guard CatalogueName.isValid(app.name) else {
                throw CatalogueProblem(.app(index), field: "name", subject: subject, rule: CatalogueName.rule)
            }
            guard (0...1_000_000).contains(app.demoQuota) else {
                throw CatalogueProblem(.app(index), field: "demo_quota", subject: subject, rule: "must be 0 to 1000000")
            }
        }
        var lines = Set<[String]>()
        for (index, line) in tariffLines.enumerated() {
            let subject = "the line of edition \(line.editionID) in app \(line.appKey)"
            guard (Int(widening: Int32.min)...Int(widening: Int32.max)).contains(line.order) else {
                throw CatalogueProblem(.tariffLine(index), field: "order", subject: subject,
                                       rule: "must be a whole number from \(Int32.min) to \(Int32.max)")
            }
            guard editionIDs.contains(line.editionID) else {
                throw CatalogueProblem(.tariffLine(index), field: "edition", subject: subject,
                                       rule: "edition \(line.editionID) is not defined under publications")
            }
            guard lines.insert([line.appKey, String(line.editionID)]).inserted else {
                throw CatalogueProblem(.tariffLine(index), field: "edition", subject: subject,
                                       rule: "edition \(line.editionID) has two lines in app \(line.appKey)")
            }
        }
        for kiosk in webKiosks { try kiosk.validate() }
        for (index, product) in products.enumerated() where !appKeys.contains(product.appKey) {
            throw CatalogueProblem(.product(appKey: product.appKey, index: index), field: "id",
                                   subject: "product \(product.id)", rule: "app \(product.appKey) is not defined")
        }
        try products.validate(in: self)
        try validateAccounts(publicationIDs: publicationIDs, editionIDs: editionIDs)
    }

    private func validateAccounts(publicationIDs: Set<Int>, editionIDs: Set<Int>) throws(CatalogueProblem) {
        var seen = Set<[String]>()
        for (index, account) in accounts.enumerated() {
            let subject = "\(account.kind.words) \(account.username)"
            if let (field, rule) = Account.credentialProblem(username: account.username, passwordHash: account.passwordHash) {
                throw CatalogueProblem(.account(index), field: field, subject: field == "username" ? "a \(account.kind.words)" : subject, rule: rule)
            }
            guard seen.insert([account.kind.rawValue, account.username]).inserted else {
                throw CatalogueProblem(.account(index), field: "username", subject: subject, rule: "\"\(account.username)\" is listed twice")
            }
            for id in account.scope?.publications.sorted() ?? [] where !publicationIDs.contains(id) {
                throw CatalogueProblem(.account(index), field: "publications", subject: subject,
                                       rule: "publication \(id) is not defined under publications")
            }
            for id in account.scope?.editions.sorted() ?? [] where !editionIDs.contains(id) {
                throw CatalogueProblem(.account(index), field: "editions", subject: subject,
                                       rule: "edition \(id) is not defined under publications")
            }
        }
    }
}

extension Account {
    /// The first rule a credential breaks, as (field, rule): a username of the allowed alphabet, a bcrypt hash.
    public static func credentialProblem(username: String, passwordHash: String) -> (field: String, rule: String)? {
        guard Identifier.isUsername(username) else { return ("username", Identifier.usernameRule) }
        guard case .bcrypt? = StoredPasswordHash(passwordHash) else {
            return ("password_hash", "must be a bcrypt hash ($2a$/$2b$/$2y$); make one with `KioskServer hash-password`")
        }
        return nil
    }
}

extension AppWebKiosk {
    /// The rules of an app's web kiosk: an `http(s)` base URL, sections named once (whatever their case),
    /// a default that is one of them, aliases that name no other section.
    public func validate() throws(CatalogueProblem) {
        func problem(_ field: String, _ rule: String) -> CatalogueProblem {
            CatalogueProblem(.webKiosk(appKey: appKey), field: field, subject: "the web kiosk of app \(appKey)", rule: rule)
        }
        if let baseURL, !(baseURL.hasPrefix("http://") || baseURL.hasPrefix("https://")) {
            throw problem("base_url", "must start with http:// or https://")
        }
        if let baseURL, baseURL.unicodeScalars.contains(where: CatalogueName.breaksURL) {
            throw problem("base_url", "must not contain spaces or control characters")
        }
        var owner: [String: String] = [:]   // folded name -> section
        for section in sections {
            guard !section.name.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw problem("sections", "a section name must not be empty")
            }
            guard !section.path.unicodeScalars.contains(where: CatalogueName.breaksURL),
                  !section.name.unicodeScalars.contains(where: CatalogueName.breaksLine) else {
                throw problem("sections.\(section.name)", "must not contain control characters, and its path no spaces")
            }
            guard owner.updateValue(section.name, forKey: section.name.lowercased()) == nil else {
                throw problem("sections.\(section.name)", "is listed twice (names match whatever their case)")
            }
        }
        if let name = defaultSection, !sections.contains(where: { $0.name == name }) {
            throw problem("default_section", "\"\(name)\" is not one of the sections")
        }
        for section in sections.sorted(by: { $0.name < $1.name }) {
            for name in section.aliases {
                guard !name.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw problem("aliases.\(section.name)", "an alias must not be empty")
                }
                if let other = owner.updateValue(section.name, forKey: name.lowercased()), other != section.name {
                    throw problem("aliases.\(section.name)", "\"\(name)\" already names section \"\(other)\"")
                }
            }
        }
    }
}

/// What readers see as a title, an edition's or an app's name: some text, on one line, not too long.
public enum CatalogueName {
    public static func isValid(_ name: String) -> Bool {
        !name.trimmingCharacters(in: .whitespaces).isEmpty && name.count <= 200 && !name.unicodeScalars.contains(where: breaksLine)
    }

    /// A character that breaks a line or hides how it reads: control characters, line and paragraph
    /// separators, bidirectional overrides and other format characters.
    public static func breaksLine(_ scalar: Unicode.Scalar) -> Bool {
        [.control, .lineSeparator, .paragraphSeparator, .format].contains(scalar.properties.generalCategory)
    }

    /// A character a URL or path never holds as such: those that break a line, and white space.
    public static func breaksURL(_ scalar: Unicode.Scalar) -> Bool {
        breaksLine(scalar) || scalar.properties.isWhitespace
    }

    public static let rule = "must be 1 to 200 characters on one line"
}

extension AccountKind {
    /// How an operator calls the kind: `API client`, `publisher`, `operator`.
    var words: String {
        switch self {
        case .apiClient: "API client"
        case .publisher: "publisher"
        case .operator: "operator"
        }
    }
}

extension String {
    fileprivate var replacingUnderscores: String {
        split(separator: "_").map { $0 == "url" ? "URL" : String($0) }.joined(separator: " ")
    }
}
