/// A page of an issue being published: its number, section and files (relative to the editions directory).
public struct PublishedPage: Sendable, Hashable {
    public var number: Int
    public var section: Section
    public var files: PageFiles
    public init(number: Int, section: Section, files: PageFiles) {
        self.number = number; self.section = section; self.files = files
    }
}

/// What publishing needs from storage: issues appear, are replaced and withdrawn in one transaction each.
public protocol IssueRegistry: Sendable {
    func edition(id: Int) async throws -> Edition?
    /// The revision the next publication of (edition, date) must use: greater than any before it.
    func nextRevision(editionID: Int, date: IssueDate) async throws -> Int
    /// Makes the issue visible with exactly these pages (replacing any earlier revision) in one transaction.
    /// Returns the revision it replaced, if any, so its files can be removed.
    func publishIssue(editionID: Int, date: IssueDate, revision: Int, pages: [PublishedPage],
                      bundle: BundleInfo?, at time: Int64) async throws -> Int?
    /// Hides a published issue; false when there was none.
    func withdrawIssue(editionID: Int, date: IssueDate, at time: Int64) async throws -> Bool
    /// Records a built bundle, only if the issue is still at `revision`.
    func setBundle(editionID: Int, date: IssueDate, revision: Int, bundle: BundleInfo) async throws
    /// Every (edition, date, revision) the database references, visible or withdrawn: what must stay on disk.
    func storedRevisions() async throws -> [(editionID: Int, date: IssueDate, revision: Int)]
}
