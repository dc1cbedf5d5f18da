import KioskTestSupport
import Foundation
@testable import KioskEditions
import KioskModels
import KioskSQLite
import Testing

/// A page's optional `text` in `issue.json`: read and checked with the other files, indexed with the
/// pages, never copied into the revision folder.
@Suite struct PageTextPublishTests {
    let day = TestEnvironment.day

    func search(_ store: SQLiteKioskStore, _ text: String) async throws -> [Int] {
        try await store.searchPages(PageSearch(query: try SearchQuery(parsing: text), editionIDs: [1], limit: 20)).map(\.pageNumber)
    }

    @Test func textsArePublishedWithThePagesAndNotKeptOnDisk() async throws {
        let env = try await TestEnvironment()
        var pages = Fixtures.pages(3)
        pages[1].text = "La Presència del Ple\u{0}municipal"
        let source = try await Fixtures.writeFolder(env.temp.sub("in"), pages: pages)
        _ = try await env.publisher.publish(editionID: 1, date: day, from: source)
        #expect(try await search(env.store, "presencia") == [2])
        #expect(try await search(env.store, "\"ple municipal\"") == [2], "a control character became a space")
        #expect(!env.tree().contains { $0.contains("txt") }, "the text lives in the database only")
        // Republished without texts: the old text is gone.
        _ = try await env.publisher.publish(editionID: 1, date: day, from: Fixtures.writeFolder(env.temp.sub("again"), pages: Fixtures.pages(3)))
        #expect(try await search(env.store, "presencia") == [])
    }

    @Test func badTextFilesAreRefusedByFileAndPage() async throws {
        let env = try await TestEnvironment()
        var pages = Fixtures.pages(3)
        pages[0].text = "ok"
        pages[1].text = "ok"
        pages[2].text = "ok"
        let source = try await Fixtures.writeFolder(env.temp.sub("in"), pages: pages)
        try Data([0x61, 0xFF, 0xFE]).write(to: URL(fileURLWithPath: source + "/txt/002.txt"))
        try Data(repeating: 0x61, count: PageText.maxBytes + 1).write(to: URL(fileURLWithPath: source + "/txt/003.txt"))
        try FileManager.default.removeItem(atPath: source + "/txt/001.txt")
        let refusal = await #expect(throws: PublishRejected.self) {
            try await env.publisher.publish(editionID: 1, date: day, from: source)
        }
        let problems = refusal?.problems.map(\.description) ?? []
        #expect(problems.contains { $0.hasPrefix("txt/001.txt (page 1): is missing") }, "\(problems)")
        #expect(problems.contains("txt/002.txt (page 2): is not UTF-8 text"), "\(problems)")
        #expect(problems.contains { $0.hasPrefix("txt/003.txt (page 3): is \(PageText.maxBytes + 1) bytes") }, "\(problems)")
        #expect(try await env.store.issueContents(editionID: 1, date: day) == nil)
    }

    @Test func aTextPathIsCheckedLikeTheOtherFiles() throws {
        let manifest = """
            {"sections": [{"id": 1, "name": "Portada"}], "pages": [
              {"number": 1, "section": 1, "pdf": "p.pdf", "jpg": "s.jpg", "jpgA": "l.jpg", "text": "../t.txt"},
              {"number": 2, "section": 1, "pdf": "p2.pdf", "jpg": "s2.jpg", "jpgA": "l2.jpg", "text": "p2.pdf"}]}
            """
        let error = #expect(throws: PublishRejected.self) { try PublishManifest.parse(Array(manifest.utf8)) }
        let problems = error?.problems.map(\.description) ?? []
        #expect(problems.contains { $0.contains("(page 1)") && $0.contains("\"text\"") && $0.contains("leaves the folder") }, "\(problems)")
        #expect(problems.contains { $0.contains("(page 2)") && $0.contains("already used by page 2") }, "\(problems)")
        let plain = try PublishManifest.parse(Array("""
            {"sections": [{"id": 1, "name": "P"}], "pages": [{"number": 1, "section": 1, "pdf": "a.pdf", "jpg": "b.jpg", "jpgA": "c.jpg"}]}
            """.utf8))
        #expect(plain.pages[0].text == nil, "text is optional")
    }
}
