/// What the web templates read. Mustache looks names up by reflection, so these are plain values.
struct PageFrame {
    struct Reader { var name: String; var csrf: String }
    var lang: String
    /// The page's words in its language (`{{t.key}}`).
    var t: [String: String]
    var title: String
    var appName: String
    /// `/web/{app}`.
    var base: String
    var reader: Reader?
    var notice: String?
    /// The text of the search box.
    var query: String
    var content: Any?
}

struct ShelfView {
    struct Edition { var title, edition, date, coverURL, archiveURL, issueURL, access: String }
    var editions: [Edition]
}

struct ArchiveView {
    struct Issue { var date, url, coverURL: String }
    var title, edition, monthLabel: String
    var previousURL, previousLabel, nextURL, nextLabel: String?
    var issues: [Issue]
}

struct IssueView {
    struct Page { var number: Int; var section, jpgURL, jpgAURL, pdfURL: String }
    var title, edition, date, archiveURL, bundleURL, bundleSize, bundleSHA256: String
    var pages: [Page]
}

struct AccountView {
    struct Subscription { var edition, until: String }
    /// A store purchase of the reader's in this app; `details`: until when, the credits left, or the issues bought.
    struct Purchase { var product, kind, state, stateName, details: String }
    var name, username, email: String
    var hasSubscriptions, hasPurchases: Bool
    var purchases: [Purchase]
    /// The "sign out everywhere" form's token.
    var csrf: String
    var subscriptions: [Subscription]
}

struct MessageView {
    var heading: String
    var hint: String?
    var base: String
}

struct SearchView {
    struct Hit {
        var title, edition, date: String; var page: Int; var url: String; var fragment: String
        /// Stored (templates read stored properties): false on issues the reader may not open.
        var hasExcerpt: Bool
    }
    var query: String
    var problem: String?
    var hits: [Hit]
}
