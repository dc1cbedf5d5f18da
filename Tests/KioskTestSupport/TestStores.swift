import Foundation
import KioskModels
import KioskSQLite

/// Stores on fresh files.
public enum TestStores {
    /// A migrated SQLite store in a new temporary directory.
    public static func sqlite() throws -> SQLiteKioskStore {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try SQLiteKioskStore(path: directory.path + "/kiosk.sqlite")
    }
}

extension IssueRegistry {
    /// Publishes an issue of `pages` pages straight into the registry (no files): page 1 in section 1
    /// "Portada", the others in 2 "Política", files and bundle under `<edition>/<date>/r<revision>/`.
    /// Returns the revision.
    @discardableResult
    public func publishTestIssue(edition: Int, date: String, pages: Int = 3, bundle: Bool = true,
                                 at time: Int64 = SampleCatalogue.startTime) async throws -> Int {
        let day = IssueDate(date)!
        let revision = try await nextRevision(editionID: edition, date: day)
        _ = try await publishIssue(editionID: edition, date: day, revision: revision,
                                   pages: TestIssues.pages(edition: edition, date: day, revision: revision, count: pages),
                                   bundle: bundle ? TestIssues.bundle(edition: edition, date: day, revision: revision) : nil,
                                   at: time)
        return revision
    }
}

/// The pages and bundle `publishTestIssue` records.
public enum TestIssues {
    public static func pages(edition: Int, date: IssueDate, revision: Int, count: Int) -> [PublishedPage] {
        guard count > 0 else { return [] }
        let folder = "\(edition)/\(date)/r\(revision)"
        return (1...count).map { number in
            let name = String(format: "%03d", number)
            return PublishedPage(number: number,
                                 section: number == 1 ? Section(id: 1, name: "Portada") : Section(id: 2, name: "Política"),
                                 files: PageFiles(pdf: "\(folder)/pdf/\(name).pdf", jpg: "\(folder)/jpg/\(name).jpg",
                                                  jpgA: "\(folder)/jpgA/\(name).jpg"))
        }
    }

    public static func bundle(edition: Int, date: IssueDate, revision: Int) -> BundleInfo {
        BundleInfo(path: "\(edition)/\(date)/r\(revision)/\(edition)-\(date).zip", size: 10_000 + Int64(revision),
                   sha256: String(repeating: String(revision % 10), count: 64))
    }
}
