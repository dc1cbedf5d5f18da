import GRDB
import KioskIntegers
import KioskModels
import KioskStoreSupport

/// A row of `issues`: one issue of an edition, visible while `withdrawnAt` is nil.
struct IssueRecord: Hashable, FetchableRecord, PersistableRecord, ListedColumns {
    static let databaseTableName = "issues"
    enum Columns: String, ColumnExpression, CaseIterable {
        case editionID = "edition_id", date, revision, pageCount = "page_count", publishedAt = "published_at"
        case withdrawnAt = "withdrawn_at", bundlePath = "bundle_path", bundleSize = "bundle_size"
        case bundleSHA256 = "bundle_sha256"
    }

    var editionID: Int
    /// `YYYY-MM-DD`.
    var date: String
    var revision: Int
    var pageCount: Int
    var publishedAt: Int64
    var withdrawnAt: Int64?
    var bundlePath: String?
    var bundleSize: Int64?
    var bundleSHA256: String?

    init(editionID: Int, date: IssueDate, revision: Int, pageCount: Int, publishedAt: Int64, bundle: BundleInfo?) {
        self.editionID = editionID; self.date = date.description; self.revision = revision
        self.pageCount = pageCount; self.publishedAt = publishedAt; withdrawnAt = nil
        bundlePath = bundle?.path; bundleSize = bundle?.size; bundleSHA256 = bundle?.sha256
    }

    init(row: Row) {
        editionID = row[Columns.editionID]; date = row[Columns.date]; revision = row[Columns.revision]
        pageCount = row[Columns.pageCount]; publishedAt = row[Columns.publishedAt]; withdrawnAt = row[Columns.withdrawnAt]
        bundlePath = row[Columns.bundlePath]; bundleSize = row[Columns.bundleSize]; bundleSHA256 = row[Columns.bundleSHA256]
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.editionID] = editionID; container[Columns.date] = date; container[Columns.revision] = revision
        container[Columns.pageCount] = pageCount; container[Columns.publishedAt] = publishedAt
        container[Columns.withdrawnAt] = withdrawnAt; container[Columns.bundlePath] = bundlePath
        container[Columns.bundleSize] = bundleSize; container[Columns.bundleSHA256] = bundleSHA256
    }

    /// The bundle, when one was recorded.
    var bundle: BundleInfo? { BundleInfo(storedPath: bundlePath, size: bundleSize, sha256: bundleSHA256) }

    /// An issue as listings show it: its `date` and `cover_path`, the small image of its first page.
    struct Summary: FetchableRecord {
        var date: String
        var coverPath: String?

        /// The cover of the issue aliased `i`, for a SELECT list.
        static let coverColumn = """
            (SELECT pg.jpg_path FROM pages pg
             WHERE pg.edition_id = i.edition_id AND pg.date = i.date ORDER BY pg.number LIMIT 1) AS cover_path
            """

        init(row: Row) { date = row["date"]; coverPath = row["cover_path"] }

        /// Nil when the date is unreadable.
        var summary: IssueSummary? { IssueDate(date).map { IssueSummary(date: $0, coverPath: coverPath) } }
    }
}

/// A row of `pages`: one page of an issue and its files.
struct PageRecord: Hashable, FetchableRecord, MutablePersistableRecord, ListedColumns {
    static let databaseTableName = "pages"
    enum Columns: String, ColumnExpression, CaseIterable {
        case id, editionID = "edition_id", date, number, sectionID = "section_id"
        case pdfPath = "pdf_path", jpgPath = "jpg_path", jpgAPath = "jpga_path"
    }

    /// Nil until inserted.
    var id: Int?
    var editionID: Int
    /// `YYYY-MM-DD`.
    var date: String
    var number: Int
    var sectionID: Int
    var pdfPath: String
    var jpgPath: String
    var jpgAPath: String

    init(editionID: Int, date: IssueDate, page: PublishedPage) {
        id = nil; self.editionID = editionID; self.date = date.description; number = page.number
        sectionID = page.section.id; pdfPath = page.files.pdf; jpgPath = page.files.jpg; jpgAPath = page.files.jpgA
    }

    init(row: Row) {
        id = row[Columns.id]; editionID = row[Columns.editionID]; date = row[Columns.date]; number = row[Columns.number]
        sectionID = row[Columns.sectionID]; pdfPath = row[Columns.pdfPath]; jpgPath = row[Columns.jpgPath]
        jpgAPath = row[Columns.jpgAPath]
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = id; container[Columns.editionID] = editionID; container[Columns.date] = date
        container[Columns.number] = number; container[Columns.sectionID] = sectionID
        container[Columns.pdfPath] = pdfPath; container[Columns.jpgPath] = jpgPath; container[Columns.jpgAPath] = jpgAPath
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = Int(widening: inserted.rowID) }

    var files: PageFiles { PageFiles(pdf: pdfPath, jpg: jpgPath, jpgA: jpgAPath) }

    /// A page read back always has its id.
    func page(in section: Section) -> Page { Page(id: id ?? 0, number: number, section: section, files: files) }
}

/// A row of `sections`: a section of the issues, shared by every edition.
struct SectionRecord: Hashable, FetchableRecord, PersistableRecord, ListedColumns {
    static let databaseTableName = "sections"
    enum Columns: String, ColumnExpression, CaseIterable { case id, name }

    var id: Int
    var name: String

    init(id: Int, name: String) { self.id = id; self.name = name }

    init(row: Row) { id = row[Columns.id]; name = row[Columns.name] }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = id; container[Columns.name] = name
    }

    var section: Section { Section(id: id, name: name) }
}

/// A page with its section's name: `pages` (`pg`) joined with `sections` (`s`), read without row scopes
/// (a scope per page costs more than the query on a 40-page issue).
struct PageWithSectionRow: FetchableRecord {
    var page: PageRecord
    var section: SectionRecord

    static let columns = PageRecord.columnList(as: "pg") + ", s.name AS section_name"

    init(row: Row) {
        page = PageRecord(row: row)
        section = SectionRecord(id: page.sectionID, name: row["section_name"])
    }

    var issuePage: Page { page.page(in: section.section) }
}
