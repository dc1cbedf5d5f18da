#if canImport(Glibc)
import KioskIntegers
import Glibc
#endif
/// Why an archive could not be read: damaged, truncated, of an unknown kind, or holding an entry the
/// readers refuse (links, devices, encryption, unknown compression).
package struct ArchiveError: Error, Sendable, CustomStringConvertible {
    /// The entry's name as the archive spells it; nil for the archive as a whole.
    package var entry: String?
    package var problem: String
    /// The archive unpacks to more than the reader's output limit.
    package var exceedsLimit: Bool

    package init(entry: String? = nil, _ problem: String, exceedsLimit: Bool = false) {
        self.entry = entry; self.problem = problem; self.exceedsLimit = exceedsLimit
    }

    package var description: String { entry.map { "\($0.debugDescription) \(problem)" } ?? problem }
}

/// Where a reader puts what it finds, in archive order. The sink checks names and sizes; the readers
/// only decode.
package protocol ArchiveSink {
    associatedtype Writer: ArchiveFileWriter
    /// A folder entry.
    mutating func directory(_ name: String) throws
    /// A plain file entry: `contents` writes its bytes through the sink's writer.
    mutating func file(_ name: String, declaredSize: Int64?, contents: (inout Writer) throws -> Void) throws
}

/// Receives one file entry's bytes.
package protocol ArchiveFileWriter {
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws
}

/// Reads ZIP, tar and gzip-compressed tar archives, told apart by content.
///
/// Every failure to read the archive itself is an `ArchiveError` (a damaged upload); errors of the sink
/// and its writers (a full disk while writing what was unpacked) pass through unchanged.
package enum ArchiveReader {
    /// Hands every entry of the archive at `file` to `sink`; a gzip stream is cut off after
    /// `inflatedLimit` bytes. Blocking.
    package static func read<Sink: ArchiveSink>(_ file: OpenFile, into sink: inout Sink, inflatedLimit: Int64) throws {
        let input = try ArchiveInput(file)
        let magic = try input.bytes(at: 0, count: 4)
        if magic.starts(with: [0x50, 0x4B, 0x03, 0x04]) || magic.starts(with: [0x50, 0x4B, 0x05, 0x06]) {
            try ZipReader(input: input).extract(into: &sink)
        } else if magic.starts(with: [0x1F, 0x8B]) {
            var source = try GzipSource(input: input, limit: inflatedLimit)
            try TarReader.extract(from: &source, into: &sink)
        } else if input.size >= 512, try TarReader.looksLikeTar(input) {
            var source = PlainSource(input: input)
            try TarReader.extract(from: &source, into: &sink)
        } else {
            throw ArchiveError("is neither a ZIP nor a tar archive (optionally gzip-compressed)")
        }
    }
}

/// The archive being read, by position, with its size fixed when opened. A read outside the file, or a
/// failed system call, is an `ArchiveError`: nothing read from an upload ever reaches `pread` with a
/// negative offset, and no read failure leaves as a `SystemError` (which would answer 500).
package struct ArchiveInput: Sendable {
    package let file: OpenFile
    /// Bytes in the file.
    package let size: Int64

    package init(_ file: OpenFile) throws {
        self.file = file
        let info: stat
        do { info = try file.status() } catch let error as SystemError { throw Self.failure(error) }
        size = Int64(widening: info.st_size)
    }

    /// Reads up to `count` bytes at `offset`: fewer, or none, past the end of the file.
    package func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int64) throws -> Int {
        guard offset >= 0 else { throw Self.beforeStart(offset) }
        guard offset < size, count > 0 else { return 0 }
        do { return try file.read(into: buffer, count: count, at: offset) } catch let error as SystemError {
            throw Self.failure(error)
        }
    }

    /// The `count` bytes at `offset`, fewer (possibly none) past the end of the file.
    package func bytes(at offset: Int64, count: Int) throws -> [UInt8] {
        guard offset >= 0 else { throw Self.beforeStart(offset) }
        guard count > 0, offset < size else { return [] }
        var result = [UInt8](repeating: 0, count: Int(widening: min(Int64(widening: count), size - offset)))
        let n = try result.withUnsafeMutableBytes { raw -> Int in
            guard let base = raw.baseAddress else { return 0 }
            return try read(into: base, count: raw.count, at: offset)
        }
        result.removeLast(result.count - n)
        return result
    }

    static func beforeStart(_ offset: Int64) -> ArchiveError {
        ArchiveError("is damaged: it points to byte \(offset), before the start of the archive")
    }

    static func failure(_ error: SystemError) -> ArchiveError {
        ArchiveError("cannot be read (\(error.call) failed: \(String(cString: strerror(error.code))))")
    }
}
