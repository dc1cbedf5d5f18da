import Foundation
@testable import KioskEditions
@testable import KioskFiles
import KioskModels
import KioskSQLite
import KioskTestSupport
import Synchronization
import Testing

/// Publishing from PDFs alone, with the real tools (qpdf, pdfinfo, pdftoppm, pdftotext) on real PDFs:
/// the data set's pages merged by qpdf, and PDFs written by hand (`TestPDFs`); the tools in the sandbox.
/// Serialized: each test runs tools on every processor already (and the full suite shares 2 cores).
@Suite(.serialized) struct PDFImportTests {
    let day = TestEnvironment.day
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Samples").path
    static let small = PDFImportOptions.Pixels(width: 300, height: 400)
    static let large = PDFImportOptions.Pixels(width: 1200, height: 1600)

    /// One tool at a time unless asked (the full suite shares 2 cores with everything else; the
    /// multi-page test runs one per processor). The tools run in the sandbox wherever it can be had
    /// (`TestSandbox`; its absence fails the test under `KIOSK_REQUIRE_SANDBOX=1`).
    func importer(_ env: TestEnvironment, limits: ChildLimits = ChildLimits(), parallelism: Int = 1) -> PDFIssueImporter {
        TestSandbox.recordIfRequiredAndMissing()
        return PDFIssueImporter(publisher: env.publisher, options: PDFImportOptions(
            smallImage: Self.small, largeImage: Self.large, limits: limits, parallelism: parallelism, sandbox: TestSandbox.sandbox))
    }

    /// The sample issues' page PDFs, in order: 4 + 4 + … pages of real newspaper-like PDFs.
    static func samplePages() throws -> [String] {
        var pages: [String] = []
        for issue in ["1/2025-06-01", "1/2025-06-02", "8/2025-05-31"] {
            let folder = samples + "/" + issue + "/pdf"
            pages += try FileManager.default.contentsOfDirectory(atPath: folder).sorted().map { folder + "/" + $0 }
        }
        return pages
    }

    /// Width and height from a JPEG's start-of-frame header (read here, independently of Kiosk's checks).
    static func jpegSize(_ path: String) -> (Int, Int)? {
        let bytes = readFile(path)
        var i = 2
        while i + 9 < bytes.count, bytes[i] == 0xFF {
            let marker = bytes[i + 1]
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                return (Int(bytes[i + 7]) << 8 | Int(bytes[i + 8]), Int(bytes[i + 5]) << 8 | Int(bytes[i + 6]))
            }
            i += 2 + length
        }
        return nil
    }

    /// What `pdftotext -f N -l N` reads on page N of `pdf`, without the closing form feed.
    static func pdftotext(_ pdf: String, page: Int) async throws -> String {
        let result = try await run(["pdftotext", "-enc", "UTF-8", "-f", String(page), "-l", String(page), pdf, "-"])
        return result.output.hasSuffix("\u{0C}") ? String(result.output.dropLast()) : result.output
    }

    /// Checks a PDF publish as a classic one is checked: pages, sections, exact image sizes, texts,
    /// the bundle, and nothing left in staging.
    func expectPublished(_ env: TestEnvironment, source: String, pages: Int, sections: [Section]) async throws {
        let contents = try #require(try await env.store.issueContents(editionID: 1, date: day))
        #expect(contents.pages.map(\.number) == Array(1...pages))
        #expect(contents.pages.map(\.section) == sections)
        for page in contents.pages {
            let small = try #require(Self.jpegSize(env.directory.absolute(page.files.jpg)))
            let large = try #require(Self.jpegSize(env.directory.absolute(page.files.jpgA)))
            #expect(small == (300, 400) && large == (1200, 1600), "page \(page.number): \(small) \(large)")
            #expect(try await run(["pdfinfo", env.directory.absolute(page.files.pdf)]).output.contains("Pages:           1"))
        }
        let bundle = try #require(contents.bundle)
        let test = try await run(["unzip", "-t", env.directory.absolute(bundle.path)])
        #expect(test.status == 0 && test.output.contains("No errors detected"), "\(test.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: env.directory.stagingRoot).isEmpty)
    }

    @Test func publishesAMultiPagePDFAsOneSection() async throws {
        let env = try await TestEnvironment()
        let pages = try Self.samplePages()
        let folder = env.temp.sub("in")
        let merged = folder + "/El Punt Avui 2025-06-30.pdf"
        let merge = try await run(["qpdf", "--empty", "--pages"] + pages + ["--", merged])
        #expect(merge.status == 0, "\(merge.error)")
        let phases = Mutex<[PublishProgress.Phase]>([])
        let rendered = Mutex<[Int]>([])
        let outcome = try await importer(env, parallelism: PDFImportOptions().parallelism)
            .publish(editionID: 1, date: day, from: folder, progress: { progress in
            phases.withLock { if $0.last != progress.phase { $0.append(progress.phase) } }
            if progress.phase == .rendering { rendered.withLock { $0.append(progress.filesDone) } }
        })
        #expect(outcome.result.pages == pages.count)
        #expect(outcome.rendering?.sections == .single)
        #expect(phases.withLock { $0 } == [.rendering, .checking, .copying, .bundling, .committing, .done])
        #expect(rendered.withLock { $0.first } == 0 && rendered.withLock { $0.last } == pages.count)
        let section = Section(id: PDFSections.derivedID("Nacional"), name: "Nacional")
        try await expectPublished(env, source: folder, pages: pages.count, sections: Array(repeating: section, count: pages.count))

        // The texts, as pdftotext reads each page of the source, and the page PDFs are the pages.
        let revision = env.directory.absolute(EditionsDirectory.revisionFolder(editionID: 1, date: day, revision: 1))
        for number in 1...pages.count {
            let expected = try await Self.pdftotext(merged, page: number)
            let published = try await Self.pdftotext(revision + "/" + PageFileKind.pdf.name(page: number), page: 1)
            #expect(published == expected, "page \(number)")
            #expect(!expected.isEmpty)
        }
    }

    @Test func theTextFileOfEachPageIsWhatPdftotextReadsThere() async throws {
        // The classic folder the importer writes, before it is published.
        let env = try await TestEnvironment()
        let texts = (1...9).map { "Pagina \($0) paraula\($0) Presència" }
        let folder = env.temp.sub("in")
        let pdf = folder + "/issue.pdf"
        _ = FileManager.default.createFile(atPath: pdf, contents: Data(TestPDFs.make(texts: texts)))
        let scratch = env.temp.sub("scratch")
        let rendering = try await PDFIssueImporter.makeClassicFolder(from: folder, in: scratch + "/work",
                                                                     options: importer(env).options)
        let issue = scratch + "/work/issue"
        #expect(rendering.pages == 9)
        for number in 1...9 {
            let text = try String(contentsOfFile: issue + "/" + PDFIssueImporter.textName(page: number), encoding: .utf8)
            #expect(text == (try await Self.pdftotext(pdf, page: number)))
            #expect(text.contains("paraula\(number) Presència"))
        }
        let manifest = try PublishManifest.parse(readFile(issue + "/issue.json"))
        #expect(manifest.pages.count == 9)
    }

    @Test func onePDFPerPageWithASectionsManifest() async throws {
        let env = try await TestEnvironment()
        let folder = env.temp.sub("in")
        // Names sorted as numbers: p2 before p10.
        for number in 1...10 {
            _ = FileManager.default.createFile(atPath: "\(folder)/p\(number).pdf", contents: Data(TestPDFs.make(texts: ["Page \(number)"])))
        }
        let sections = #"[{"id": 1, "name": "Portada", "pages": "1"}, {"id": 2, "name": "Política", "pages": "2-5, 9"},"#
            + #" {"id": 8, "name": "Esports", "pages": "6-8, 10"}]"#
        _ = FileManager.default.createFile(atPath: folder + "/sections.json", contents: Data(sections.utf8))
        let outcome = try await importer(env).publish(editionID: 1, date: day, from: folder)
        #expect(outcome.rendering?.sections == .manifest)
        #expect(outcome.rendering?.sourceFiles == 10)
        let portada = Section(id: 1, name: "Portada"), politica = Section(id: 2, name: "Política"), esports = Section(id: 8, name: "Esports")
        try await expectPublished(env, source: folder, pages: 10, sections: [portada, politica, politica, politica, politica,
                                                                             esports, esports, esports, politica, esports])
        let revision = env.directory.absolute(EditionsDirectory.revisionFolder(editionID: 1, date: day, revision: 1))
        #expect(try await Self.pdftotext(revision + "/pdf/010.pdf", page: 1).contains("Page 10"))
        #expect(try await Self.pdftotext(revision + "/pdf/002.pdf", page: 1).contains("Page 2"))
    }

    @Test func sectionsFromTheOutline() async throws {
        let env = try await TestEnvironment()
        let folder = env.temp.sub("in")
        let pdf = TestPDFs.make(texts: (1...6).map { "Page \($0)" },
                                outline: [("Portada", 1), ("Política", 2), ("Esports", 4)])
        _ = FileManager.default.createFile(atPath: folder + "/issue.pdf", contents: Data(pdf))
        let outcome = try await importer(env).publish(editionID: 1, date: day, from: folder)
        #expect(outcome.rendering?.sections == .outline)
        let named = { (name: String) in Section(id: PDFSections.derivedID(name), name: name) }
        try await expectPublished(env, source: folder, pages: 6, sections: [named("Portada"), named("Política"), named("Política"),
                                                                            named("Esports"), named("Esports"), named("Esports")])
    }

    @Test func aBadSectionsManifestIsRefusedWithWhatIsWrong() async throws {
        let env = try await TestEnvironment()
        let folder = env.temp.sub("in")
        _ = FileManager.default.createFile(atPath: folder + "/issue.pdf", contents: Data(TestPDFs.make(texts: ["1", "2", "3"])))
        for (manifest, message) in [
            (#"[{"id": 1, "name": "Portada", "pages": "1-2"}]"#, "page 3 is in no section"),
            (#"[{"id": 1, "name": "Portada", "pages": "1-4"}]"#, "outside the issue's pages 1-3"),
            (#"[{"id": 1, "name": "A", "pages": "1-3"}, {"id": 2, "name": "B", "pages": "2"}]"#, "page 2 is already in section 1"),
            (#"[{"id": 1, "name": "A", "pages": "1-3", "colour": "red"}]"#, "unknown key \"colour\""),
            (#"{"id": 1}"#, "must be a JSON list"),
        ] {
            _ = FileManager.default.createFile(atPath: folder + "/sections.json", contents: Data(manifest.utf8))
            await #expect(throws: PublishRejected.self) { try await importer(env).publish(editionID: 1, date: day, from: folder) }
            do {
                _ = try await importer(env).publish(editionID: 1, date: day, from: folder)
            } catch let rejected as PublishRejected {
                #expect(rejected.problems.first?.file == "sections.json")
                #expect(rejected.description.contains(message), "\(rejected)")
            }
        }
        #expect(try await env.store.issueContents(editionID: 1, date: day) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: env.directory.stagingRoot).isEmpty)
    }

    /// Hostile PDFs: each refused with a message naming the file (and page, and tool), or rendered within
    /// the limits; never anything left behind.
    @Test func hostilePDFsAreRefusedOrRenderedWithinTheLimits() async throws {
        let env = try await TestEnvironment()
        let valid = TestPDFs.make(texts: ["One", "Two"])
        let cases: [(name: String, bytes: [UInt8], refusal: String?)] = [
            ("huge-page.pdf", TestPDFs.make(texts: ["Huge"], mediaBox: "0 0 1036800 1036800"), nil),
            ("nested.pdf", TestPDFs.deeplyNested(depth: 100_000), "?"),
            ("truncated.pdf", Array(valid.prefix(valid.count / 2)), "truncated"),
            ("not-a.pdf", Array(("PK\u{3}\u{4} this is a zip, not a PDF" + String(repeating: " ", count: 2000)).utf8), "is not a PDF"),
            ("scripted.pdf", TestPDFs.withJavaScriptAndAttachment(), nil),
        ]
        for (index, hostile) in cases.enumerated() {
            let folder = env.temp.sub("hostile-\(index)")
            let date = IssueDate("2025-07-0\(index + 1)")!   // a date of its own: a refusal leaves no row
            _ = FileManager.default.createFile(atPath: folder + "/" + hostile.name, contents: Data(hostile.bytes))
            let started = Date()
            do {
                let outcome = try await importer(env, limits: ChildLimits(cpuSeconds: 10, memoryBytes: 512 << 20,
                                                                          outputBytes: 64 << 20, wallSeconds: 20))
                    .publish(editionID: 1, date: date, from: folder)
                #expect(hostile.refusal == nil || hostile.refusal == "?", "\(hostile.name) was published")
                let contents = try #require(try await env.store.issueContents(editionID: 1, date: date))
                for page in contents.pages {
                    #expect(Self.jpegSize(env.directory.absolute(page.files.jpgA))! == (1200, 1600))
                    let pdf = String(decoding: readFile(env.directory.absolute(page.files.pdf)), as: UTF8.self)
                    #expect(!pdf.contains("/JavaScript") && !pdf.contains("/EmbeddedFile"), "\(hostile.name): scripts kept")
                }
                #expect(outcome.result.pages >= 1)
            } catch let rejected as PublishRejected {
                #expect(hostile.refusal != nil, "\(hostile.name): \(rejected)")
                #expect(rejected.problems.first?.file == hostile.name, "\(rejected)")
                if let expected = hostile.refusal, expected != "?" { #expect(rejected.description.contains(expected), "\(rejected)") }
                #expect(try await env.store.issueContents(editionID: 1, date: date) == nil, "\(hostile.name) left a row")
                #expect(!FileManager.default.fileExists(atPath: env.directory.absolute("1/\(date)")), "\(hostile.name) left files")
            }
            // Bounded by the tools' limits, not by the PDF (generous: the whole publish, on a loaded machine).
            #expect(Date().timeIntervalSince(started) < 120, "\(hostile.name) took too long")
            #expect(try FileManager.default.contentsOfDirectory(atPath: env.directory.stagingRoot).isEmpty, "\(hostile.name)")
        }
    }

    @Test func aToolPastItsLimitIsRefusedNamingTheToolAndLeavesNothing() async throws {
        let env = try await TestEnvironment()
        let folder = env.temp.sub("in")
        _ = FileManager.default.createFile(atPath: folder + "/issue.pdf", contents: Data(TestPDFs.make(texts: ["One", "Two"])))
        let before = env.tree()
        do {
            _ = try await importer(env, limits: ChildLimits(wallSeconds: 0.001)).publish(editionID: 1, date: day, from: folder)
            Issue.record("published despite a wall-clock limit of 1 ms")
        } catch let rejected as PublishRejected {
            #expect(rejected.problems.first?.file == "issue.pdf")
            // qpdf --check or pdfinfo, whichever ran past 1 ms first.
            #expect(rejected.description.contains("qpdf took longer than") || rejected.description.contains("pdfinfo took longer than"),
                    "\(rejected)")
        }
        #expect(env.tree() == before)
        #expect(try await env.store.issueContents(editionID: 1, date: day) == nil)
    }

    @Test func aFolderWithOtherFilesBesidesPDFsIsRefused() async throws {
        let env = try await TestEnvironment()
        let folder = env.temp.sub("in")
        _ = FileManager.default.createFile(atPath: folder + "/issue.pdf", contents: Data(TestPDFs.make(texts: ["One"])))
        _ = FileManager.default.createFile(atPath: folder + "/notes.txt", contents: Data("hi".utf8))
        #expect(PDFIssueImporter.isPDFOnlyFolder(folder))
        await #expect(throws: PublishRejected.self) { try await importer(env).publish(editionID: 1, date: day, from: folder) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: env.directory.stagingRoot).isEmpty)
    }

    @Test func classicFoldersStillGoStraightToThePublisher() async throws {
        let env = try await TestEnvironment()
        let source = try await Fixtures.writeFolder(env.temp.sub("classic"), pages: Fixtures.pages(2))
        #expect(!PDFIssueImporter.isPDFOnlyFolder(source))
        let outcome = try await importer(env).publish(editionID: 1, date: day, from: source)
        #expect(outcome.rendering == nil)
        #expect(outcome.result.pages == 2)
    }
}
