/// A page of an issue being published: its number, section, files (relative to the editions directory)
/// and, when the publisher gave it, its text for search (`PageText.cleaned`).
public struct PublishedPage: Sendable, Hashable {
    public var number: Int
    public var section: Section
    public var files: PageFiles
    /// The page's text, indexed for `cercar` with the pages; nil when the publisher gave none.
    public var text: String?
    public init(number: Int, section: Section, files: PageFiles, text: String? = nil) {
        self.number = number; self.section = section; self.files = files; self.text = text
    }
}

/// Where a published issue stands: its current revision, and whether readers see it.
public struct IssueStanding: Sendable, Hashable {
    public var revision: Int
    public var withdrawn: Bool
    public init(revision: Int, withdrawn: Bool) { self.revision = revision; self.withdrawn = withdrawn }
}

/// What publishing needs from storage: issues appear, are replaced and withdrawn in one transaction each.
public protocol IssueRegistry: Sendable {
    func edition(id: Int) async throws -> Edition?
    /// The revision the next publication of (edition, date) must use: greater than any before it.
    func nextRevision(editionID: Int, date: IssueDate) async throws -> Int
    /// Makes the issue visible with exactly these pages (replacing any earlier revision) in one transaction,
    /// their texts replacing the issue's searchable text; a `bundle` given is counted as built at `time`.
    /// Returns the revision it replaced, if any, so its files can be removed.
    func publishIssue(editionID: Int, date: IssueDate, revision: Int, pages: [PublishedPage],
                      bundle: BundleInfo?, at time: Int64) async throws -> Int?
    /// Hides a published issue and moves its searchable text aside (kept, not searched, for a restore);
    /// false when there was none.
    func withdrawIssue(editionID: Int, date: IssueDate, at time: Int64) async throws -> Bool
    /// The issue's current revision and whether it is withdrawn; nil when it was never published.
    func issueStanding(editionID: Int, date: IssueDate) async throws -> IssueStanding?
    /// Makes the issue, withdrawn at `revision`, visible again with the text kept at its withdrawal, in
    /// one transaction; false when it is not withdrawn at that revision.
    func restoreIssue(editionID: Int, date: IssueDate, revision: Int) async throws -> Bool
    /// Records a bundle built at `time`, only if the issue is still at `revision`.
    func setBundle(editionID: Int, date: IssueDate, revision: Int, bundle: BundleInfo, at time: Int64) async throws
    /// Every (edition, date, revision) the database references, visible or withdrawn: what must stay on disk.
    func storedRevisions() async throws -> [(editionID: Int, date: IssueDate, revision: Int)]
}
