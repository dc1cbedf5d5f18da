import Foundation
import KioskModels

/// The reference benchmark's data set, as `../shared/bench/gen_data.py` writes it to `DIR/dataset.json`:
/// the peer's catalogue, issues and page files (paths relative to `DIR`).
struct ReferenceDataset: Decodable, Sendable {
    struct PublicationRow: Decodable, Sendable { var id: Int; var name: String }
    struct EditionRow: Decodable, Sendable { var id: Int; var publication_id: Int; var name: String; var created_at: String }
    struct SectionRow: Decodable, Sendable { var id: Int; var name: String }
    struct AppRow: Decodable, Sendable { var app_key: String; var name: String; var demo_quota: Int }
    struct LineRow: Decodable, Sendable { var app_key: String; var edition_id: Int; var sort_order: Int }
    struct IssueRow: Decodable, Sendable { var edition_id: Int; var date: String }
    struct PageRow: Decodable, Sendable {
        var edition_id: Int; var date: String; var number: Int; var section_id: Int
        var pdf_path: String; var jpg_path: String; var jpga_path: String
    }

    var publications: [PublicationRow]
    var editions: [EditionRow]
    var sections: [SectionRow]
    var apps: [AppRow]
    var tariff_lines: [LineRow]
    var issues: [IssueRow]
    var pages: [PageRow]

    struct Missing: Error, CustomStringConvertible {
        let path: String
        var description: String { "\(path) cannot be read; run gen_data.py on its directory first" }
    }

    static func load(directory: String) throws -> ReferenceDataset {
        let path = directory + "/dataset.json"
        guard let data = FileManager.default.contents(atPath: path) else { throw Missing(path: path) }
        return try JSONDecoder().decode(ReferenceDataset.self, from: data)
    }

    /// The app whose line offers each edition (the first such app, as the peer's `/zip` route picks it).
    var appKeysByEdition: [Int: String] {
        var keys: [Int: String] = [:]
        for app in apps {
            for line in tariff_lines where line.app_key == app.app_key && keys[line.edition_id] == nil {
                keys[line.edition_id] = app.app_key
            }
        }
        return keys
    }

    /// Publishes the data set's issues into an empty database: rows only, the page files hard-linked into
    /// the revision folders where Kiosk keeps an issue's files (`editions` is the data set's directory).
    func importIssues(into database: any KioskDatabase, editions: String, progress: (String) -> Void) async throws {
        guard try await database.storedRevisions().isEmpty else { return }
        let sectionNames = Dictionary(uniqueKeysWithValues: sections.map { ($0.id, $0.name) })
        let pagesByIssue = Dictionary(grouping: pages) { "\($0.edition_id)/\($0.date)" }
        for (index, issue) in issues.enumerated() {
            let revision = "\(issue.edition_id)/\(issue.date)/r1"
            let pages = try (pagesByIssue["\(issue.edition_id)/\(issue.date)"] ?? []).map { row in
                let number = String(repeating: "0", count: max(0, 3 - String(row.number).count)) + String(row.number)
                let files = PageFiles(pdf: "\(revision)/pdf/\(number).pdf", jpg: "\(revision)/jpg/\(number).jpg",
                                      jpgA: "\(revision)/jpgA/\(number).jpg")
                for (source, target) in [(row.pdf_path, files.pdf), (row.jpg_path, files.jpg), (row.jpga_path, files.jpgA)] {
                    try Self.link(editions + "/" + source, to: editions + "/" + target)
                }
                return PublishedPage(number: row.number, section: Section(id: row.section_id, name: sectionNames[row.section_id] ?? ""),
                                     files: files)
            }
            _ = try await database.publishIssue(editionID: issue.edition_id, date: IssueDate(issue.date)!, revision: 1,
                                                pages: pages, bundle: nil, at: 0)
            if (index + 1) % 500 == 0 || index + 1 == issues.count { progress("imported \(index + 1)/\(issues.count) issues") }
        }
    }

    private static func link(_ source: String, to destination: String) throws {
        try FileManager.default.createDirectory(atPath: (destination as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: destination) {
            try FileManager.default.linkItem(atPath: source, toPath: destination)
        }
    }
}
