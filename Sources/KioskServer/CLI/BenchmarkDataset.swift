import Foundation
import KioskModels
import KioskStorage
import KioskConfig
import KioskHTTP

/// The reference benchmark's data set (`../shared/bench/gen_data.py` writes `DIR/dataset.json`),
/// imported so `serve --data DIR` serves the same catalogue as the peer, for side-by-side runs.
///
/// The lines are made free: the benchmark's `getEdicio` calls carry a device id, not an identity key.
struct BenchmarkDataset: Decodable {
    struct PublicationRow: Decodable { var id: Int; var name: String }
    struct EditionRow: Decodable { var id: Int; var publication_id: Int; var name: String; var created_at: String }
    struct SectionRow: Decodable { var id: Int; var name: String }
    struct AppRow: Decodable { var app_key: String; var name: String; var demo_quota: Int }
    struct LineRow: Decodable { var app_key: String; var edition_id: Int; var sort_order: Int }
    struct IssueRow: Decodable { var edition_id: Int; var date: String }
    struct PageRow: Decodable {
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

    static func load(directory: String) throws -> BenchmarkDataset {
        let path = directory + "/dataset.json"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(file: path, key: "", problem: "cannot be read; run gen_data.py \(directory) first")
        }
        return try JSONDecoder().decode(BenchmarkDataset.self, from: data)
    }

    /// Applies the data set's catalogue to a configuration: its apps (all lines free, a web kiosk at
    /// `https://<app>.example.cat` with a `portada` section, so `hashQuiosc` has something to sign), editions,
    /// a database inside the data directory, and the directory itself as the editions directory
    /// (page paths in the data set are relative to it).
    func configure(_ configuration: inout KioskConfiguration, directory: String) {
        configuration.server.database = directory + "/kiosk-swift/kiosk.sqlite"
        configuration.server.editions = directory
        configuration.server.samples = nil
        configuration.publications = publications.map { publication in
            .init(id: publication.id, name: publication.name, editions: editions.filter { $0.publication_id == publication.id }.map {
                .init(id: $0.id, name: $0.name, created: IssueDate($0.created_at)!)
            })
        }
        configuration.apps = apps.map { app in
            .init(key: app.app_key, name: app.name, demoQuota: app.demo_quota,
                  webKiosk: .init(baseURL: "https://\(app.app_key).example.cat", sections: .init([.init(name: "portada", path: "/?hash=")])),
                  lines: tariff_lines.filter { $0.app_key == app.app_key }.map {
                      .init(edition: $0.edition_id, order: $0.sort_order, access: .free)
                  })
        }
    }

    /// Publishes the data set's issues into an empty database (rows only: the files are already in place).
    func importIssues(into store: any KioskDatabase, editions: String, logger: (String) -> Void) async throws {
        guard try await store.storedRevisions().isEmpty else { return }
        let sectionNames = Dictionary(uniqueKeysWithValues: sections.map { ($0.id, $0.name) })
        let pagesByIssue = Dictionary(grouping: pages) { "\($0.edition_id)/\($0.date)" }
        for (index, issue) in issues.enumerated() {
            // Page files are hard-linked into the revision folder, where Kiosk keeps an issue's files.
            let revision = "\(issue.edition_id)/\(issue.date)/r1"
            let pages = try (pagesByIssue["\(issue.edition_id)/\(issue.date)"] ?? []).map { row in
                let number = String(repeating: "0", count: max(0, 3 - String(row.number).count)) + String(row.number)
                let files = PageFiles(pdf: "\(revision)/pdf/\(number).pdf", jpg: "\(revision)/jpg/\(number).jpg",
                                      jpgA: "\(revision)/jpgA/\(number).jpg")
                for (source, target) in [(row.pdf_path, files.pdf), (row.jpg_path, files.jpg), (row.jpga_path, files.jpgA)] {
                    let destination = editions + "/" + target
                    try FileManager.default.createDirectory(atPath: (destination as NSString).deletingLastPathComponent,
                                                            withIntermediateDirectories: true)
                    if !FileManager.default.fileExists(atPath: destination) {
                        try FileManager.default.linkItem(atPath: editions + "/" + source, toPath: destination)
                    }
                }
                return PublishedPage(number: row.number, section: Section(id: row.section_id, name: sectionNames[row.section_id] ?? ""),
                                     files: files)
            }
            _ = try await store.publishIssue(editionID: issue.edition_id, date: IssueDate(issue.date)!, revision: 1,
                                             pages: pages, bundle: nil, at: 0)
            if (index + 1) % 500 == 0 || index + 1 == issues.count { logger("imported \(index + 1)/\(issues.count) issues") }
        }
    }
}
