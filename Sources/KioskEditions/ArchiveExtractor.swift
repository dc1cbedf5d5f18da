#if canImport(Glibc)
import Glibc
#endif
import CLibZ

/// Unpacks an uploaded publish folder (ZIP, tar or gzip-compressed tar, told apart by content) into an
/// empty folder, refusing anything that could write outside it or is not a plain file or folder:
/// absolute names, `..`, backslashes, symbolic and hard links, devices, duplicate names, encrypted or
/// unknown compression; and bounding entry count, each file and the total (a ZIP bomb stops at the limit).
public enum ArchiveExtractor {
    public struct Limits: Sendable, Hashable {
        public var maxEntries: Int
        public var maxFileBytes: Int64
        public var maxTotalBytes: Int64
        public init(maxEntries: Int = 10_000, maxFileBytes: Int64 = 200 << 20, maxTotalBytes: Int64 = 4 << 30) {
            self.maxEntries = maxEntries; self.maxFileBytes = maxFileBytes; self.maxTotalBytes = maxTotalBytes
        }

        /// Limits matching a publish's.
        public init(publish: PublishLimits) {
            self.init(maxEntries: publish.maxPages * 3 + 100, maxFileBytes: max(publish.maxFileBytes, Int64(PublishManifest.maxBytes)),
                      maxTotalBytes: publish.maxIssueBytes + Int64(PublishManifest.maxBytes))
        }
    }

    /// Extracts `archive` into `destination` (an existing empty folder) and returns the folder holding
    /// `issue.json`: `destination` itself, or its only subfolder when the archive wraps everything in one.
    /// Throws `PublishRejected` naming the entry for anything refused. Blocking.
    public static func extract(archive: String, into destination: String, limits: Limits = Limits()) throws -> String {
        let file: OpenFile
        do { file = try FS.open(archive, O_RDONLY) } catch { throw PublishRejected(file: "upload", "cannot be read: \(error)") }
        let size = Int64(try file.status().st_size)
        let magic = try file.bytes(at: 0, count: 4)
        let root = try FS.openDirectory(destination)
        var sink = Sink(root: root, limits: limits)
        if magic.starts(with: [0x50, 0x4B, 0x03, 0x04]) || magic.starts(with: [0x50, 0x4B, 0x05, 0x06]) {
            try ZipReader(file: file, size: size).extract(into: &sink)
        } else if magic.starts(with: [0x1F, 0x8B]) {
            var source = try GzipSource(file: file, limit: limits.maxTotalBytes + (64 << 20))
            try TarReader.extract(from: &source, into: &sink)
        } else if size >= 512, try TarReader.looksLikeTar(file) {
            var source = PlainSource(file: file)
            try TarReader.extract(from: &source, into: &sink)
        } else {
            throw PublishRejected(file: "upload", "is neither a ZIP nor a tar archive (optionally gzip-compressed)")
        }
        if FS.exists(destination + "/" + PublishManifest.fileName) { return destination }
        let top = try FS.list(destination)
        if top.count == 1, let info = FS.lstat(destination + "/" + top[0]), FS.isDirectory(info),
           FS.exists(destination + "/" + top[0] + "/" + PublishManifest.fileName) {
            return destination + "/" + top[0]
        }
        throw PublishRejected(file: PublishManifest.fileName, "is missing: put it at the top of the archive (or of its only folder)")
    }

    /// Writes checked entries below the root.
    struct Sink {
        let root: OpenFile
        let limits: Limits
        var entries = 0
        var total: Int64 = 0

        static func reject(_ name: String, _ message: String) -> PublishRejected {
            PublishRejected(file: "upload entry \(name.debugDescription)", message)
        }

        /// Normalises and checks an entry name: strips one leading `./`, a trailing `/` for folders.
        mutating func checkedName(_ raw: String) throws -> String? {
            entries += 1
            guard entries <= limits.maxEntries else {
                throw PublishRejected(file: "upload", "the archive has more than \(limits.maxEntries) entries", exceedsLimit: true)
            }
            var name = raw
            while name.hasPrefix("./") { name.removeFirst(2) }
            while name.hasSuffix("/") { name.removeLast() }
            if name.isEmpty || name == "." { return nil }
            if name.contains("\\") { throw Self.reject(raw, "contains a backslash") }
            if name.utf8.contains(0) { throw Self.reject(raw, "contains a NUL byte") }
            if let problem = PublishManifest.checkName(name) { throw Self.reject(raw, problem) }
            return name
        }

        mutating func directory(_ raw: String) throws {
            guard let name = try checkedName(raw) else { return }
            try makeParents(name + "/x", raw: raw)
        }

        private func makeParents(_ name: String, raw: String) throws {
            var current = root
            let components = name.split(separator: "/")
            for component in components.dropLast() {
                let part = String(component)
                if mkdirat(current.fd, part, 0o755) != 0 && errno != EEXIST { throw Self.reject(raw, "cannot create its folder") }
                let fd = openat(current.fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard fd >= 0 else { throw Self.reject(raw, "a file of the same name is in the way of its folder") }
                current = OpenFile(fd: fd, path: current.path + "/" + part)
            }
        }

        /// Creates a file and passes a writer that enforces the limits.
        mutating func file(_ raw: String, declaredSize: Int64?, write: (inout FileWriter) throws -> Void) throws {
            guard let name = try checkedName(raw) else { throw Self.reject(raw, "is not a file name") }
            if let declaredSize, declaredSize > limits.maxFileBytes {
                throw PublishRejected(file: "upload entry \(raw.debugDescription)",
                                      "is \(declaredSize) bytes; the limit per file is \(limits.maxFileBytes) bytes", exceedsLimit: true)
            }
            try makeParents(name, raw: raw)
            let parent = name.contains("/") ? try FS.openBeneath(root, String(name[..<name.lastIndex(of: "/")!]),
                                                                  flags: O_RDONLY | O_DIRECTORY) : root
            let base = String(name.split(separator: "/").last!)
            let fd = openat(parent.fd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw Self.reject(raw, errno == EEXIST ? "appears twice in the archive" : "cannot be written")
            }
            var writer = FileWriter(file: OpenFile(fd: fd, path: name), name: raw, limits: limits, total: total)
            try write(&writer)
            total = writer.total
        }
    }

    /// Writes one extracted file, counting against the limits.
    struct FileWriter {
        let file: OpenFile
        let name: String
        let limits: Limits
        var total: Int64
        var written: Int64 = 0

        mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
            written += Int64(bytes.count)
            total += Int64(bytes.count)
            if written > limits.maxFileBytes {
                throw PublishRejected(file: "upload entry \(name.debugDescription)",
                                      "is larger than the limit per file, \(limits.maxFileBytes) bytes", exceedsLimit: true)
            }
            if total > limits.maxTotalBytes {
                throw PublishRejected(file: "upload", "unpacks to more than \(limits.maxTotalBytes) bytes, the limit per issue",
                                      exceedsLimit: true)
            }
            try file.write(bytes)
        }
    }
}

// MARK: - Sequential sources for tar

protocol ByteSource {
    /// Reads up to `count` bytes; 0 at the end.
    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int
}

extension ByteSource {
    /// Reads exactly `count` bytes or throws at a premature end.
    mutating func readExactly(into buffer: UnsafeMutableRawPointer, count: Int) throws {
        var done = 0
        while done < count {
            let n = try read(into: buffer + done, count: count - done)
            guard n > 0 else { throw PublishRejected(file: "upload", "is truncated: the archive ends in the middle of a file") }
            done += n
        }
    }
}

struct PlainSource: ByteSource {
    let file: OpenFile
    var offset: Int64 = 0
    init(file: OpenFile) { self.file = file }
    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        let n = try file.read(into: buffer, count: count, at: offset)
        offset += Int64(n)
        return n
    }
}

/// gunzip over a file, with a cap on the output (a gzip bomb stops there).
struct GzipSource: ByteSource {
    let file: OpenFile
    let stream: UnsafeMutablePointer<z_stream>
    let input: UnsafeMutableRawBufferPointer
    let holder: Holder
    var offset: Int64 = 0
    var produced: Int64 = 0
    let limit: Int64
    var finished = false

    /// Frees the zlib state with the source.
    final class Holder {
        let stream: UnsafeMutablePointer<z_stream>
        let input: UnsafeMutableRawBufferPointer
        init(stream: UnsafeMutablePointer<z_stream>, input: UnsafeMutableRawBufferPointer) { self.stream = stream; self.input = input }
        deinit { inflateEnd(stream); stream.deallocate(); input.deallocate() }
    }

    init(file: OpenFile, limit: Int64) throws {
        self.file = file
        self.limit = limit
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        input = .allocate(byteCount: 256 << 10, alignment: 16)
        guard inflateInit2_(stream, 16 + 15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            stream.deallocate(); input.deallocate()
            throw PublishRejected(file: "upload", "cannot start gzip decompression")
        }
        holder = Holder(stream: stream, input: input)
    }

    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        guard !finished, count > 0 else { return 0 }
        stream.pointee.next_out = buffer.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(count)
        while stream.pointee.avail_out == uInt(count) {
            if stream.pointee.avail_in == 0 {
                let n = try file.read(into: input.baseAddress!, count: input.count, at: offset)
                offset += Int64(n)
                if n == 0 { throw PublishRejected(file: "upload", "is a truncated gzip stream") }
                stream.pointee.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_in = uInt(n)
            }
            let status = inflate(stream, Z_NO_FLUSH)
            if status == Z_STREAM_END { finished = true; break }
            guard status == Z_OK || status == Z_BUF_ERROR else {
                throw PublishRejected(file: "upload", "is a damaged gzip stream")
            }
        }
        let n = count - Int(stream.pointee.avail_out)
        produced += Int64(n)
        if produced > limit { throw PublishRejected(file: "upload", "unpacks to more than the limit per issue", exceedsLimit: true) }
        return n
    }
}

// MARK: - tar (ustar, pax, GNU long names)

enum TarReader {
    static func looksLikeTar(_ file: OpenFile) throws -> Bool {
        let header = try file.bytes(at: 0, count: 512)
        guard header.count == 512 else { return false }
        let magic = Array(header[257..<262])
        return magic == Array("ustar".utf8) || checksumMatches(header)
    }

    static func checksumMatches(_ header: [UInt8]) -> Bool {
        guard let stored = octal(header[148..<156]) else { return false }
        var sum = 0
        for (index, byte) in header.enumerated() { sum += (148..<156).contains(index) ? 32 : Int(byte) }
        return Int64(sum) == stored
    }

    static func octal(_ field: ArraySlice<UInt8>) -> Int64? {
        if let first = field.first, first & 0x80 != 0 {   // GNU base-256
            var value: Int64 = Int64(first & 0x7F)
            for byte in field.dropFirst() {
                guard value < Int64.max >> 8 else { return nil }
                value = value << 8 | Int64(byte)
            }
            return value
        }
        var value: Int64 = 0
        var seen = false
        for byte in field {
            if byte == 0 || byte == 0x20 { if seen { break } else { continue } }
            guard (0x30...0x37).contains(byte), value < Int64.max >> 3 else { return nil }
            value = value << 3 | Int64(byte - 0x30)
            seen = true
        }
        return value
    }

    static func string(_ field: ArraySlice<UInt8>) -> String {
        String(decoding: field.prefix { $0 != 0 }, as: UTF8.self)
    }

    static func extract<S: ByteSource>(from source: inout S, into sink: inout ArchiveExtractor.Sink) throws {
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { block.deallocate() }
        var longName: String?
        var zeroBlocks = 0
        while true {
            let n = try source.read(into: block.baseAddress!, count: 512)
            if n == 0 { break }
            if n < 512 { try source.readExactly(into: block.baseAddress! + n, count: 512 - n) }
            let header = Array(UnsafeRawBufferPointer(rebasing: block[0..<512]))
            if header.allSatisfy({ $0 == 0 }) {
                zeroBlocks += 1
                if zeroBlocks == 2 { break }
                continue
            }
            guard checksumMatches(header) else { throw PublishRejected(file: "upload", "is a damaged tar archive (bad header checksum)") }
            guard let size = octal(header[124..<136]), size >= 0 else {
                throw PublishRejected(file: "upload", "is a damaged tar archive (bad size)")
            }
            var name = string(header[0..<100])
            let prefix = string(header[345..<500])
            if Array(header[257..<262]) == Array("ustar".utf8), !prefix.isEmpty { name = prefix + "/" + name }
            if let long = longName { name = long; longName = nil }
            let type = header[156]
            let padded = (size + 511) / 512 * 512
            switch type {
            case UInt8(ascii: "0"), 0, UInt8(ascii: "7"):
                try sink.file(name, declaredSize: size) { writer in
                    var left = size
                    while left > 0 {
                        let want = Int(min(Int64(block.count), left))
                        try source.readExactly(into: block.baseAddress!, count: want)
                        try writer.write(UnsafeRawBufferPointer(rebasing: block[0..<want]))
                        left -= Int64(want)
                    }
                }
                try skip(&source, Int(padded - size), buffer: block)
            case UInt8(ascii: "5"):
                try sink.directory(name)
                try skip(&source, Int(padded), buffer: block)
            case UInt8(ascii: "x"), UInt8(ascii: "L"):
                guard size <= 64 << 10 else { throw PublishRejected(file: "upload", "has an oversized tar extended header") }
                try source.readExactly(into: block.baseAddress!, count: Int(padded))
                let data = Array(UnsafeRawBufferPointer(rebasing: block[0..<Int(size)]))
                if type == UInt8(ascii: "L") {
                    longName = string(data[...])
                } else if let path = paxPath(data) {
                    longName = path
                }
            case UInt8(ascii: "g"):
                try skip(&source, Int(padded), buffer: block)
            case UInt8(ascii: "1"), UInt8(ascii: "2"):
                throw ArchiveExtractor.Sink.reject(name, "is a \(type == UInt8(ascii: "1") ? "hard" : "symbolic") link; only plain files and folders may be uploaded")
            default:
                throw ArchiveExtractor.Sink.reject(name, "is not a plain file or folder (tar type \(UnicodeScalar(type)))")
            }
        }
    }

    static func skip<S: ByteSource>(_ source: inout S, _ count: Int, buffer: UnsafeMutableRawBufferPointer) throws {
        var left = count
        while left > 0 {
            let want = min(left, buffer.count)
            try source.readExactly(into: buffer.baseAddress!, count: want)
            left -= want
        }
    }

    /// The `path` record of a pax extended header ("<len> path=<value>\n" records).
    static func paxPath(_ data: [UInt8]) -> String? {
        var index = 0
        var path: String?
        while index < data.count {
            guard let space = data[index...].firstIndex(of: 0x20),
                  let length = Int(String(decoding: data[index..<space], as: UTF8.self)), length > 0,
                  length <= data.count - index,          // no overflow with a huge length
                  index + length - 1 >= space + 1        // the record holds at least "<len> " and "\n"
            else { break }
            let record = data[(space + 1)..<(index + length - 1)]
            if let equals = record.firstIndex(of: UInt8(ascii: "=")),
               String(decoding: record[record.startIndex..<equals], as: UTF8.self) == "path" {
                path = String(decoding: record[(equals + 1)...], as: UTF8.self)
            }
            index += length
        }
        return path
    }
}

// MARK: - ZIP (central directory, stored and deflated, ZIP64)

struct ZipReader {
    let file: OpenFile
    let size: Int64

    struct Entry {
        var name: String
        var method: UInt16
        var flags: UInt16
        var crc: UInt32
        var compressedSize: Int64
        var size: Int64
        var localOffset: Int64
        var mode: UInt32?
    }

    static func reject(_ message: String) -> PublishRejected { PublishRejected(file: "upload", message) }

    func u16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
    func u32(_ b: [UInt8], _ i: Int) -> UInt32 { UInt32(u16(b, i)) | UInt32(u16(b, i + 2)) << 16 }
    func u64(_ b: [UInt8], _ i: Int) -> UInt64 { UInt64(u32(b, i)) | UInt64(u32(b, i + 4)) << 32 }

    func entries() throws -> [Entry] {
        let tailLength = Int(min(size, 65_557))
        let tail = try file.bytes(at: size - Int64(tailLength), count: tailLength)
        guard let eocd = stride(from: tail.count - 22, through: 0, by: -1).first(where: {
            tail[$0] == 0x50 && tail[$0 + 1] == 0x4B && tail[$0 + 2] == 0x05 && tail[$0 + 3] == 0x06
        }) else { throw Self.reject("is a damaged ZIP: no end of central directory") }
        var count = Int64(u16(tail, eocd + 10))
        var directorySize = Int64(u32(tail, eocd + 12))
        var directoryOffset = Int64(u32(tail, eocd + 16))
        let eocdOffset = size - Int64(tailLength) + Int64(eocd)
        if count == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF {
            let locator = try file.bytes(at: eocdOffset - 20, count: 20)
            guard locator.count == 20, u32(locator, 0) == 0x0706_4B50 else { throw Self.reject("is a damaged ZIP64 archive") }
            let record = try file.bytes(at: Int64(u64(locator, 8)), count: 56)
            guard record.count == 56, u32(record, 0) == 0x0606_4B50 else { throw Self.reject("is a damaged ZIP64 archive") }
            count = Int64(u64(record, 32))
            directorySize = Int64(u64(record, 40))
            directoryOffset = Int64(u64(record, 48))
        }
        guard directoryOffset >= 0, directorySize >= 0, directoryOffset + directorySize <= size,
              directorySize <= 64 << 20 else { throw Self.reject("is a damaged ZIP: bad central directory") }
        let directory = try file.bytes(at: directoryOffset, count: Int(directorySize))
        var entries: [Entry] = []
        var index = 0
        for _ in 0..<count {
            guard index + 46 <= directory.count, u32(directory, index) == 0x0201_4B50 else {
                throw Self.reject("is a damaged ZIP: bad central directory entry")
            }
            let madeBy = u16(directory, index + 4) >> 8
            let nameLength = Int(u16(directory, index + 28))
            let extraLength = Int(u16(directory, index + 30))
            let commentLength = Int(u16(directory, index + 32))
            guard index + 46 + nameLength + extraLength + commentLength <= directory.count else {
                throw Self.reject("is a damaged ZIP: bad central directory entry")
            }
            var entry = Entry(
                name: String(decoding: directory[(index + 46)..<(index + 46 + nameLength)], as: UTF8.self),
                method: u16(directory, index + 10), flags: u16(directory, index + 8), crc: u32(directory, index + 16),
                compressedSize: Int64(u32(directory, index + 20)), size: Int64(u32(directory, index + 24)),
                localOffset: Int64(u32(directory, index + 42)),
                mode: madeBy == 3 ? u32(directory, index + 38) >> 16 : nil)
            var extra = index + 46 + nameLength
            let extraEnd = extra + extraLength
            while extra + 4 <= extraEnd {
                let id = u16(directory, extra), length = Int(u16(directory, extra + 2))
                if id == 0x0001 {
                    var field = extra + 4
                    if entry.size == 0xFFFF_FFFF, field + 8 <= extra + 4 + length { entry.size = Int64(u64(directory, field)); field += 8 }
                    if entry.compressedSize == 0xFFFF_FFFF, field + 8 <= extra + 4 + length {
                        entry.compressedSize = Int64(u64(directory, field)); field += 8
                    }
                    if entry.localOffset == 0xFFFF_FFFF, field + 8 <= extra + 4 + length { entry.localOffset = Int64(u64(directory, field)) }
                }
                extra += 4 + length
            }
            entries.append(entry)
            index += 46 + nameLength + extraLength + commentLength
        }
        return entries
    }

    func extract(into sink: inout ArchiveExtractor.Sink) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate(); output.deallocate() }
        for entry in try entries() {
            let name = entry.name
            if let mode = entry.mode, mode & 0o170000 == 0o120000 {
                throw ArchiveExtractor.Sink.reject(name, "is a symbolic link; only plain files and folders may be uploaded")
            }
            if name.hasSuffix("/") || (entry.mode.map { $0 & 0o170000 == 0o040000 } ?? false) {
                try sink.directory(name)
                continue
            }
            if let mode = entry.mode, mode & 0o170000 != 0, mode & 0o170000 != 0o100000 {
                throw ArchiveExtractor.Sink.reject(name, "is not a plain file or folder")
            }
            if entry.flags & 1 != 0 { throw ArchiveExtractor.Sink.reject(name, "is encrypted") }
            guard entry.method == 0 || entry.method == 8 else {
                throw ArchiveExtractor.Sink.reject(name, "uses compression method \(entry.method); use stored or deflate")
            }
            let local = try file.bytes(at: entry.localOffset, count: 30)
            guard local.count == 30, u32(local, 0) == 0x0403_4B50 else {
                throw ArchiveExtractor.Sink.reject(name, "has a damaged local header")
            }
            var offset = entry.localOffset + 30 + Int64(u16(local, 26)) + Int64(u16(local, 28))
            guard offset + entry.compressedSize <= size else { throw ArchiveExtractor.Sink.reject(name, "runs past the end of the archive") }
            let end = offset + entry.compressedSize
            var crc: uLong = 0
            var produced: Int64 = 0
            try sink.file(name, declaredSize: entry.size) { writer in
                if entry.method == 0 {
                    guard entry.compressedSize == entry.size else { throw ArchiveExtractor.Sink.reject(name, "has inconsistent sizes") }
                    while offset < end {
                        let n = try file.read(into: buffer.baseAddress!, count: Int(min(Int64(buffer.count), end - offset)), at: offset)
                        guard n > 0 else { throw ArchiveExtractor.Sink.reject(name, "is truncated") }
                        let piece = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
                        crc = crc32(crc, piece.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(n))
                        try writer.write(piece)
                        offset += Int64(n)
                        produced += Int64(n)
                    }
                } else {
                    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
                    stream.initialize(to: z_stream())
                    guard inflateInit2_(stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
                        stream.deallocate()
                        throw ArchiveExtractor.Sink.reject(name, "cannot be inflated")
                    }
                    defer { inflateEnd(stream); stream.deallocate() }
                    var done = false
                    while !done {
                        if stream.pointee.avail_in == 0 {
                            guard offset < end else { throw ArchiveExtractor.Sink.reject(name, "is truncated") }
                            let n = try file.read(into: buffer.baseAddress!, count: Int(min(Int64(buffer.count), end - offset)), at: offset)
                            guard n > 0 else { throw ArchiveExtractor.Sink.reject(name, "is truncated") }
                            offset += Int64(n)
                            stream.pointee.next_in = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
                            stream.pointee.avail_in = uInt(n)
                        }
                        stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
                        stream.pointee.avail_out = uInt(output.count)
                        let status = inflate(stream, Z_NO_FLUSH)
                        guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                            throw ArchiveExtractor.Sink.reject(name, "has damaged compressed data")
                        }
                        let n = output.count - Int(stream.pointee.avail_out)
                        if n > 0 {
                            produced += Int64(n)
                            // A bomb stops here: never more than the declared size.
                            guard produced <= entry.size else {
                                throw ArchiveExtractor.Sink.reject(name, "inflates to more than its declared size")
                            }
                            let piece = UnsafeRawBufferPointer(rebasing: output[0..<n])
                            crc = crc32(crc, piece.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(n))
                            try writer.write(piece)
                        }
                        done = status == Z_STREAM_END
                    }
                }
            }
            guard produced == entry.size, UInt32(crc) == entry.crc else {
                throw ArchiveExtractor.Sink.reject(name, "fails its CRC or size check (damaged upload)")
            }
        }
    }
}
