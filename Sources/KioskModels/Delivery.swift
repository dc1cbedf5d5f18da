/// Turns a file under the editions directory into a time-limited signed URL a reader can fetch.
public protocol LinkSigning: Sendable {
    /// An absolute URL for `relativePath` (relative to the editions directory), valid for the configured lifetime.
    func link(to relativePath: String, now: Int64) -> String
    /// Links signed at two moments with the same value here are the same link (the expiry bucket).
    func linkBucket(now: Int64) -> Int64
}

/// Gives an issue's ZIP bundle, building it (once, whoever asks) when it is missing.
public protocol IssueBundles: Sendable {
    func bundle(for contents: IssueContents, offered: OfferedEdition) async throws -> BundleInfo
}

/// An app's web kiosk, for `hashQuiosc`: its base URL and the paths of its sections (`seccioQ`).
///
/// The apps send a section name compiled into each build, and not every value they send is known, so a
/// name resolves leniently: case-insensitively, through aliases, and to the default section otherwise.
public struct WebKiosk: Sendable, Hashable {
    /// One section: its name and the path appended to `baseURL` (the hash goes after it, e.g. `/compte?hash=`).
    public struct Section: Sendable, Hashable, Codable {
        public var name: String
        public var path: String
        /// Other names the apps send for this section.
        public var aliases: [String]
        public init(name: String, path: String, aliases: [String] = []) {
            self.name = name; self.path = path; self.aliases = aliases
        }
    }

    /// Where a `seccioQ` led.
    public struct Resolution: Sendable, Hashable {
        public var section: Section
        /// False when the name matched no section or alias and the default section was used.
        public var matched: Bool
    }

    public var baseURL: String
    /// In the configuration's order.
    public var sections: [Section]
    /// The section opened for an unknown or empty name; nil: the first section.
    public var defaultSection: String?
    private let byName: [String: Int]

    public init(baseURL: String, sections: [Section], defaultSection: String? = nil) {
        self.baseURL = baseURL; self.sections = sections; self.defaultSection = defaultSection
        var byName: [String: Int] = [:]
        for (index, section) in sections.enumerated() {
            for name in [section.name] + section.aliases where byName[Self.fold(name)] == nil {
                byName[Self.fold(name)] = index
            }
        }
        self.byName = byName
    }

    /// The section named `name` (any case, or an alias), or the default section, marked unmatched.
    public func resolve(_ name: String) -> Resolution {
        if let index = byName[Self.fold(name)] { return Resolution(section: sections[index], matched: true) }
        let fallback = defaultSection.flatMap { byName[Self.fold($0)] }.map { sections[$0] }
            ?? sections.first ?? Section(name: "", path: "")
        return Resolution(section: fallback, matched: false)
    }

    /// The link `hashQuiosc` answers: base URL, the section's path, then the hash.
    public func url(section: Section, hash: String) -> String { baseURL + section.path + hash }

    static func fold(_ name: String) -> String { name.lowercased() }

    public static func == (lhs: WebKiosk, rhs: WebKiosk) -> Bool {
        lhs.baseURL == rhs.baseURL && lhs.sections == rhs.sections && lhs.defaultSection == rhs.defaultSection
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(baseURL); hasher.combine(sections) }
}
