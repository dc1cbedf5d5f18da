import KioskTestSupport
import Foundation
@testable import KioskEditions
import KioskModels
import KioskSQLite
import Testing
@testable import KioskFiles

@Suite struct DirectoryTests {
    let day = TestEnvironment.day

    @Test func resolutionRefusesEveryEscape() async throws {
        let env = try await TestEnvironment()
        _ = try await env.publisher.publish(editionID: 1, date: day, from: Fixtures.writeFolder(env.temp.sub("in"), pages: Fixtures.pages(1)))
        let fm = FileManager.default
        let root = env.directory.root
        try Data("secret".utf8).write(to: URL(fileURLWithPath: env.temp.path + "/secret.txt"))
        // Links planted inside the editions directory: to a file outside, to a folder outside, to a file inside.
        try fm.createSymbolicLink(atPath: root + "/1/escape.pdf", withDestinationPath: env.temp.path + "/secret.txt")
        try fm.createSymbolicLink(atPath: root + "/1/outside", withDestinationPath: env.temp.path)
        try fm.createSymbolicLink(atPath: root + "/1/inside.jpg", withDestinationPath: root + "/1/2025-06-30/r1/jpg/001.jpg")
        try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/.staging/partial.pdf"))

        #expect(try env.directory.open(servable: "1/2025-06-30/r1/jpg/001.jpg").size == Int64(Fixtures.pages(1)[0].jpg.count))
        let invalid: [String] = [
            "", "/etc/passwd", "../secret.txt", "1/../../secret.txt", "1/2025-06-30/../../../secret.txt", "./1/x",
            "1//2025-06-30", "1/2025-06-30/r1/jpg/001.jpg/", "1\\2025-06-30", "1/2025-06-30/r1/jpg/001.jpg\u{0}.pdf",
            ".staging/partial.pdf", "1/2025-06-30/r1/.bundle.lock", "1/%2e%2e/secret.txt", "1/2025-06-30/r1/jpg/001 .jpg",
            "1/2025-06-30/r1/jpg/00\u{00E9}.jpg", String(repeating: "a/", count: 20) + "b",
        ]
        for path in invalid {
            #expect(throws: EditionsDirectory.ResolutionError.invalidPath, "\(path.debugDescription)") {
                try env.directory.open(servable: path)
            }
        }
        let missing = ["1/escape.pdf", "1/outside/secret.txt", "1/inside.jpg", "1/2025-06-30/r1/jpg", "1/2025-06-30/r9/jpg/001.jpg"]
        for path in missing {
            #expect(throws: EditionsDirectory.ResolutionError.notFound, "\(path)") { try env.directory.open(servable: path) }
        }
        // The editions directory itself may be reached through a link: it is resolved once, at start.
        let alias = env.temp.path + "/alias"
        try fm.createSymbolicLink(atPath: alias, withDestinationPath: root)
        let throughAlias = try EditionsDirectory(path: alias)
        #expect(throughAlias.root == root)
        #expect(try throughAlias.open(servable: "1/2025-06-30/r1/pdf/001.pdf").size > 0)
    }

    @Test func startUpCleanUpRemovesOnlyWhatNobodyUses() async throws {
        let env = try await TestEnvironment()
        let published = try await env.publisher.publish(
            editionID: 1, date: day, from: Fixtures.writeFolder(env.temp.sub("in"), pages: Fixtures.pages(1)))
        let fm = FileManager.default
        let root = env.directory.root
        // Left by killed processes: a staging folder, a temporary bundle, an unreferenced revision.
        try fm.createDirectory(atPath: root + "/.staging/1-2025-06-30-r2-dead/pdf", withIntermediateDirectories: true)
        try Data("partial".utf8).write(to: URL(fileURLWithPath: root + "/1/2025-06-30/r1/.1-2025-06-30.zip.tmp-123-abc"))
        try fm.createDirectory(atPath: root + "/2/2025-06-29/r4/jpg", withIntermediateDirectories: true)
        // In use by a live publish: a locked staging folder.
        try fm.createDirectory(atPath: root + "/.staging/live", withIntermediateDirectories: true)
        let holder = try FS.openDirectory(root + "/.staging/live")
        let lock = try #require(try FileLock.tryLock(holder))
        // Not ours: left alone.
        try fm.createDirectory(atPath: root + "/1/2025-06-30/notes", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: root + "/samples/r1", withIntermediateDirectories: true)

        let report = try await env.directory.cleanUp(registry: env.store)
        #expect(report.stagingFolders == ["1-2025-06-30-r2-dead"])
        #expect(report.temporaryFiles == ["1/2025-06-30/r1/.1-2025-06-30.zip.tmp-123-abc"])
        #expect(report.revisionFolders == ["2/2025-06-29/r4"])
        #expect(!fm.fileExists(atPath: root + "/2/2025-06-29"), "the emptied date folder goes too")
        #expect(fm.fileExists(atPath: root + "/.staging/live"))
        #expect(fm.fileExists(atPath: root + "/1/2025-06-30/notes"))
        #expect(fm.fileExists(atPath: root + "/samples/r1"))
        #expect(fm.fileExists(atPath: env.directory.absolute(published.bundle.path)))
        lock.unlock()
        #expect(try await env.directory.cleanUp(registry: env.store).stagingFolders == ["live"])
        #expect(try await env.directory.cleanUp(registry: env.store).isEmpty)
    }

    @Test func cleanUpSkipsAnIssueBeingPublished() async throws {
        let env = try await TestEnvironment()
        try FileManager.default.createDirectory(atPath: env.directory.absolute("1/2025-06-30/r1"), withIntermediateDirectories: true)
        let lock = try await env.directory.lockIssue(editionID: 1, date: day)
        #expect(try await env.directory.cleanUp(registry: env.store).revisionFolders.isEmpty)
        #expect(FileManager.default.fileExists(atPath: env.directory.absolute("1/2025-06-30/r1")))
        lock.unlock()
        #expect(try await env.directory.cleanUp(registry: env.store).revisionFolders == ["1/2025-06-30/r1"])
    }
}
