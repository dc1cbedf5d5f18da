/// What the console's templates read (plain values: Mustache looks names up by reflection).
struct DashboardView {
    struct Row { var name: String; var downloads: Int }
    struct Demo { var app: String; var devices, used, converted: Int; var conversion: String }
    var from, to: String
    var total: Int
    /// Trusted SVG drawn by `DownloadsChart` (numbers and escaped text only), inserted unescaped.
    var chart: String
    var byApp, byOS: [Row]
    var demos: [Demo]
    var activeDevices, topIssues: [Row]
    /// The period's failed sign-ins on record, and bundles built with their megabytes.
    var signInFailures, bundleBuilds: Int
    var bundleMegabytes: String
}

struct AppsView {
    struct Line { var edition: Int; var name: String; var order: Int; var free: Bool; var editable: Bool }
    struct Edition { var id: Int; var name: String }
    struct App {
        var key, name: String; var demoQuota: Int; var editable: Bool; var lines: [Line]; var otherEditions: [Edition]
        var webKiosk: WebKiosk
    }
    /// A row of the web kiosk form; `isNew`: the empty last row, to add a section.
    struct Section { var index: Int; var name, path, aliases: String; var isDefault, isNew, editable: Bool }
    /// `baseURL` empty: Kiosk's own, at `ownURL`.
    struct WebKiosk { var baseURL, ownURL: String; var noDefault, editable: Bool; var sections: [Section] }
    struct EditionRow { var id: Int; var name, createdOn: String; var editable: Bool }
    struct Publication { var id: Int; var name: String; var editable: Bool; var editions: [EditionRow] }
    /// The publications and their editions; `today` is the new edition's default creation day.
    struct Catalogue { var editable: Bool; var today: String; var publications: [Publication] }
    var editable: Bool
    var catalogue: Catalogue
    var apps: [App]
}

struct IssuesView {
    struct Edition { var id: Int; var name: String; var selected: Bool }
    struct Issue {
        var date: String; var pages: Int; var revision: Int; var bundleSize, sha256: String
        /// When it was withdrawn; nil while readers see it.
        var withdrawn: String?
    }
    var editions: [Edition]
    var edition: Int
    var today: String
    var issues: [Issue]
}

struct ConsoleIssueView {
    struct Page { var number: Int; var section, image, largeImage, pdf: String }
    var edition: Int
    var date: String
    var revision: Int
    var backURL: String
    var bundleURL: String?
    var pages: [Page]
}

struct ReadersView {
    struct Reader { var username, name, email, subscriptions: String }
    var query: String
    var searched: Bool
    var readers: [Reader]
    var demos: String?
    var apps: [String]
    var editions: [Int]
}

struct AuditView {
    struct Entry { var when, who, what, subject, before, after: String }
    var entries: [Entry]
}
