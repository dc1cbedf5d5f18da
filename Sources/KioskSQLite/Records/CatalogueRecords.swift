import GRDB
import KioskModels
import KioskStoreSupport

/// A row of `publications`: a title.
struct PublicationRecord: Hashable, FetchableRecord, PersistableRecord, ListedColumns {
    static let databaseTableName = "publications"
    enum Columns: String, ColumnExpression, CaseIterable { case id, name }

    var id: Int
    var name: String

    init(id: Int, name: String) { self.id = id; self.name = name }

    init(_ publication: Publication) { id = publication.id; name = publication.name }

    init(row: Row) {
        id = row[Columns.id]; name = row[Columns.name]
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = id; container[Columns.name] = name
    }
}

/// A row of `editions`: a variant of a title sold on its own.
struct EditionRecord: Hashable, FetchableRecord, PersistableRecord, ListedColumns {
    static let databaseTableName = "editions"
    enum Columns: String, ColumnExpression, CaseIterable {
        case id, publicationID = "publication_id", name, createdOn = "created_on"
    }

    var id: Int
    var publicationID: Int
    var name: String
    /// `YYYY-MM-DD`.
    var createdOn: String

    init(id: Int, publicationID: Int, name: String, createdOn: String) {
        self.id = id; self.publicationID = publicationID; self.name = name; self.createdOn = createdOn
    }

    init(_ edition: Edition) {
        id = edition.id; publicationID = edition.publicationID; name = edition.name
        createdOn = edition.createdOn.description
    }

    init(row: Row) {
        id = row[Columns.id]; publicationID = row[Columns.publicationID]; name = row[Columns.name]
        createdOn = row[Columns.createdOn]
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = id; container[Columns.publicationID] = publicationID
        container[Columns.name] = name; container[Columns.createdOn] = createdOn
    }

    var edition: Edition { Edition(id: id, publicationID: publicationID, name: name, storedCreatedOn: createdOn) }
}

/// A row of `apps`: a reader app build and its demo quota.
struct AppRecord: Hashable, FetchableRecord, PersistableRecord, ListedColumns {
    static let databaseTableName = "apps"
    enum Columns: String, ColumnExpression, CaseIterable { case key, name, demoQuota = "demo_quota" }

    var key: String
    var name: String
    var demoQuota: Int

    init(_ app: App) { key = app.key; name = app.name; demoQuota = app.demoQuota }

    init(row: Row) {
        key = row[Columns.key]; name = row[Columns.name]; demoQuota = row[Columns.demoQuota]
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.key] = key; container[Columns.name] = name; container[Columns.demoQuota] = demoQuota
    }

    var app: App { App(key: key, name: name, demoQuota: demoQuota) }
}

/// A row of `tariff_lines`: an edition an app offers, in what order and on what terms.
struct TariffLineRecord: Hashable, FetchableRecord, PersistableRecord, ListedColumns {
    static let databaseTableName = "tariff_lines"
    enum Columns: String, ColumnExpression, CaseIterable {
        case appKey = "app_key", editionID = "edition_id", sortOrder = "sort_order", access
    }

    var appKey: String
    var editionID: Int
    var sortOrder: Int
    /// A `LineAccess` raw value.
    var access: String

    init(_ line: TariffLine) {
        appKey = line.appKey; editionID = line.editionID; sortOrder = line.order; access = line.access.rawValue
    }

    init(row: Row) {
        appKey = row[Columns.appKey]; editionID = row[Columns.editionID]; sortOrder = row[Columns.sortOrder]
        access = row[Columns.access]
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.appKey] = appKey; container[Columns.editionID] = editionID
        container[Columns.sortOrder] = sortOrder; container[Columns.access] = access
    }

    var line: TariffLine { TariffLine(appKey: appKey, editionID: editionID, order: sortOrder, storedAccess: access) }
}

/// A tariff line with its edition and title: `tariff_lines` (`t`) joined with `editions` (`e`) and
/// `publications` (`p`), the names they share aliased. Read without row scopes, which would cost more
/// than the query itself.
struct OfferedEditionRow: FetchableRecord {
    var line: TariffLineRecord
    var edition: EditionRecord
    var publication: PublicationRecord

    static let columns = TariffLineRecord.columnList(as: "t")
        + ", e.publication_id, e.name AS edition_name, e.created_on, p.name AS publication_name"

    init(row: Row) {
        line = TariffLineRecord(row: row)
        edition = EditionRecord(id: line.editionID, publicationID: row["publication_id"], name: row["edition_name"],
                                createdOn: row["created_on"])
        publication = PublicationRecord(id: edition.publicationID, name: row["publication_name"])
    }

    var offered: OfferedEdition {
        OfferedEdition(line: line.line, edition: edition.edition, publicationName: publication.name)
    }
}

/// An offered edition with its newest visible issue: the columns of `OfferedEditionRow`, then those of
/// `IssueRecord.Summary` for the issue aliased `i`.
struct EditionListingRow: FetchableRecord {
    var offered: OfferedEditionRow
    var newest: IssueRecord.Summary

    static let columns = OfferedEditionRow.columns + ", i.date, " + IssueRecord.Summary.coverColumn

    init(row: Row) { offered = OfferedEditionRow(row: row); newest = IssueRecord.Summary(row: row) }

    /// Nil when the issue's date is unreadable.
    var listing: EditionListing? { newest.summary.map { EditionListing(offered: offered.offered, newest: $0) } }
}

/// A row of `app_web_kiosks`: an app's web kiosk, its sections as JSON (`AppWebKiosk.storedSections`).
struct WebKioskRecord: Hashable, FetchableRecord, PersistableRecord, ListedColumns {
    static let databaseTableName = "app_web_kiosks"
    enum Columns: String, ColumnExpression, CaseIterable {
        case appKey = "app_key", baseURL = "base_url", defaultSection = "default_section", sections
    }

    var appKey: String
    var baseURL: String?
    var defaultSection: String?
    var sections: String

    init(_ kiosk: AppWebKiosk) {
        appKey = kiosk.appKey; baseURL = kiosk.baseURL; defaultSection = kiosk.defaultSection; sections = kiosk.storedSections
    }

    init(row: Row) {
        appKey = row[Columns.appKey]; baseURL = row[Columns.baseURL]; defaultSection = row[Columns.defaultSection]
        sections = row[Columns.sections]
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.appKey] = appKey; container[Columns.baseURL] = baseURL
        container[Columns.defaultSection] = defaultSection; container[Columns.sections] = sections
    }

    func webKiosk() throws -> AppWebKiosk {
        AppWebKiosk(appKey: appKey, baseURL: baseURL, sections: try AppWebKiosk.sections(stored: sections, appKey: appKey),
                    defaultSection: defaultSection)
    }
}

struct StoreProductRecord: Hashable, FetchableRecord, PersistableRecord, ListedColumns {
    static let databaseTableName = "store_products"
    enum Columns: String, ColumnExpression, CaseIterable {
        case appKey = "app_key", id, position, appleID = "apple_id", googleID = "google_id", kind, editions, credits, scope
    }

    var appKey: String
    var id: String
    var position: Int
    var appleID: String?
    var googleID: String?
    var kind: String
    var editions: String
    var credits: Int
    var scope: String

    init(_ product: StoreProduct, position: Int) {
        appKey = product.appKey; id = product.id; self.position = position
        appleID = product.storeIDs[.apple]; googleID = product.storeIDs[.google]
        kind = product.kind.rawValue; editions = product.storedEditions; credits = product.credits; scope = product.scope.rawValue
    }

    init(row: Row) {
        appKey = row[Columns.appKey]; id = row[Columns.id]; position = row[Columns.position]
        appleID = row[Columns.appleID]; googleID = row[Columns.googleID]; kind = row[Columns.kind]
        editions = row[Columns.editions]; credits = row[Columns.credits]; scope = row[Columns.scope]
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.appKey] = appKey; container[Columns.id] = id; container[Columns.position] = position
        container[Columns.appleID] = appleID; container[Columns.googleID] = googleID; container[Columns.kind] = kind
        container[Columns.editions] = editions; container[Columns.credits] = credits; container[Columns.scope] = scope
    }

    var product: StoreProduct {
        StoreProduct(appKey: appKey, id: id, appleID: appleID, googleID: googleID, storedKind: kind,
                     storedEditions: editions, credits: credits, storedScope: scope)
    }
}
