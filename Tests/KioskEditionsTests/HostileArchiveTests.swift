import KioskSQLite
import Foundation
@testable import KioskEditions
@testable import KioskFiles
import KioskModels
import KioskTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

private typealias A = CraftedArchives

/// Uploads built byte by byte (valid checksums and CRCs, so each gets past the format's own checks to
/// the field it is aimed at) whose numbers are out of range. Unchecked, each one traps (a crash of the
/// whole server) or fails a system call (an empty 500). Each must be a `PublishRejected` naming the problem, with nothing
/// published and nothing left.
@Suite struct HostileArchiveTests {
    /// What the publish route does with an upload: unpack it, then publish the folder. Returns the
    /// refusal; records an issue when the upload was published or failed with anything but a refusal.
    func refusal(_ bytes: [UInt8], limits: ArchiveExtractor.Limits = .init(),
                 sourceLocation: SourceLocation = #_sourceLocation) async throws -> PublishRejected? {
        let env = try await TestEnvironment()
        let upload = env.temp.path + "/upload"
        try Data(bytes).write(to: URL(fileURLWithPath: upload))
        let out = env.temp.sub("out")
        let before = env.tree()
        do {
            let folder = try ArchiveExtractor.extract(archive: upload, into: out, limits: limits)
            _ = try await env.publisher.publish(editionID: 1, date: TestEnvironment.day, from: folder)
            Issue.record("published", sourceLocation: sourceLocation)
            return nil
        } catch let rejected as PublishRejected {
            #expect(env.tree() == before, "the editions directory changed", sourceLocation: sourceLocation)
            #expect(try await env.store.issueContents(editionID: 1, date: TestEnvironment.day) == nil, sourceLocation: sourceLocation)
            return rejected
        } catch {
            Issue.record("not a refusal (would answer 500): \(type(of: error)) \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// Expects a refusal of the archive as a whole (HTTP 400, not 413) that says `expected`.
    func expectRefused(_ bytes: [UInt8], _ expected: String, exceedsLimit: Bool = false,
                       sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let rejected = try await refusal(bytes, sourceLocation: sourceLocation)
        #expect(rejected?.description.contains(expected) == true, "\(rejected?.description ?? "no refusal")",
                sourceLocation: sourceLocation)
        #expect(rejected?.exceedsLimit == exceedsLimit, sourceLocation: sourceLocation)
    }

    // MARK: tar

    /// A GNU base-256 size near `Int64.max` (valid checksum): rounding it up to whole blocks overflows
    /// unless checked; negative and unreadable sizes, and sizes past the end, are refused as well.
    @Test(arguments: [
        (A.base256(UInt64(Int64.max)), "has a size larger than any file can be"),
        (A.base256(UInt64(Int64.max) - 511), "the upload is truncated or damaged"),
        (A.base256(UInt64(Int64.max) - 510), "has a size larger than any file can be"),
        ([0x80] + [UInt8](repeating: 0xFF, count: 11), "has a size larger than any file can be"),   // 2^88 - 1
        (A.base256(1 << 40), "declares 1099511627776 bytes, but only"),
        (A.base256(0xFFFF_FFFF_FFFF_FFFF, first: 0xFF), "has a negative size"),                     // -1
        ([UInt8](repeating: 0xFF, count: 12), "has a negative size"),
        (A.octal(0o77777777777), "declares 8589934591 bytes, but only 1024 bytes"),
        (Array("77777777777777777777777\0".utf8.prefix(12)), "declares"),
        (Array("0000000012a\0".utf8), "has an unreadable size"),
        (Array("-0000000001\0".utf8), "has an unreadable size"),
    ])
    func tarSizeFieldsOutOfRange(field: [UInt8], expected: String) async throws {
        let tar = A.tarHeader("issue.json", sizeField: field) + A.tarEnd
        try await expectRefused(tar, expected)
    }

    /// The same sizes in a tar.gz, where the reader cannot know what remains: the limits refuse them.
    @Test func gzippedTarSizesOutOfRange() async throws {
        let huge = A.gzipMember(A.tarHeader("issue.json", sizeField: A.base256(UInt64(Int64.max))) + A.tarEnd)
        try await expectRefused(huge, "has a size larger than any file can be")
        let negative = A.gzipMember(A.tarHeader("issue.json", sizeField: A.base256(0xFFFF_FFFF_FFFF_FFFF, first: 0xFF)) + A.tarEnd)
        try await expectRefused(negative, "has a negative size")
        let big = A.gzipMember(A.tarHeader("a.pdf", sizeField: A.base256(UInt64(Int64.max) - 511)) + A.tarEnd)
        try await expectRefused(big, "the limit per file is", exceedsLimit: true)
    }

    @Test func paxSizesAndRecordsOutOfRange() async throws {
        let cases: [([UInt8], String)] = [
            (A.paxRecord("size", "99999999999999999999999"), "whose size is not a number of bytes"),
            (A.paxRecord("size", "9223372036854775807"), "has a size larger than any file can be"),
            (A.paxRecord("size", "9223372036854775296"), "the upload is truncated or damaged"),
            (A.paxRecord("size", "-1"), "whose size is not a number of bytes"),
            (A.paxRecord("size", "+12"), "whose size is not a number of bytes"),
            (A.paxRecord("size", ""), "whose size is not a number of bytes"),
            (Array("1 ".utf8), "has a damaged pax extended header"),
            (Array("9223372036854775807 path=x\n".utf8), "has a damaged pax extended header"),
            (Array("99999999999999999999999 path=x\n".utf8), "has a damaged pax extended header"),
            (Array("5 a=b\n".utf8), "has a damaged pax extended header"),
            (Array("7 path\n".utf8), "has a damaged pax extended header"),
        ]
        for (records, expected) in cases {
            let tar = A.paxHeader(records) + A.tarFile("issue.json", Array("{}".utf8)) + A.tarEnd
            try await expectRefused(tar, expected)
        }
        // A pax size that is right is used instead of the header's.
        var header = A.tarHeader("issue.json", sizeField: A.octal(0))
        header = A.withChecksum(header)
        let good = A.paxHeader(A.paxRecord("size", "2")) + header + A.padded(Array("{}".utf8)) + A.tarEnd
        let out = TemporaryFolder()
        let upload = out.path + "/up.tar"
        try Data(good).write(to: URL(fileURLWithPath: upload))
        let folder = try ArchiveExtractor.extract(archive: upload, into: out.sub("x"))
        #expect(readFile(folder + "/issue.json") == Array("{}".utf8))
    }

    /// Long names and global headers: their sizes are bounded before anything is read.
    @Test func extendedHeadersOutOfRange() async throws {
        for type in [UInt8(ascii: "L"), UInt8(ascii: "x"), UInt8(ascii: "g")] {
            try await expectRefused(A.tarHeader("././@LongLink", type: type, sizeField: A.base256(UInt64(Int64.max))) + A.tarEnd,
                                    "has a size larger than any file can be")
            try await expectRefused(A.tarHeader("././@LongLink", type: type, sizeField: A.octal(1 << 20))
                                    + [UInt8](repeating: 0x41, count: 1 << 20) + A.tarEnd,
                                    "tar extended header of 1048576 bytes")
        }
        // A folder entry whose size runs past the end.
        try await expectRefused(A.tarHeader("pdf/", type: UInt8(ascii: "5"), sizeField: A.base256(1 << 50)) + A.tarEnd,
                                "the upload is truncated or damaged")
    }

    // MARK: ZIP

    /// A 128-byte ZIP whose ZIP64 end record claims 2^64 - 1 entries (a trap when converted to Int64
    /// unchecked), and its variants: directory and record offsets past the end or past `Int64.max`.
    @Test func zip64EndRecordsOutOfRange() async throws {
        #expect(A.zip64Claiming().count == 128)
        let cases: [([UInt8], String)] = [
            (A.zip64Claiming(), "it claims 18446744073709551615 entries"),
            (A.zip64Claiming(count: 1 << 40), "it claims 1099511627776 entries"),
            (A.zip64Claiming(count: 1, directorySize: 0xFFFF_FFFF_FFFF_FFFF), "its central directory is said to lie outside"),
            (A.zip64Claiming(count: 1, directorySize: 10, directoryOffset: 0xFFFF_FFFF_FFFF_FFF0), "its central directory is said to lie outside"),
            (A.zip64Claiming(count: 1, directorySize: UInt64(Int64.max), directoryOffset: UInt64(Int64.max)),
             "its central directory is said to lie outside"),
            (A.zip64Claiming(count: 1, directorySize: 46, directoryOffset: 100), "its central directory is said to lie outside"),
            (A.zip64Claiming(recordOffset: 0xFFFF_FFFF_FFFF_FFFF), "its end record is said to be outside the archive"),
            (A.zip64Claiming(recordOffset: UInt64(Int64.max)), "its end record is said to be outside the archive"),
            (A.zip64Claiming(recordOffset: 0), "no ZIP64 end of central directory record where its locator points"),
            (A.zip64Claiming(count: 0, directorySize: 0, directoryOffset: 0), "has no issue.json"),
        ]
        for (zip, expected) in cases {
            if expected == "has no issue.json" {
                // Empty and well-formed: refused for what it lacks, not as damaged.
                let rejected = try await refusal(zip)
                #expect(rejected?.description.contains("issue.json: is missing") == true, "\(rejected?.description ?? "")")
            } else {
                try await expectRefused(zip, expected)
            }
        }
    }

    /// An end record at the very start that asks for ZIP64: its locator would be at offset -20, where
    /// `pread` fails (a system error, an empty 500, unless caught first).
    @Test func endRecordsThatPointBeforeTheStartOfTheFile() async throws {
        let alone = A.le32(0x0605_4B50) + A.le16(0) + A.le16(0) + A.le16(0xFFFF) + A.le16(0xFFFF) + A.le32(0) + A.le32(0) + A.le16(0)
        try await expectRefused(alone, "no ZIP64 end of central directory locator")
        // The classic record pointing past the end, and past 4 GiB.
        try await expectRefused(A.zipLocal("a", []) + A.zipEnd(count: 1, directorySize: 46, directoryOffset: 0xFFFF_FFF0),
                                "its central directory is said to lie outside")
        try await expectRefused(A.zipLocal("a", []) + A.zipEnd(count: 0xFFFE, directorySize: 46, directoryOffset: 0),
                                "it claims 65534 entries")
        try await expectRefused(A.zipLocal("a", []) + A.zipEnd(count: 1, directorySize: 0, directoryOffset: 0),
                                "it claims 1 entries")
    }

    /// Entries whose offsets and sizes, 32-bit or from the ZIP64 extra field, lie outside the file or
    /// overflow when added.
    @Test func zipEntryOffsetsAndSizesOutOfRange() async throws {
        let data = Array("{}".utf8)
        let n = UInt32(data.count)
        let ones: UInt32 = 0xFFFF_FFFF
        let cases: [([UInt8], String)] = [
            // Local header past the end (32-bit and ZIP64), and at the largest offsets.
            (A.zip("issue.json", data) { A.zipCentral("issue.json", crc: $0, compressedSize: n, size: n, localOffset: 0x7FFF_0000) },
             "has its local header outside the archive"),
            (A.zip("issue.json", data) {
                A.zipCentral("issue.json", crc: $0, compressedSize: n, size: n, localOffset: ones, extra: A.zip64Extra([UInt64(Int64.max)]))
            }, "has its local header outside the archive"),
            (A.zip("issue.json", data) {
                A.zipCentral("issue.json", crc: $0, compressedSize: n, size: n, localOffset: ones, extra: A.zip64Extra([0xFFFF_FFFF_FFFF_FFF0]))
            }, "has a ZIP64 size or offset larger than any file can be"),
            // Sizes: the offset of the data plus the compressed size overflows, or runs past the end.
            (A.zip("issue.json", data) {
                A.zipCentral("issue.json", crc: $0, compressedSize: ones, size: ones, localOffset: 0,
                             extra: A.zip64Extra([UInt64(Int64.max), UInt64(Int64.max)]))
            }, "runs past the end of the archive"),
            (A.zip("issue.json", data) {
                A.zipCentral("issue.json", crc: $0, compressedSize: ones, size: n, localOffset: 0, extra: A.zip64Extra([UInt64.max]))
            }, "has a ZIP64 size or offset larger than any file can be"),
            (A.zip("issue.json", data) { A.zipCentral("issue.json", crc: $0, compressedSize: 0x7FFF_FFFF, size: n, localOffset: 0) },
             "runs past the end of the archive"),
            // The extra field's declared length runs past the entry's extra data and the directory.
            (A.zip("issue.json", data) {
                A.zipCentral("issue.json", crc: $0, compressedSize: n, size: ones, localOffset: 0, extra: A.zip64Extra([], declaredLength: 0xFFF0))
            }, "has a damaged extra field"),
            (A.zip("issue.json", data) {
                A.zipCentral("issue.json", crc: $0, compressedSize: n, size: ones, localOffset: 0, extra: A.zip64Extra([2], declaredLength: 16))
            }, "has a damaged extra field"),
            // The entry's name and extra lengths run past the directory.
            (A.zip("issue.json", data) { A.zipCentral("issue.json", crc: $0, compressedSize: n, size: n, localOffset: 0, nameLength: 0xFFFF) },
             "runs past the directory's end"),
            (A.zip("issue.json", data) { A.zipCentral("issue.json", crc: $0, compressedSize: n, size: n, localOffset: 0, extraLength: 0xFFFF) },
             "runs past the directory's end"),
        ]
        for (index, (zip, expected)) in cases.enumerated() {
            let rejected = try await refusal(zip)
            #expect(rejected?.description.contains(expected) == true, "case \(index): \(rejected?.description ?? "no refusal")")
        }
        // Sanity: the builder's ZIP, untouched, unpacks.
        let out = TemporaryFolder()
        try Data(A.zip("issue.json", data)).write(to: URL(fileURLWithPath: out.path + "/ok.zip"))
        let folder = try ArchiveExtractor.extract(archive: out.path + "/ok.zip", into: out.sub("x"))
        #expect(readFile(folder + "/issue.json") == data)
    }

    // MARK: gzip

    @Test func damagedGzipStreamsAreRefused() async throws {
        let tar = A.minimalTar
        let member = A.gzipMember(tar)
        let cases: [([UInt8], String)] = [
            (A.gzipMember(tar, method: 7), "is a damaged gzip stream (unknown compression method)"),
            (Array(member.prefix(member.count / 2)), "is a truncated gzip stream"),
            (Array(member.prefix(12)), "is a truncated gzip stream"),
            ([0x1F, 0x8B], "is a truncated gzip stream"),
            (A.gzipMember(tar, breakTrailer: true), "is a damaged gzip stream (incorrect data check)"),
            (Array(A.gzipMember(tar, extra: [1, 2, 3]).prefix(10)) + A.le16(0xFFFF) + [1, 2, 3], "is a truncated gzip stream"),
            (Array(A.gzipMember(tar, headerCRC: true).enumerated().map { $0.offset == 10 ? $0.element ^ 0xFF : $0.element }),
             "is a damaged gzip stream (header crc mismatch)"),
            (member + [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3, 0xFF, 0xFF], "is a damaged gzip stream"),
            (A.gzipMember(Array(tar.prefix(700))), "is truncated"),
        ]
        for (index, (gzip, expected)) in cases.enumerated() {
            let rejected = try await refusal(gzip)
            #expect(rejected?.description.contains(expected) == true, "case \(index): \(rejected?.description ?? "no refusal")")
        }
    }

    /// Well-formed gzip that is unusual: several members (as `cat a.gz b.gz` makes), a 64 KiB extra
    /// field, a file name, a header CRC, bytes after the last member.
    @Test func unusualButValidGzipUnpacks() throws {
        let tar = A.minimalTar
        let split = 700
        let variants: [[UInt8]] = [
            A.gzipMember(Array(tar.prefix(split))) + A.gzipMember(Array(tar.dropFirst(split))),
            A.gzipMember([]) + A.gzipMember(tar) + A.gzipMember([]),
            A.gzipMember(tar, extra: [UInt8](repeating: 7, count: 0xFFFF), name: "issue.tar", headerCRC: true),
            A.gzipMember(tar) + [0, 0, 0, 0],
            A.gzipMember(tar) + Array("trailing garbage".utf8),
        ]
        for (index, gzip) in variants.enumerated() {
            let out = TemporaryFolder()
            try Data(gzip).write(to: URL(fileURLWithPath: out.path + "/up.tar.gz"))
            let folder = try ArchiveExtractor.extract(archive: out.path + "/up.tar.gz", into: out.sub("x"))
            #expect(readFile(folder + "/issue.json") == Array("{}".utf8), "variant \(index)")
        }
    }

    // MARK: Read errors and write errors

    /// A read that fails (here: the "archive" is a folder, so `pread` fails with EISDIR) is a refusal
    /// of the upload (400), not a `SystemError` (500).
    @Test func aFailedReadOfTheUploadIsARefusal() throws {
        let temp = TemporaryFolder()
        let folder = temp.sub("not-a-file")
        let error = #expect(throws: PublishRejected.self) {
            _ = try ArchiveExtractor.extract(archive: folder, into: temp.sub("out"))
        }
        #expect(error?.description.contains("cannot be read (read failed: Is a directory)") == true, "\(String(describing: error))")
    }

    /// A failure writing what was unpacked (the disk is full) stays a `SystemError` (the server's
    /// problem: 507), not a refusal of the upload.
    @Test func aFullDiskWhileUnpackingIsTheServersError() throws {
        struct DevFull: ArchiveSink {
            struct Writer: ArchiveFileWriter {
                let file: OpenFile
                mutating func write(_ bytes: UnsafeRawBufferPointer) throws { try file.write(bytes) }
            }
            mutating func directory(_ name: String) throws {}
            mutating func file(_ name: String, declaredSize: Int64?, contents: (inout Writer) throws -> Void) throws {
                var writer = Writer(file: try FS.open("/dev/full", O_WRONLY))
                try contents(&writer)
            }
        }
        let temp = TemporaryFolder()
        for (name, bytes) in [("a.tar", A.minimalTar), ("a.tar.gz", A.gzipMember(A.minimalTar)), ("a.zip", A.zip("issue.json", Array("{}".utf8)))] {
            try Data(bytes).write(to: URL(fileURLWithPath: temp.path + "/" + name))
            let error = #expect(throws: SystemError.self, "\(name)") {
                var sink = DevFull()
                try ArchiveReader.read(try FS.open(temp.path + "/" + name, O_RDONLY), into: &sink, inflatedLimit: 1 << 20)
            }
            #expect(error?.isOutOfSpace == true, "\(name): \(String(describing: error))")
        }
    }
}
