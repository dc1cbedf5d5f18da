/// The files of one page, as paths relative to the editions directory.
public struct PageFiles: Sendable, Hashable, Codable {
    public var pdf: String
    /// Small image.
    public var jpg: String
    /// High-resolution image.
    public var jpgA: String
    public init(pdf: String, jpg: String, jpgA: String) { self.pdf = pdf; self.jpg = jpg; self.jpgA = jpgA }
}

/// A page of a published issue (*pàgina*).
public struct Page: Sendable, Hashable {
    public var id: Int
    public var number: Int
    public var section: Section
    public var files: PageFiles
    public init(id: Int, number: Int, section: Section, files: PageFiles) {
        self.id = id; self.number = number; self.section = section; self.files = files
    }
}

/// A built ZIP bundle of an issue.
public struct BundleInfo: Sendable, Hashable {
    /// Path relative to the editions directory.
    public var path: String
    public var size: Int64
    /// Lowercase hex SHA-256 of the whole file.
    public var sha256: String
    public init(path: String, size: Int64, sha256: String) { self.path = path; self.size = size; self.sha256 = sha256 }
}

/// A published issue in a listing: its day and its cover (first page's small image).
public struct IssueSummary: Sendable, Hashable {
    public var date: IssueDate
    /// The cover image, relative to the editions directory; nil when the issue has no page files.
    public var coverPath: String?
    public init(date: IssueDate, coverPath: String?) { self.date = date; self.coverPath = coverPath }
}

/// An edition with its newest published issue, as `getEdicions` lists it.
public struct EditionListing: Sendable, Hashable {
    public var offered: OfferedEdition
    public var newest: IssueSummary
    public init(offered: OfferedEdition, newest: IssueSummary) { self.offered = offered; self.newest = newest }
}

/// Everything a reader needs to download one issue.
public struct IssueContents: Sendable, Hashable {
    public var editionID: Int
    public var date: IssueDate
    /// Changes on every (re)publication; part of bundle names so a stale bundle is never served.
    public var revision: Int
    public var pages: [Page]
    public var bundle: BundleInfo?
    public init(editionID: Int, date: IssueDate, revision: Int, pages: [Page], bundle: BundleInfo?) {
        self.editionID = editionID; self.date = date; self.revision = revision; self.pages = pages; self.bundle = bundle
    }
}

/// Which way `getDarrersEdicio` walks from its date (`direccio`).
public enum ListingDirection: String, Sendable {
    /// On or before the date, newest first.
    case descending = "DESC"
    /// On or after the date, oldest first.
    case ascending = "ASC"
}
