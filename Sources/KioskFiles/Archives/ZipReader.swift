// The ZIP reader: the central directory, stored and deflated entries, ZIP64. Every offset, size and
// count from the archive is converted with `Int64(exactly:)`/`Int(exactly:)`, added with overflow
// checks and checked against the file before it is used; a value that cannot be right is an
// `ArchiveError`, never a trap or a read outside the file.

#if canImport(Glibc)
import KioskIntegers
import Glibc
#endif
import CLibZ
struct ZipReader {
    let input: ArchiveInput
    var size: Int64 { input.size }

    /// Largest central directory read (about 1.4 million entries).
    static let maxDirectoryBytes: Int64 = 64 << 20
    /// The end of central directory record and the longest comment it may be followed by.
    static let maxTail: Int64 = 22 + 0xFFFF

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

    /// Little-endian fields; callers check `i + width <= b.count` first.
    func u16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(widening: b[i]) | UInt16(widening: b[i + 1]) << 8 }
    func u32(_ b: [UInt8], _ i: Int) -> UInt32 { UInt32(widening: u16(b, i)) | UInt32(widening: u16(b, i + 2)) << 16 }
    func u64(_ b: [UInt8], _ i: Int) -> UInt64 { UInt64(widening: u32(b, i)) | UInt64(widening: u32(b, i + 4)) << 32 }

    /// `value` as a non-negative offset or size; nil above `Int64.max`.
    static func int64(_ value: UInt64) -> Int64? { Int64(exactly: value) }

    /// Where the central directory is and how many entries it holds, from the end records.
    struct Directory: Equatable { var offset: Int64; var size: Int64; var count: Int }

    func directory() throws -> Directory {
        let tailLength = min(size, Self.maxTail)
        let tailStart = size - tailLength
        let tail = try input.bytes(at: tailStart, count: Int(widening: tailLength))
        guard tail.count >= 22, let eocd = stride(from: tail.count - 22, through: 0, by: -1).first(where: {
            tail[$0] == 0x50 && tail[$0 + 1] == 0x4B && tail[$0 + 2] == 0x05 && tail[$0 + 3] == 0x06
        }) else { throw ArchiveError("is a damaged ZIP: no end of central directory record") }
        guard u16(tail, eocd + 4) == 0 || u16(tail, eocd + 4) == 0xFFFF else {
            throw ArchiveError("is a ZIP split over several files (disks); upload it as one ZIP")
        }
        var count = UInt64(widening: u16(tail, eocd + 10))
        var directorySize = UInt64(widening: u32(tail, eocd + 12))
        var directoryOffset = UInt64(widening: u32(tail, eocd + 16))
        let eocdOffset = tailStart + Int64(widening: eocd)
        if count == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF {
            guard eocdOffset >= 20 else { throw ArchiveError("is a damaged ZIP64 archive: no ZIP64 end of central directory locator") }
            let locator = try input.bytes(at: eocdOffset - 20, count: 20)
            guard locator.count == 20, u32(locator, 0) == 0x0706_4B50 else {
                throw ArchiveError("is a damaged ZIP64 archive: no ZIP64 end of central directory locator")
            }
            guard let recordOffset = Self.int64(u64(locator, 8)), recordOffset <= eocdOffset - 20 - 56 else {
                throw ArchiveError("is a damaged ZIP64 archive: its end record is said to be outside the archive")
            }
            let record = try input.bytes(at: recordOffset, count: 56)
            guard record.count == 56, u32(record, 0) == 0x0606_4B50 else {
                throw ArchiveError("is a damaged ZIP64 archive: no ZIP64 end of central directory record where its locator points")
            }
            count = u64(record, 32)
            directorySize = u64(record, 40)
            directoryOffset = u64(record, 48)
        }
        guard let offset = Self.int64(directoryOffset), let length = Self.int64(directorySize),
              case let (end, overflow) = offset.addingReportingOverflow(length), !overflow, end <= size else {
            throw ArchiveError("is a damaged ZIP: its central directory is said to lie outside the archive")
        }
        guard length <= Self.maxDirectoryBytes else {
            throw ArchiveError("has a central directory of \(length) bytes; at most \(Self.maxDirectoryBytes) are accepted")
        }
        // Each entry takes at least 46 bytes of the directory.
        guard count <= UInt64(clamping: length / 46), let entries = Int(exactly: count) else {     // length >= 0
            throw ArchiveError("is a damaged ZIP: it claims \(count) entries, more than its central directory of \(length) bytes can hold")
        }
        return Directory(offset: offset, size: length, count: entries)
    }

    func entries() throws -> [Entry] {
        let location = try directory()
        let directory = try input.bytes(at: location.offset, count: Int(widening: location.size))
        guard directory.count == Int(widening: location.size) else { throw ArchiveError("is a truncated ZIP: its central directory is cut short") }
        var entries: [Entry] = []
        var index = 0
        for _ in 0..<location.count {
            guard directory.count - index >= 46, u32(directory, index) == 0x0201_4B50 else {
                throw ArchiveError("is a damaged ZIP: bad central directory entry")
            }
            let madeBy = u16(directory, index + 4) >> 8
            let nameLength = Int(widening: u16(directory, index + 28))
            let extraLength = Int(widening: u16(directory, index + 30))
            let commentLength = Int(widening: u16(directory, index + 32))
            let nameStart = index + 46
            let extraStart = nameStart + nameLength
            let extraEnd = extraStart + extraLength
            let next = extraEnd + commentLength      // at most index + 46 + 3 × 65535: no overflow
            guard next <= directory.count else {
                throw ArchiveError("is a damaged ZIP: a central directory entry runs past the directory's end")
            }
            let name = String(decoding: directory[nameStart..<extraStart], as: UTF8.self)
            var entry = Entry(
                name: name,
                method: u16(directory, index + 10), flags: u16(directory, index + 8), crc: u32(directory, index + 16),
                compressedSize: Int64(widening: u32(directory, index + 20)), size: Int64(widening: u32(directory, index + 24)),
                localOffset: Int64(widening: u32(directory, index + 42)),
                mode: madeBy == 3 ? u32(directory, index + 38) >> 16 : nil)
            var extra = extraStart
            while extraEnd - extra >= 4 {
                let id = u16(directory, extra), length = Int(widening: u16(directory, extra + 2))
                let fieldEnd = extra + 4 + length
                guard fieldEnd <= extraEnd else {
                    throw ArchiveError(entry: name, "has a damaged extra field: it runs past the end of the entry's extra data")
                }
                if id == 0x0001 { try readZIP64(directory, from: extra + 4, to: fieldEnd, into: &entry) }
                extra = fieldEnd
            }
            entries.append(entry)
            index = next
        }
        return entries
    }

    /// The ZIP64 extended information field: the 8-byte values whose 32-bit fields are all ones, in
    /// the order size, compressed size, local header offset.
    func readZIP64(_ directory: [UInt8], from start: Int, to end: Int, into entry: inout Entry) throws {
        var field = start
        func next() throws -> Int64? {
            guard end - field >= 8 else { return nil }
            defer { field += 8 }
            guard let value = Self.int64(u64(directory, field)) else {
                throw ArchiveError(entry: entry.name, "has a ZIP64 size or offset larger than any file can be (damaged archive)")
            }
            return value
        }
        if entry.size == 0xFFFF_FFFF, let value = try next() { entry.size = value }
        if entry.compressedSize == 0xFFFF_FFFF, let value = try next() { entry.compressedSize = value }
        if entry.localOffset == 0xFFFF_FFFF, let value = try next() { entry.localOffset = value }
    }

    func extract<Sink: ArchiveSink>(into sink: inout Sink) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate(); output.deallocate() }
        guard let bufferBase = buffer.baseAddress, let outputBase = output.baseAddress else { return }
        for entry in try entries() {
            let name = entry.name
            if let mode = entry.mode, mode & 0o170000 == 0o120000 {
                throw ArchiveError(entry: name, "is a symbolic link; only plain files and folders may be uploaded")
            }
            if name.hasSuffix("/") || (entry.mode.map { $0 & 0o170000 == 0o040000 } ?? false) {
                try sink.directory(name)
                continue
            }
            if let mode = entry.mode, mode & 0o170000 != 0, mode & 0o170000 != 0o100000 {
                throw ArchiveError(entry: name, "is not a plain file or folder")
            }
            if entry.flags & 1 != 0 { throw ArchiveError(entry: name, "is encrypted") }
            guard entry.method == 0 || entry.method == 8 else {
                throw ArchiveError(entry: name, "uses compression method \(entry.method); use stored or deflate")
            }
            guard entry.localOffset <= size - 30 else {
                throw ArchiveError(entry: name, "has its local header outside the archive (damaged ZIP)")
            }
            let local = try input.bytes(at: entry.localOffset, count: 30)
            guard local.count == 30, u32(local, 0) == 0x0403_4B50 else {
                throw ArchiveError(entry: name, "has a damaged local header")
            }
            // localOffset <= size - 30, so none of these sums can overflow.
            var offset = entry.localOffset + 30 + Int64(widening: u16(local, 26)) + Int64(widening: u16(local, 28))
            guard offset <= size, entry.compressedSize <= size - offset else {
                throw ArchiveError(entry: name, "runs past the end of the archive (truncated or damaged ZIP)")
            }
            let end = offset + entry.compressedSize
            var crc: UInt32 = 0
            var produced: Int64 = 0
            try sink.file(name, declaredSize: entry.size) { writer in
                if entry.method == 0 {
                    guard entry.compressedSize == entry.size else { throw ArchiveError(entry: name, "has inconsistent sizes") }
                    while offset < end {
                        let n = try input.read(into: bufferBase, count: Int(widening: min(Int64(widening: buffer.count), end - offset)), at: offset)
                        guard n > 0 else { throw ArchiveError(entry: name, "is truncated") }
                        crc = WholeDeflater.crc32(bufferBase, count: n, continuing: crc)
                        try writer.write(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                        offset += Int64(widening: n)
                        produced += Int64(widening: n)
                    }
                } else {
                    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
                    stream.initialize(to: z_stream())
                    guard inflateInit2_(stream, -15, ZLIB_VERSION, zStreamSize) == Z_OK else {
                        stream.deallocate()
                        throw ArchiveError(entry: name, "cannot be inflated")
                    }
                    defer { inflateEnd(stream); stream.deallocate() }
                    // The buffers hold 1 MiB each: zlib's 32-bit counts take them whole.
                    let space = uInt(clamping: output.count)
                    var done = false
                    while !done {
                        if stream.pointee.avail_in == 0 {
                            guard offset < end else { throw ArchiveError(entry: name, "is truncated") }
                            let want = Int(widening: min(Int64(widening: buffer.count), end - offset))
                            let n = try input.read(into: bufferBase, count: want, at: offset)
                            guard n > 0 else { throw ArchiveError(entry: name, "is truncated") }
                            offset += Int64(widening: n)
                            stream.pointee.next_in = bufferBase.assumingMemoryBound(to: Bytef.self)
                            stream.pointee.avail_in = uInt(clamping: n)
                        }
                        stream.pointee.next_out = outputBase.assumingMemoryBound(to: Bytef.self)
                        stream.pointee.avail_out = space
                        let status = inflate(stream, Z_NO_FLUSH)
                        guard status == Z_OK || status == Z_STREAM_END || (status == Z_BUF_ERROR && stream.pointee.avail_in == 0) else {
                            throw ArchiveError(entry: name, "has damaged compressed data")
                        }
                        let n = Int(widening: space - stream.pointee.avail_out)
                        if n > 0 {
                            produced += Int64(widening: n)
                            // A bomb stops here: never more than the declared size.
                            guard produced <= entry.size else {
                                throw ArchiveError(entry: name, "inflates to more than its declared size")
                            }
                            crc = WholeDeflater.crc32(outputBase, count: n, continuing: crc)
                            try writer.write(UnsafeRawBufferPointer(rebasing: output[0..<n]))
                        }
                        done = status == Z_STREAM_END
                    }
                }
            }
            guard produced == entry.size, crc == entry.crc else {
                throw ArchiveError(entry: name, "fails its CRC or size check (damaged upload)")
            }
        }
    }
}
