import Foundation
import Testing
@testable import KioskEditions
@testable import KioskFiles

/// Inputs the fuzzers (Fuzz/) found; each stays here as a regression test and in Fuzz/corpus/.
@Suite struct FuzzRegressionTests {
    static let secret = "fuzz-link-secret-0123456789abcdefghijklmnopqrstuv"
    static let now: Int64 = 1_750_000_000

    static func split(_ link: String) -> (String, String?) {
        guard let mark = link.firstIndex(of: "?") else { return (link, nil) }
        return (String(link[..<mark]), String(link[link.index(after: mark)...]))
    }

    /// Fuzz/corpus/links/crash-combining-mark-after-slash: a path starting with a combining mark made
    /// `String.hasPrefix("/files/")` false (the mark joins the "/" into one Character), so our own link was
    /// refused. verify now compares bytes.
    @Test(arguments: [LinkFormat.kiosk, .nginx])
    func ownLinkWithACombiningMarkAfterASlashVerifies(format: LinkFormat) {
        let links = SignedLinks(format: format, secret: Self.secret, prefix: "/files", baseURL: "http://k")
        for relative in ["\u{035A}\u{FFFD}=e&e|p", "1/\u{0301}x.pdf"] {
            let (path, query) = Self.split(links.path(to: relative, now: Self.now))
            #expect(links.verify(rawPath: path, query: query, now: Self.now) == .valid(relativePath: relative))
        }
    }

    /// The same Character comparison hid "/../" followed by a combining mark from the nginx format's
    /// normalisation check (nginx, working on bytes, would resolve it).
    @Test func nginxRefusesDotDotHiddenByACombiningMark() {
        let links = SignedLinks(format: .nginx, secret: Self.secret, prefix: "/files", baseURL: "http://k")
        for relative in ["a/../\u{0301}x", "a//\u{0301}x", "a/./\u{0301}x", "a/..", "a/."] {
            let (path, query) = Self.split(links.path(to: relative, now: Self.now))
            #expect(links.verify(rawPath: path, query: query, now: Self.now) == .forbidden(reason: "unnormalised path"),
                    "\(relative.debugDescription)")
        }
    }
}

/// Fuzz/corpus/manifest/crash-pax-short-record: a pax extended header record "1 " (a length shorter than
/// its own "<len> " prefix) trapped in `TarReader.paxPath` (Range lowerBound > upperBound) and took the
/// whole server down with one upload; a huge length overflowed `index + length`. Both now end the parse.
@Suite struct PaxHeaderRegressionTests {
    @Test(arguments: ["1 ", "2 x", "9223372036854775807 path=x\n", "5 a=b\n", "3 \n"])
    func malformedPaxRecordsDoNotTrap(record: String) {
        _ = TarReader.paxPath(Array(record.utf8))
    }

    @Test func wellFormedPaxPathStillReads() {
        let record = "16 path=a/b.pdf\n"
        #expect(TarReader.paxPath(Array(record.utf8)) == "a/b.pdf")
    }
}

/// The committed seeds of the archive fuzzers (Fuzz/corpus/{tar,gzip,zip}/, written by
/// Fuzz/make-archive-seeds.py): each archive among them, without its selector byte, unpacks or is
/// refused with a `PublishRejected`; never a trap, never another error (an HTTP 500).
@Suite struct ArchiveSeedRegressionTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus").path

    /// The seeds that are archives as they stand: tar seeds whose selector asks for no gzip, and the
    /// raw and hostile gzip and ZIP seeds.
    static func archives() -> [String] {
        var paths: [String] = []
        for target in ["tar", "gzip", "zip"] {
            let folder = corpus + "/" + target
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() {
                let path = folder + "/" + name
                let selector = readFile(path).first ?? 0xFF
                if (target == "tar" && selector & 2 == 0) || (target != "tar" && (name.hasPrefix("raw-") || name.hasPrefix("hostile-"))) {
                    paths.append(path)
                }
            }
        }
        return paths
    }

    @Test func everyArchiveSeedUnpacksOrIsRefused() throws {
        let seeds = Self.archives()
        #expect(seeds.count >= 20, "\(seeds.count) seeds under \(Self.corpus)")
        for seed in seeds {
            let temp = TemporaryFolder()
            try Data(readFile(seed).dropFirst()).write(to: URL(fileURLWithPath: temp.path + "/upload"))
            do {
                _ = try ArchiveExtractor.extract(archive: temp.path + "/upload", into: temp.sub("out"))
            } catch is PublishRejected {
            } catch {
                Issue.record("\(seed): \(type(of: error)) \(error)")
            }
        }
    }
}
