import KioskTestSupport
import Foundation
@testable import KioskEditions
import KioskModels
import Testing
@testable import KioskFiles

@Suite struct ArchiveTests {
    /// Runs Python to write an archive at argv[1] (tarfile/zipfile in the script).
    func make(_ script: String, _ arguments: String...) async throws {
        let result = try await run(["python3", "-c", "import io, os, sys, tarfile, zipfile\n" + script] + arguments)
        guard result.status == 0 else { throw CheckFailure(result.error) }
    }

    func refusal(_ archive: String, limits: ArchiveExtractor.Limits = .init()) -> (String, Set<String>)? {
        let out = TemporaryFolder()
        defer {
            // Nothing lands beside the destination (where "../evil.txt" would go).
            #expect(!FileManager.default.fileExists(atPath: FS.parentPath(out.path) + "/evil.txt"), "\(archive) wrote beside the destination")
        }
        do {
            _ = try ArchiveExtractor.extract(archive: archive, into: out.path, limits: limits)
            return nil
        } catch {
            let left = Set(FileManager.default.enumerator(atPath: out.path)?.allObjects as? [String] ?? [])
            return ("\(error)", left)
        }
    }

    @Test func uploadsInEveryFormatPublish() async throws {
        let env = try await TestEnvironment()
        let folder = try await Fixtures.writeFolder(env.temp.sub("issue"), pages: Fixtures.pages(2))
        let archives = env.temp.sub("archives")
        try await make("""
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
                for d, _, names in os.walk(sys.argv[2]):
                    for n in sorted(names):
                        p = os.path.join(d, n)
                        z.write(p, os.path.relpath(p, sys.argv[2]))
            with tarfile.open(sys.argv[3], "w") as t:
                t.add(sys.argv[2], arcname=".")
            with tarfile.open(sys.argv[4], "w:gz") as t:
                t.add(sys.argv[2], arcname="issue-2025-06-30")
            with tarfile.open(sys.argv[5], "w", format=tarfile.PAX_FORMAT) as t:
                t.add(sys.argv[2], arcname="x" * 120)
            """, archives + "/a.zip", folder, archives + "/b.tar", archives + "/c.tar.gz", archives + "/d.tar")
        for (index, name) in ["a.zip", "b.tar", "c.tar.gz", "d.tar"].enumerated() {
            let out = env.temp.sub("out\(index)")
            let root = try ArchiveExtractor.extract(archive: archives + "/" + name, into: out)
            #expect(readFile(root + "/pdf/002.pdf") == readFile(folder + "/pdf/002.pdf"), "\(name)")
            let result = try await env.publisher.publish(editionID: 1, date: TestEnvironment.day, from: root)
            #expect(result.revision == index + 1)
        }
    }

    @Test func zipSlipLinksAndOddEntriesAreRefused() async throws {
        let temp = TemporaryFolder()
        let a = temp.path
        try await make("""
            a = sys.argv[1]
            def z(name, entries):
                with zipfile.ZipFile(os.path.join(a, name), "w") as f:
                    for info, data in entries:
                        f.writestr(info, data)
            z("slip.zip", [("issue.json", "{}"), ("../evil.txt", "x")])
            z("slip2.zip", [("pdf/../../evil.txt", "x")])
            z("abs.zip", [("/tmp/evil.txt", "x")])
            z("backslash.zip", [("..\\\\evil.txt", "x")])
            link = zipfile.ZipInfo("pdf/001.pdf"); link.create_system = 3; link.external_attr = 0o120777 << 16
            z("link.zip", [("issue.json", "{}"), (link, "/etc/passwd")])
            z("dup.zip", [("a.pdf", "1"), ("a.pdf", "2")])
            z("dot.zip", [(".hidden", "x")])
            def t(name, members):
                with tarfile.open(os.path.join(a, name), "w") as f:
                    for info, data in members:
                        f.addfile(info, io.BytesIO(data) if data is not None else None)
            def info(name, type=tarfile.REGTYPE, size=0, linkname=""):
                i = tarfile.TarInfo(name); i.type = type; i.size = size; i.linkname = linkname; return i
            t("slip.tar", [(info("../evil.txt", size=1), b"x")])
            t("abs.tar", [(info("/tmp/evil.txt", size=1), b"x")])
            t("symlink.tar", [(info("pdf", tarfile.DIRTYPE), None), (info("pdf/001.pdf", tarfile.SYMTYPE, linkname="/etc/passwd"), None)])
            t("hardlink.tar", [(info("a.pdf", tarfile.LNKTYPE, linkname="/etc/passwd"), None)])
            t("device.tar", [(info("null", tarfile.CHRTYPE), None)])
            t("fifo.tar", [(info("pipe", tarfile.FIFOTYPE), None)])
            # A symlinked folder followed by a file written through it.
            t("linkdir.tar", [(info("d", tarfile.SYMTYPE, linkname="/tmp"), None), (info("d/evil.txt", size=1), b"x")])
            open(os.path.join(a, "junk.bin"), "wb").write(b"not an archive" * 100)
            """, a)
        let cases: [(String, String)] = [
            ("slip.zip", #"upload entry "../evil.txt": "../evil.txt" leaves the folder (..)"#),
            ("slip2.zip", "leaves the folder"),
            ("abs.zip", "is an absolute path"),
            ("backslash.zip", "contains a backslash"),
            ("link.zip", #"upload entry "pdf/001.pdf": is a symbolic link"#),
            ("dup.zip", #"upload entry "a.pdf": appears twice in the archive"#),
            ("dot.zip", "names may not start with a dot"),
            ("slip.tar", "leaves the folder"),
            ("abs.tar", "is an absolute path"),
            ("symlink.tar", #"upload entry "pdf/001.pdf": is a symbolic link"#),
            ("hardlink.tar", "is a hard link"),
            ("device.tar", "is not a plain file or folder"),
            ("fifo.tar", "is not a plain file or folder"),
            ("linkdir.tar", #"upload entry "d": is a symbolic link"#),
            ("junk.bin", "is neither a ZIP nor a tar archive"),
        ]
        for (name, expected) in cases {
            let found = refusal(a + "/" + name)
            #expect(found?.0.contains(expected) == true, "\(name): \(found?.0 ?? "accepted")")
            #expect(found?.1.contains { $0.hasSuffix("evil.txt") } == false, "\(name) left \(found?.1 ?? [])")
        }
        #expect(!FileManager.default.fileExists(atPath: a + "/evil.txt"))
    }

    @Test func bombsStopAtTheLimits() async throws {
        let temp = TemporaryFolder()
        try await make("""
            a = sys.argv[1]
            with zipfile.ZipFile(os.path.join(a, "big.zip"), "w", zipfile.ZIP_DEFLATED) as f:
                f.writestr("issue.json", "{}")
                f.writestr("pdf/001.pdf", b"\\0" * (8 << 20))
            with zipfile.ZipFile(os.path.join(a, "many.zip"), "w", zipfile.ZIP_DEFLATED) as f:
                for i in range(50):
                    f.writestr("f%d.bin" % i, b"\\0" * (1 << 20))
            with tarfile.open(os.path.join(a, "big.tar.gz"), "w:gz") as t:
                i = tarfile.TarInfo("pdf/001.pdf"); i.size = 8 << 20
                t.addfile(i, io.BytesIO(b"\\0" * (8 << 20)))
            """, temp.path)
        // Lie about the size: patch the central directory's uncompressed size of pdf/001.pdf down to 1000.
        var bytes = readFile(temp.path + "/big.zip")
        let central = bytes.occurrencesStart(of: [0x50, 0x4B, 0x01, 0x02]).last!
        bytes.replaceSubrange((central + 24)..<(central + 28), with: [0xE8, 0x03, 0, 0])
        try Data(bytes).write(to: URL(fileURLWithPath: temp.path + "/liar.zip"))

        let limits = ArchiveExtractor.Limits(maxEntries: 20, maxFileBytes: 4 << 20, maxTotalBytes: 16 << 20)
        #expect(refusal(temp.path + "/big.zip", limits: limits)?.0.contains("is 8388608 bytes; the limit per file is 4194304 bytes") == true)
        #expect(refusal(temp.path + "/liar.zip", limits: limits)?.0.contains("inflates to more than its declared size") == true)
        #expect(refusal(temp.path + "/many.zip", limits: .init(maxEntries: 20))?.0.contains("more than 20 entries") == true)
        #expect(refusal(temp.path + "/many.zip", limits: .init(maxTotalBytes: 10 << 20))?.0.contains("unpacks to more than") == true)
        #expect(refusal(temp.path + "/big.tar.gz", limits: limits)?.0.contains("the limit per file is 4194304 bytes") == true)
    }
}

extension Array where Element == UInt8 {
    /// Offsets where `pattern` starts.
    func occurrencesStart(of pattern: [UInt8]) -> [Int] {
        guard count >= pattern.count else { return [] }
        return (0...(count - pattern.count)).filter { self[$0] == pattern[0] && self[$0..<($0 + pattern.count)].elementsEqual(pattern) }
    }
}
