import KioskTestSupport
import Foundation
@testable import KioskEditions
import KioskModels
import KioskSQLite
import Synchronization
import Testing
@testable import KioskFiles

@Suite struct PublishTests {
    let day = TestEnvironment.day

    @Test func publishesAnIssueCompletely() async throws {
        let env = try await TestEnvironment()
        let source = try await Fixtures.writeFolder(env.temp.sub("in"), pages: Fixtures.pages(3))
        let phases = Mutex<[PublishProgress.Phase]>([])
        let result = try await env.publisher.publish(editionID: 1, date: day, from: source, progress: { progress in
            phases.withLock { if $0.last != progress.phase { $0.append(progress.phase) } }
        })
        #expect(result.revision == 1)
        #expect(result.replacedRevision == nil)
        #expect(result.pages == 3)
        #expect(phases.withLock { $0 } == [.checking, .copying, .bundling, .committing, .done])

        let contents = try #require(try await env.store.issueContents(editionID: 1, date: day))
        #expect(contents.revision == 1)
        #expect(contents.pages.map(\.number) == [1, 2, 3])
        #expect(contents.pages[0].files == PageFiles(pdf: "1/2025-06-30/r1/pdf/001.pdf", jpg: "1/2025-06-30/r1/jpg/001.jpg",
                                                      jpgA: "1/2025-06-30/r1/jpgA/001.jpg"))
        #expect(contents.pages[1].section == Section(id: 2, name: "Política"))
        for page in contents.pages {
            let n = String(format: "%03d", page.number)
            #expect(readFile(env.directory.absolute(page.files.pdf)) == readFile("\(source)/pdf/\(n).pdf"))
            #expect(readFile(env.directory.absolute(page.files.jpgA)) == readFile("\(source)/jpgA/\(n).jpg"))
        }
        let bundle = try #require(contents.bundle)
        #expect(bundle == result.bundle)
        #expect(bundle.path == "1/2025-06-30/r1/1-2025-06-30.zip")
        let zip = env.directory.absolute(bundle.path)
        #expect(Int64(readFile(zip).count) == bundle.size)
        let sum = try await run(["sha256sum", zip])
        #expect(sum.output.hasPrefix(bundle.sha256 + " "))
        let test = try await run(["unzip", "-t", zip])
        #expect(test.status == 0, "\(test.output)")
        #expect(test.output.contains("No errors detected"))
        let methods = try await pythonCheck(zip: zip, against: source)
        #expect(methods.count == 10)
        let xml = String(decoding: try #require(try await run(["unzip", "-p", zip, "edicio.xml"]).output.data(using: .utf8)), as: UTF8.self)
        #expect(xml.contains(#"<edicio id="1" titol="El Punt Avui" edicio="Nacional" data="2025-06-30" revisio="1" pagines="3">"#))
        #expect(xml.contains(#"<pagina numero="2" seccio_id="2" seccio="Política" pdf="pdf/002.pdf" jpg="jpg/002.jpg" jpgA="jpgA/002.jpg"/>"#))
        // Nothing left behind in staging.
        #expect(try FileManager.default.contentsOfDirectory(atPath: env.directory.stagingRoot).isEmpty)
    }

    /// Each case is refused with a message naming the file and page, and leaves no trace.
    @Test func everyRejectedPublishSaysWhatAndWhereAndLeavesNoTrace() async throws {
        let env = try await TestEnvironment(limits: PublishLimits(maxFileBytes: 1 << 20, maxIssueBytes: 8 << 20))
        // A published issue that every refused republish must leave untouched.
        _ = try await env.publisher.publish(editionID: 1, date: day, from: Fixtures.writeFolder(env.temp.sub("good"), pages: Fixtures.pages(2)))
        let before = env.tree()
        let contentsBefore = try await env.store.issueContents(editionID: 1, date: day)
        let outside = env.temp.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try Data(Fixtures.pdf()).write(to: URL(fileURLWithPath: outside + "/secret.pdf"))
        try await Fixtures.writeFolder(env.temp.sub("outsidefolder"), pages: Fixtures.pages(2))

        var counter = 0
        func refused(_ expected: String, editionID: Int = 1, limits: PublishLimits? = nil,
                     _ prepare: (String) throws -> Void) async throws {
            counter += 1
            let folder = try await Fixtures.writeFolder(env.temp.sub("case\(counter)"), pages: Fixtures.pages(2))
            try prepare(folder)
            let publisher = limits.map {
                IssuePublisher(directory: env.directory, registry: env.store, limits: $0, bundleOptions: BundleOptions(sync: false),
                               publicationName: { _ in "El Punt Avui" })
            } ?? env.publisher
            do {
                _ = try await publisher.publish(editionID: editionID, date: day, from: folder)
                Issue.record("accepted, expected: \(expected)")
            } catch let error as PublishRejected {
                #expect(error.description.contains(expected), "\(error)")
            }
            #expect(env.tree() == before, "left a trace: \(expected)")
            #expect(try await env.store.issueContents(editionID: 1, date: day) == contentsBefore)
        }
        let manifest = { (folder: String, pdf1: String) in
            let text = #"{"sections": [{"id": 1, "name": "Portada"}], "pages": [{"number": 1, "section": 1, "pdf": "\#(pdf1)", "jpg": "jpg/001.jpg", "jpgA": "jpgA/001.jpg"}]}"#
            try Data(text.utf8).write(to: URL(fileURLWithPath: folder + "/issue.json"))
        }
        let write = { (path: String, bytes: [UInt8]) in try Data(bytes).write(to: URL(fileURLWithPath: path)) }

        // Content, by magic and structure rather than name.
        try await refused("jpgA/002.jpg (page 2): is not a JPEG") { try write($0 + "/jpgA/002.jpg", Fixtures.pdf()) }
        try await refused("pdf/001.pdf (page 1): is not a PDF") { try write($0 + "/pdf/001.pdf", Fixtures.jpeg()) }
        try await refused("pdf/002.pdf (page 2): is a truncated or damaged PDF") {
            let pdf = Fixtures.pdf(binary: 20_000)
            try write($0 + "/pdf/002.pdf", Array(pdf.prefix(pdf.count / 2)))
        }
        try await refused("jpg/001.jpg (page 1): is a truncated JPEG") {
            let jpeg = Fixtures.jpeg(body: 5_000)
            try write($0 + "/jpg/001.jpg", Array(jpeg.prefix(3_000)))
        }
        // Page numbers.
        try await refused("page numbers must run 1, 2, 3... without gaps: page 2 missing") { folder in
            let text = String(decoding: readFile(folder + "/issue.json"), as: UTF8.self)
                .replacingOccurrences(of: #""number": 2"#, with: #""number": 3"#)
            try write(folder + "/issue.json", Array(text.utf8))
        }
        // Sizes.
        try await refused("jpgA/001.jpg (page 1): is \(Fixtures.pages(2)[0].jpgA.count) bytes; the limit per file is 20000 bytes",
                          limits: PublishLimits(maxFileBytes: 20_000)) { _ in }
        try await refused("the issue's files total", limits: PublishLimits(maxIssueBytes: 50_000)) { _ in }
        try await refused("has 2 pages; at most 1 are allowed", limits: PublishLimits(maxPages: 1)) { _ in }
        // Names that escape.
        try await refused(#"issue.json (page 1): "pdf": "../outside/secret.pdf" leaves the folder (..)"#) {
            try manifest($0, "../outside/secret.pdf")
        }
        try await refused(#"issue.json (page 1): "pdf": "/etc/hostname" is an absolute path"#) { try manifest($0, "/etc/hostname") }
        try await refused(#"issue.json (page 1): "pdf": "pdf\\001.pdf""#) { try manifest($0, "pdf\\\\001.pdf") }
        // Symbolic links: a file, and a folder, pointing outside.
        try await refused("pdf/001.pdf (page 1): is a symbolic link") { folder in
            try FileManager.default.removeItem(atPath: folder + "/pdf/001.pdf")
            try FileManager.default.createSymbolicLink(atPath: folder + "/pdf/001.pdf", withDestinationPath: outside + "/secret.pdf")
        }
        try await refused("jpgA/001.jpg (page 1): has a path component that is a file or a symbolic link") { folder in
            try FileManager.default.removeItem(atPath: folder + "/jpgA")
            try FileManager.default.createSymbolicLink(atPath: folder + "/jpgA", withDestinationPath: env.temp.path + "/outsidefolder/jpgA")
        }
        try await refused("issue.json: is a symbolic link") { folder in
            try FileManager.default.removeItem(atPath: folder + "/issue.json")
            try FileManager.default.createSymbolicLink(atPath: folder + "/issue.json", withDestinationPath: env.temp.path + "/outsidefolder/issue.json")
        }
        // Missing files, wrong issue, unknown edition.
        try await refused("jpg/002.jpg (page 2): is missing") { try FileManager.default.removeItem(atPath: $0 + "/jpg/002.jpg") }
        try await refused("issue.json: says date 2025-07-01, but 2025-06-30 is being published") { folder in
            let text = String(decoding: readFile(folder + "/issue.json"), as: UTF8.self)
                .replacingOccurrences(of: "{\"sections\"", with: "{\"date\": \"2025-07-01\", \"sections\"")
            try write(folder + "/issue.json", Array(text.utf8))
        }
        try await refused("edition 99 is not in the catalogue", editionID: 99) { _ in }
        // All problems at once.
        try await refused("jpgA/001.jpg (page 1): is not a JPEG") { folder in
            try write(folder + "/jpgA/001.jpg", Fixtures.pdf())
            try write(folder + "/pdf/002.pdf", Fixtures.jpeg())
        }
    }

    @Test func republishIsAtomicAndAReaderOfTheOldFileFinishes() async throws {
        let env = try await TestEnvironment()
        let first = try await env.publisher.publish(editionID: 1, date: day,
                                                    from: Fixtures.writeFolder(env.temp.sub("v1"), pages: Fixtures.pages(3, seed: 1)))
        let oldBundle = readFile(env.directory.absolute(first.bundle.path))
        // A reader in the middle of a download holds the bundle and a page open.
        let reading = try env.directory.open(servable: first.bundle.path)
        let page = try env.directory.open(servable: "1/2025-06-30/r1/jpgA/002.jpg")
        var head = [UInt8](repeating: 0, count: 1000)
        _ = try head.withUnsafeMutableBytes { try reading.file.read(into: $0.baseAddress!, count: 1000, at: 0) }

        let second = try await env.publisher.publish(editionID: 1, date: day,
                                                     from: Fixtures.writeFolder(env.temp.sub("v2"), pages: Fixtures.pages(4, seed: 2)))
        #expect(second.revision == 2)
        #expect(second.replacedRevision == 1)
        let contents = try #require(try await env.store.issueContents(editionID: 1, date: day))
        #expect(contents.revision == 2)
        #expect(contents.pages.count == 4)
        #expect(contents.bundle?.path == "1/2025-06-30/r2/1-2025-06-30.zip")
        // The old revision is gone from disk and can no longer be opened...
        #expect(!FileManager.default.fileExists(atPath: env.directory.absolute("1/2025-06-30/r1")))
        #expect(throws: EditionsDirectory.ResolutionError.notFound) { try env.directory.open(servable: first.bundle.path) }
        // ...but the reader finishes its download with the old bytes.
        var rest = [UInt8](repeating: 0, count: Int(reading.size))
        let n = try rest.withUnsafeMutableBytes { try reading.file.read(into: $0.baseAddress!, count: Int(reading.size), at: 0) }
        #expect(n == oldBundle.count)
        #expect(rest == oldBundle)
        #expect(page.size == Int64(Fixtures.pages(3, seed: 1)[1].jpgA.count))
        #expect(try page.file.bytes(at: 0, count: Int(page.size)) == Fixtures.pages(3, seed: 1)[1].jpgA)
    }

    @Test func withdrawHidesAndRepublishShowsAgain() async throws {
        let env = try await TestEnvironment()
        let folder = try await Fixtures.writeFolder(env.temp.sub("in"), pages: Fixtures.pages(2))
        _ = try await env.publisher.publish(editionID: 1, date: day, from: folder)
        #expect(try await env.publisher.withdraw(editionID: 1, date: day))
        #expect(try await env.store.issueContents(editionID: 1, date: day) == nil)
        #expect(try await !env.publisher.withdraw(editionID: 1, date: day))
        #expect(try await !env.publisher.withdraw(editionID: 2, date: day))
        // Files of a withdrawn issue stay (the database still references them).
        #expect(try await env.store.storedRevisions().map(\.revision) == [1])
        #expect(try await env.directory.cleanUp(registry: env.store).isEmpty)
        let again = try await env.publisher.publish(editionID: 1, date: day, from: folder)
        #expect(again.revision == 2)
        #expect(try await env.store.issueContents(editionID: 1, date: day)?.revision == 2)
    }

    /// A publish killed after its rename and before its commit leaves an unreferenced `r<N>`: the next
    /// publish does not reuse the number, and clean-up removes the leftover.
    @Test func aLeftoverRevisionFolderIsNeverReused() async throws {
        let env = try await TestEnvironment()
        let leftover = env.directory.absolute("1/2025-06-30/r1")
        try FileManager.default.createDirectory(atPath: leftover + "/pdf", withIntermediateDirectories: true)
        try Data("partial".utf8).write(to: URL(fileURLWithPath: leftover + "/pdf/001.pdf"))
        let result = try await env.publisher.publish(editionID: 1, date: day,
                                                     from: Fixtures.writeFolder(env.temp.sub("in"), pages: Fixtures.pages(1)))
        #expect(result.revision == 2)
        let report = try await env.directory.cleanUp(registry: env.store)
        #expect(report.revisionFolders == ["1/2025-06-30/r1"])
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(FileManager.default.fileExists(atPath: env.directory.absolute(result.bundle.path)))
    }

    @Test func concurrentPublishesOfOneIssueAreSerialised() async throws {
        let env = try await TestEnvironment()
        var folders: [String] = []
        for n in 1...4 { folders.append(try await Fixtures.writeFolder(env.temp.sub("in\(n)"), pages: Fixtures.pages(n, seed: UInt64(n)))) }
        let results = try await withThrowingTaskGroup(of: PublishResult.self) { group in
            for folder in folders { group.addTask { try await env.publisher.publish(editionID: 1, date: day, from: folder) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(results.map(\.revision)) == [1, 2, 3, 4])
        let last = try #require(results.max { $0.revision < $1.revision })
        let contents = try #require(try await env.store.issueContents(editionID: 1, date: day))
        #expect(contents.revision == last.revision)
        #expect(contents.pages.count == last.pages)
        let revisions = try FileManager.default.contentsOfDirectory(atPath: env.directory.absolute("1/2025-06-30"))
        #expect(revisions == ["r\(last.revision)"])
    }
}
