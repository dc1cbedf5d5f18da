import Foundation

/// An app's web kiosk as the catalogue keeps it (`web_kiosk` in the configuration file, or the console's
/// apps page): what `hashQuiosc` links to. An app with none keeps Kiosk's own (`own(baseURL:)`).
public struct AppWebKiosk: Sendable, Hashable {
    public var appKey: String
    /// Nil: Kiosk's own web kiosk of the app, at the public URL + `/web/<app key>`.
    public var baseURL: String?
    /// In order, each with its aliases. None with no `baseURL`: Kiosk's own sections (`ownSections`).
    public var sections: [WebKiosk.Section]
    /// The section opened for an unknown or empty name; nil: the first section.
    public var defaultSection: String?

    public init(appKey: String, baseURL: String? = nil, sections: [WebKiosk.Section] = [], defaultSection: String? = nil) {
        self.appKey = appKey; self.baseURL = baseURL; self.sections = sections; self.defaultSection = defaultSection
    }

    /// The sections of Kiosk's own web kiosk: the shelf and the reader's account page.
    public static let ownSections = [WebKiosk.Section(name: "portada", path: "/?hash="),
                                     WebKiosk.Section(name: "compte", path: "/compte?hash=")]

    /// Kiosk's own web kiosk, at `baseURL` (the public URL + `/web/<app key>`).
    public static func own(baseURL: String) -> WebKiosk { WebKiosk(baseURL: baseURL, sections: ownSections) }

    /// What `hashQuiosc` answers from; `ownBaseURL` is Kiosk's own web kiosk of the app, used without a `baseURL`.
    public func webKiosk(ownBaseURL: String) -> WebKiosk {
        WebKiosk(baseURL: baseURL ?? ownBaseURL, sections: sections.isEmpty && baseURL == nil ? Self.ownSections : sections,
                 defaultSection: defaultSection)
    }

    /// Whether it behaves exactly as having none: Kiosk's own base URL and sections, no aliases, no default.
    public var isOwn: Bool {
        baseURL == nil && defaultSection == nil && (sections.isEmpty || sections == Self.ownSections)
    }

    /// The sections as stored in the database (`app_web_kiosks.sections`, both engines): a JSON array
    /// of `{"aliases": [...], "name": ..., "path": ...}` in order.
    public var storedSections: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(sections)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }

    /// Sections read back from `storedSections`; throws `StoredWebKioskError` for anything else.
    public static func sections(stored text: String, appKey: String) throws -> [WebKiosk.Section] {
        do { return try JSONDecoder().decode([WebKiosk.Section].self, from: Data(text.utf8)) }
        catch { throw StoredWebKioskError(appKey: appKey) }
    }

    /// One line a person reads, the same in sync reports and the audit log, e.g.
    /// `base https://q.example.cat; sections portada /?hash=, compte /compte?hash= (fitxa, usuari); default portada`.
    public var summary: String {
        let sections = sections.map { section in
            "\(section.name) \(section.path)" + (section.aliases.isEmpty ? "" : " (\(section.aliases.joined(separator: ", ")))")
        }
        return "base \(baseURL ?? "(Kiosk's own)"); sections \(sections.isEmpty ? "(none)" : sections.joined(separator: ", "))"
            + (defaultSection.map { "; default \($0)" } ?? "")
    }
}

/// A stored web kiosk's sections that are not the JSON Kiosk writes.
public struct StoredWebKioskError: Error, Hashable, CustomStringConvertible {
    public var appKey: String
    public var description: String { "the stored web kiosk of app \(appKey) has unreadable sections" }
}

/// The lines a catalogue sync reports for web kiosks, the same on every engine.
public enum WebKioskChange {
    public static func set(_ kiosk: AppWebKiosk) -> String { "set web kiosk of app \(kiosk.appKey): \(kiosk.summary)" }
    public static func remove(appKey: String) -> String { "remove web kiosk of app \(appKey) (Kiosk's own)" }
}
