import KioskTestSupport
import Foundation
@testable import KioskEditions
import KioskModels
import Testing
@testable import KioskFiles

@Suite struct ManifestTests {
    func parse(_ text: String) throws(PublishRejected) -> PublishManifest {
        try PublishManifest.parse(Array(text.utf8))
    }

    func problems(_ text: String) -> [String] {
        do {
            _ = try parse(text)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    let sections = #"[{"id": 1, "name": "Portada"}, {"id": 2, "name": "Política"}]"#

    func page(_ n: Int, section: Int = 1, pdf: String? = nil) -> String {
        let name = String(format: "%03d", n)
        return #"{"number": \#(n), "section": \#(section), "pdf": "\#(pdf ?? "pdf/\(name).pdf")", "jpg": "jpg/\#(name).jpg", "jpgA": "jpgA/\#(name).jpg"}"#
    }

    @Test func parsesAWellFormedManifest() throws {
        let manifest = try parse(#"{"edition": 1, "date": "2025-06-30", "sections": \#(sections), "pages": [\#(page(2, section: 2)), \#(page(1))]}"#)
        #expect(manifest.editionID == 1)
        #expect(manifest.date == IssueDate("2025-06-30"))
        #expect(manifest.pages.map(\.number) == [1, 2])
        #expect(manifest.pages[1].section == Section(id: 2, name: "Política"))
        #expect(manifest.pages[0].pdf == "pdf/001.pdf")
    }

    @Test func refusesGapsDuplicatesAndBadStarts() {
        #expect(problems(#"{"sections": \#(sections), "pages": [\#(page(1)), \#(page(3))]}"#)
            == ["issue.json: page numbers must run 1, 2, 3... without gaps: page 2 missing"])
        #expect(problems(#"{"sections": \#(sections), "pages": [\#(page(2)), \#(page(3))]}"#)
            == ["issue.json: page numbers must run 1, 2, 3... without gaps: page 1 missing"])
        #expect(problems(#"{"sections": \#(sections), "pages": [\#(page(1)), \#(page(1))]}"#).contains {
            $0.contains("page number 1 is listed twice") })
        #expect(problems(#"{"sections": \#(sections), "pages": []}"#) == ["issue.json: has no pages"])
    }

    @Test func refusesNamesThatEscape() {
        let cases = ["../etc/passwd", "/etc/passwd", "pdf/../../x.pdf", "pdf\\001.pdf", ".hidden.pdf", "pdf//001.pdf",
                     "pdf/001 copy.pdf", ""]
        for name in cases {
            let found = problems(#"{"sections": \#(sections), "pages": [\#(page(1, pdf: name.replacingOccurrences(of: "\\", with: "\\\\")))]}"#)
            #expect(found.count == 1, "\(name)")
            #expect(found.first?.hasPrefix("issue.json (page 1): \"pdf\": ") == true, "\(name): \(found)")
        }
    }

    @Test func namesTheFileThePageAndTheProblem() {
        #expect(problems(#"{"sections": \#(sections), "pages": [{"number": 1, "section": 1, "pdf": 7, "jpg": "a.jpg", "jpgA": "b.jpg"}]}"#)
            == ["issue.json: pages[0].pdf: expected a string (the 1st page listed)"])
        #expect(problems(#"{"sections": \#(sections), "pages": [{"number": 1, "section": 1, "jpg": "a.jpg", "jpgA": "b.jpg"}]}"#)
            == ["issue.json: pages[0].pdf: is required (the 1st page listed)"])
        #expect(problems(#"{"sections": \#(sections), "pages": [\#(page(1, section: 9))]}"#)
            == ["issue.json (page 1): section 9 is not listed under \"sections\""])
        #expect(problems(#"{"sections": \#(sections), "pagez": []}"#).first?.contains("unknown key \"pagez\"") == true)
        #expect(problems(#"{"sections": \#(sections), "pages": [{"number": 1, "section": 1, "pdf": "a.pdf", "jpg": "a.jpg", "jpgA": "b.jpg", "colour": 1}]}"#)
            .first?.contains("pages[0]: unknown key \"colour\" in a page") == true)
        #expect(problems("{not json").first?.hasPrefix("issue.json: is not valid JSON") == true)
        #expect(problems(#"{"date": "30/06/2025", "sections": \#(sections), "pages": [\#(page(1))]}"#)
            == ["issue.json: \"date\": expected YYYY-MM-DD, got \"30/06/2025\""])
        #expect(problems(#"{"sections": \#(sections), "pages": [\#(page(1)), {"number": 2, "section": 1, "pdf": "pdf/001.pdf", "jpg": "x.jpg", "jpgA": "y.jpg"}]}"#)
            == ["issue.json (page 2): \"pdf\": pdf/001.pdf is already used by page 1"])
    }
}

@Suite struct ContentCheckTests {
    func withFile<T>(_ bytes: [UInt8], _ body: (OpenFile, Int64) throws -> T) throws -> T {
        let temp = TemporaryFolder()
        let path = temp.path + "/f"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return try body(try FS.open(path, O_RDONLY), Int64(bytes.count))
    }

    @Test func acceptsWellFormedFiles() throws {
        #expect(try withFile(Fixtures.pdf()) { try ContentCheck.checkPDF($0, size: $1) } == nil)
        let jpeg = try withFile(Fixtures.jpeg(width: 1200, height: 1600)) { try ContentCheck.checkJPEG($0, size: $1, maxSide: 30_000) }
        let size = try jpeg.get()
        #expect(size.width == 1200 && size.height == 1600)
    }

    @Test func refusesWrongMagicAndTruncation() throws {
        let pdf = Fixtures.pdf(binary: 5_000)
        #expect(try withFile(Fixtures.jpeg()) { try ContentCheck.checkPDF($0, size: $1) }?.contains("does not start with %PDF-") == true)
        #expect(try withFile(Array(pdf.prefix(pdf.count - 300))) { try ContentCheck.checkPDF($0, size: $1) }?
            .contains("truncated") == true)
        var noXref = pdf
        noXref.replaceSubrange((pdf.count - 40)..<(pdf.count - 7), with: [UInt8](repeating: 0x20, count: 33))
        #expect(try withFile(noXref) { try ContentCheck.checkPDF($0, size: $1) } != nil)

        let jpeg = Fixtures.jpeg()
        func jpegProblem(_ bytes: [UInt8], maxSide: Int = 30_000) throws -> String? {
            try withFile(bytes) { file, size in
                if case .failure(let problem) = try ContentCheck.checkJPEG(file, size: size, maxSide: maxSide) { return problem.message }
                return nil
            }
        }
        #expect(try jpegProblem(pdf)?.contains("is not a JPEG") == true)
        #expect(try jpegProblem(Array(jpeg.prefix(jpeg.count - 100)))?.contains("truncated") == true)
        #expect(try jpegProblem(Fixtures.jpeg(width: 0, height: 10))?.contains("impossible dimensions 0x10") == true)
        #expect(try jpegProblem(Fixtures.jpeg(width: 40_000, height: 10))?.contains("impossible dimensions") == true)
        #expect(try jpegProblem(jpeg, maxSide: 1000)?.contains("1200x1600") == true)
        // A PNG renamed .jpg.
        #expect(try jpegProblem([0x89, 0x50, 0x4E, 0x47] + [UInt8](repeating: 0, count: 200))?.contains("is not a JPEG") == true)
    }
}
