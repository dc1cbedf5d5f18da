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
    var store: Store
    /// Webhook endpoints disabled, or failing for over a day.
    var webhooks: [Webhook]
    var hasWebhookTroubles: Bool
    struct Webhook {
        var name, url: String
        /// Why it is disabled; nil while enabled.
        var disabled: String?
        var failingSince: String?
    }

    /// The period's store purchases (`KioskStatistics.StorePurchases`).
    struct Store {
        /// Purchases of a day by kind; the last row (`isTotal`) sums the period.
        struct Day { var day: String; var issue, credits, subscription, total: Int; var isTotal: Bool }
        struct Revenue { var currency: String; var payments: Int; var amount: String }
        struct Conversion { var app: String; var devices, purchased: Int; var conversion: String }
        var days: [Day]
        var activeSubscriptions, refunds: Int
        var revenue: [Revenue]
        var conversions: [Conversion]
    }
}

struct AppsView {
    struct Line { var edition: Int; var name: String; var order: Int; var free: Bool; var editable: Bool }
    struct Edition { var id: Int; var name: String }
    struct App {
        var key, name: String; var demoQuota: Int; var editable: Bool; var lines: [Line]; var otherEditions: [Edition]
        var webKiosk: WebKiosk
        var products: Products
    }
    /// A choice of a `<select>`.
    struct Option { var value, label: String; var selected: Bool }
    /// A row of the products form; `isNew`: the empty last row, to add one.
    struct Product {
        var index: Int; var id, appleID, googleID: String; var kinds: [Option]; var editions, credits: String
        var scopes: [Option]; var summary: String; var isNew, editable: Bool
    }
    struct Products { var editable, hasProducts: Bool; var rows: [Product] }
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

struct PurchasesView {
    struct Purchase {
        var app, store, originalID, product, kind, holder, state: String
        /// `purchase_active`, `purchase_expired` or `purchase_revoked`.
        var stateName: String
        var accessEnd, creditsLeft, issues, devices, url: String
    }
    var reader, device, id: String
    var apps: [AppsView.Option]
    var searched, hasPurchases: Bool
    var purchases: [Purchase]
    /// The list shows the newest `purchaseListLimit` only.
    var limited: Bool
}

struct PurchaseView {
    struct Device { var key: String; var releasable: Bool }
    struct Payment { var id, paidAt, period, price: String; var revoked: Bool }
    /// `subtype` nil when the store gave none.
    struct Notice { var received, type: String; var subtype: String?; var outcome, id: String }
    var purchase: PurchasesView.Purchase
    var environment, accountToken, created, updated: String
    var revokedByOperator: Bool
    /// Whether the operator's role may act on it (the forms are shown).
    var mayAct: Bool
    var devices: [Device]
    var payments: [Payment]
    var notices: [Notice]
}
