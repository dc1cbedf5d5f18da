#if canImport(Glibc)
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
package enum ArchiveReader {
    /// Hands every entry of the archive at `file` to `sink`; a gzip stream is cut off after
    /// `inflatedLimit` bytes. Blocking.
    package static func read<Sink: ArchiveSink>(_ file: OpenFile, into sink: inout Sink, inflatedLimit: Int64) throws {
        let size = Int64(try file.status().st_size)
        let magic = try file.bytes(at: 0, count: 4)
        if magic.starts(with: [0x50, 0x4B, 0x03, 0x04]) || magic.starts(with: [0x50, 0x4B, 0x05, 0x06]) {
            try ZipReader(file: file, size: size).extract(into: &sink)
        } else if magic.starts(with: [0x1F, 0x8B]) {
            var source = try GzipSource(file: file, limit: inflatedLimit)
            try TarReader.extract(from: &source, into: &sink)
        } else if size >= 512, try TarReader.looksLikeTar(file) {
            var source = PlainSource(file: file)
            try TarReader.extract(from: &source, into: &sink)
        } else {
            throw ArchiveError("is neither a ZIP nor a tar archive (optionally gzip-compressed)")
        }
    }
}
