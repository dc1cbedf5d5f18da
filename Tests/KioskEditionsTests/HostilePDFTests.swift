import Foundation
@testable import KioskEditions
@testable import KioskFiles
import KioskModels
import KioskTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The content checks on numbers a PDF writes.
@Suite struct HostileContentCheckTests {
    static func pdf(startxref digits: String) -> [UInt8] {
        Array("%PDF-1.7\n".utf8) + [UInt8](repeating: 0x20, count: 64) + Array("\nstartxref\n\(digits)\n%%EOF\n".utf8)
    }

    /// A `startxref` of 19 or more digits overflows Int64 unless checked.
    @Test(arguments: ["9999999999999999999", "9223372036854775808", "9223372036854775807", "99999999999999999999999999999999",
                      String(repeating: "9", count: 900), "100"])
    func startxrefOutOfRangeIsDamaged(digits: String) throws {
        let bytes = Self.pdf(startxref: digits)
        #expect(ContentCheck.checkPDF(head: Array(bytes.prefix(8)), tail: Array(bytes.suffix(1024)), size: Int64(bytes.count))
            == "is a damaged PDF: startxref does not give an offset inside the file")
        let temp = TemporaryFolder()
        let path = temp.path + "/x.pdf"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let file = try FS.open(path, O_RDONLY)
        #expect(try ContentCheck.checkPDF(file, size: Int64(bytes.count)) == "is a damaged PDF: startxref does not give an offset inside the file")
    }

    @Test func startxrefWithLeadingZerosInsideTheFileIsFine() {
        let bytes = Self.pdf(startxref: String(repeating: "0", count: 40) + "9")
        #expect(ContentCheck.checkPDF(head: Array(bytes.prefix(8)), tail: Array(bytes.suffix(1024)), size: Int64(bytes.count)) == nil)
    }

    @Test func aJPEGCheckWithAnOddLimitDoesNotTrap() throws {
        let temp = TemporaryFolder()
        let path = temp.path + "/x.jpg"
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0, 10, 0, 10, 3] + [UInt8](repeating: 0, count: 200) + [0xFF, 0xD9]
        try Data(jpeg).write(to: URL(fileURLWithPath: path))
        let result = try ContentCheck.checkJPEG(try FS.open(path, O_RDONLY), size: Int64(jpeg.count), maxSide: 0)
        guard case .failure(let problem) = result else { Issue.record("accepted"); return }
        #expect(problem.message.contains("impossible dimensions 10x10"))
    }
}

/// `pdfinfo` echoes the PDF's metadata before its own lines: a title holding a newline and
/// "Page 1 size:" (or "Pages: 7") must neither trap the parser nor change what it reads.
@Suite(.serialized) struct HostilePDFInfoTests {
    /// pdfinfo's real output for a one-page A4 PDF whose title is `title`.
    static func output(title: String, pages: String = "1", sizes: [String] = ["Page    1 size:  595 x 842 pts (A4)"]) -> String {
        (["Title:           \(title)", "Custom Metadata: no", "Tagged:          no", "Form:            none",
          "Pages:           \(pages)", "Encrypted:       no"] + sizes.flatMap { [$0, "Page    1 rot:   0"] }
         + ["File size:       568 bytes", "Optimized:       no", "PDF version:     1.7"]).joined(separator: "\n") + "\n"
    }

    static let injected = [
        "Evil\nPage 1 size:",
        "Evil\nPage 1 size:\nPages: 7\nPage    1 size: 1 x 1 pts",
        "Evil\nPages: 99999999999999999999999\nPage 1 size: nan x inf pts",
        "Evil\nPages:\nPage",
        "Evil\nPage 9223372036854775807 size: 1e309 x -0 pts",
        "Evil\nPage 1 size: : : :",
    ]

    @Test(arguments: HostilePDFInfoTests.injected)
    func metadataThatLooksLikePdfinfosOwnLinesIsIgnored(title: String) throws {
        let sizes = try PDFToolbox.pageSizes(pdfinfo: Self.output(title: title), file: "a.pdf", maxPages: 10)
        #expect(sizes == [PDFToolbox.PageSize(width: 595, height: 842)])
    }

    @Test(arguments: [
        (HostilePDFInfoTests.output(title: "x", pages: "99999999999999999999999"), "pdfinfo found no pages in it"),
        (HostilePDFInfoTests.output(title: "x", pages: "-3"), "pdfinfo found no pages in it"),
        (HostilePDFInfoTests.output(title: "x", pages: "11"), "has 11 pages; at most 10 are allowed"),
        (HostilePDFInfoTests.output(title: "x", sizes: ["Page    1 size:"]), "pdfinfo gave a page size that cannot be read"),
        (HostilePDFInfoTests.output(title: "x", sizes: ["Page    1 size:  nan x 842 pts"]), "pdfinfo gave a page size that cannot be read"),
        (HostilePDFInfoTests.output(title: "x", sizes: ["Page    1 size:  1e999 x 842 pts"]), "pdfinfo gave a page size that cannot be read"),
        (HostilePDFInfoTests.output(title: "x", sizes: ["Page    2 size:  595 x 842 pts"]), "pdfinfo gave a page size that cannot be read"),
        (HostilePDFInfoTests.output(title: "x", sizes: []), "could not read the size of every page (0 of 1)"),
        ("", "pdfinfo found no pages in it"),
        ("Pages:", "pdfinfo found no pages in it"),
    ])
    func unreadableOutputIsARefusal(text: String, expected: String) {
        let error = #expect(throws: PublishRejected.self) { try PDFToolbox.pageSizes(pdfinfo: text, file: "a.pdf", maxPages: 10) }
        #expect(error?.description.contains(expected) == true, "\(String(describing: error))")
        #expect(error?.problems.first?.file == "a.pdf")
    }

    /// The whole publish, with the real pdfinfo, of a PDF whose metadata holds every injection above.
    @Test func aPDFWhoseMetadataImitatesPdfinfoPublishes() async throws {
        let env = try await TestEnvironment()
        let fields = ["Title", "Subject", "Author", "Keywords", "Creator", "Producer"]
        let info = "<< " + zip(fields, Self.injected).map { "/\($0) (\(TestPDFs.escape($1)))" }.joined(separator: " ") + " >>"
        var pdf = String(decoding: TestPDFs.make(texts: ["One"], extraObjects: [info]), as: UTF8.self)
        pdf = pdf.replacingOccurrences(of: "/Root 1 0 R >>", with: "/Root 1 0 R /Info 5 0 R >>")
        let folder = env.temp.sub("in")
        _ = FileManager.default.createFile(atPath: folder + "/issue.pdf", contents: Data(pdf.utf8))
        let shown = try await run(["pdfinfo", folder + "/issue.pdf"])
        #expect(shown.output.contains("\nPage 1 size:\n"), "\(shown.output)")
        let importer = PDFIssueImporter(publisher: env.publisher, options: PDFImportOptions(
            smallImage: .init(width: 30, height: 40), largeImage: .init(width: 60, height: 80), parallelism: 1))
        let outcome = try await importer.publish(editionID: 1, date: TestEnvironment.day, from: folder)
        #expect(outcome.result.pages == 1)
    }
}
