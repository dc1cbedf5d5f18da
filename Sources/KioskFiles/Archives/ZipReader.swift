// The ZIP reader: the central directory, stored and deflated entries, ZIP64.

#if canImport(Glibc)
import Glibc
#endif
import CLibZ

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

    func u16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
    func u32(_ b: [UInt8], _ i: Int) -> UInt32 { UInt32(u16(b, i)) | UInt32(u16(b, i + 2)) << 16 }
    func u64(_ b: [UInt8], _ i: Int) -> UInt64 { UInt64(u32(b, i)) | UInt64(u32(b, i + 4)) << 32 }

    func entries() throws -> [Entry] {
        let tailLength = Int(min(size, 65_557))
        let tail = try file.bytes(at: size - Int64(tailLength), count: tailLength)
        guard let eocd = stride(from: tail.count - 22, through: 0, by: -1).first(where: {
            tail[$0] == 0x50 && tail[$0 + 1] == 0x4B && tail[$0 + 2] == 0x05 && tail[$0 + 3] == 0x06
        }) else { throw ArchiveError("is a damaged ZIP: no end of central directory") }
        var count = Int64(u16(tail, eocd + 10))
        var directorySize = Int64(u32(tail, eocd + 12))
        var directoryOffset = Int64(u32(tail, eocd + 16))
        let eocdOffset = size - Int64(tailLength) + Int64(eocd)
        if count == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF {
            let locator = try file.bytes(at: eocdOffset - 20, count: 20)
            guard locator.count == 20, u32(locator, 0) == 0x0706_4B50 else { throw ArchiveError("is a damaged ZIP64 archive") }
            let record = try file.bytes(at: Int64(u64(locator, 8)), count: 56)
            guard record.count == 56, u32(record, 0) == 0x0606_4B50 else { throw ArchiveError("is a damaged ZIP64 archive") }
            count = Int64(u64(record, 32))
            directorySize = Int64(u64(record, 40))
            directoryOffset = Int64(u64(record, 48))
        }
        guard directoryOffset >= 0, directorySize >= 0, directoryOffset + directorySize <= size,
              directorySize <= 64 << 20 else { throw ArchiveError("is a damaged ZIP: bad central directory") }
        let directory = try file.bytes(at: directoryOffset, count: Int(directorySize))
        var entries: [Entry] = []
        var index = 0
        for _ in 0..<count {
            guard index + 46 <= directory.count, u32(directory, index) == 0x0201_4B50 else {
                throw ArchiveError("is a damaged ZIP: bad central directory entry")
            }
            let madeBy = u16(directory, index + 4) >> 8
            let nameLength = Int(u16(directory, index + 28))
            let extraLength = Int(u16(directory, index + 30))
            let commentLength = Int(u16(directory, index + 32))
            guard index + 46 + nameLength + extraLength + commentLength <= directory.count else {
                throw ArchiveError("is a damaged ZIP: bad central directory entry")
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

    func extract<Sink: ArchiveSink>(into sink: inout Sink) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate(); output.deallocate() }
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
            let local = try file.bytes(at: entry.localOffset, count: 30)
            guard local.count == 30, u32(local, 0) == 0x0403_4B50 else {
                throw ArchiveError(entry: name, "has a damaged local header")
            }
            var offset = entry.localOffset + 30 + Int64(u16(local, 26)) + Int64(u16(local, 28))
            guard offset + entry.compressedSize <= size else { throw ArchiveError(entry: name, "runs past the end of the archive") }
            let end = offset + entry.compressedSize
            var crc: uLong = 0
            var produced: Int64 = 0
            try sink.file(name, declaredSize: entry.size) { writer in
                if entry.method == 0 {
                    guard entry.compressedSize == entry.size else { throw ArchiveError(entry: name, "has inconsistent sizes") }
                    while offset < end {
                        let n = try file.read(into: buffer.baseAddress!, count: Int(min(Int64(buffer.count), end - offset)), at: offset)
                        guard n > 0 else { throw ArchiveError(entry: name, "is truncated") }
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
                        throw ArchiveError(entry: name, "cannot be inflated")
                    }
                    defer { inflateEnd(stream); stream.deallocate() }
                    var done = false
                    while !done {
                        if stream.pointee.avail_in == 0 {
                            guard offset < end else { throw ArchiveError(entry: name, "is truncated") }
                            let n = try file.read(into: buffer.baseAddress!, count: Int(min(Int64(buffer.count), end - offset)), at: offset)
                            guard n > 0 else { throw ArchiveError(entry: name, "is truncated") }
                            offset += Int64(n)
                            stream.pointee.next_in = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
                            stream.pointee.avail_in = uInt(n)
                        }
                        stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
                        stream.pointee.avail_out = uInt(output.count)
                        let status = inflate(stream, Z_NO_FLUSH)
                        guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                            throw ArchiveError(entry: name, "has damaged compressed data")
                        }
                        let n = output.count - Int(stream.pointee.avail_out)
                        if n > 0 {
                            produced += Int64(n)
                            // A bomb stops here: never more than the declared size.
                            guard produced <= entry.size else {
                                throw ArchiveError(entry: name, "inflates to more than its declared size")
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
                throw ArchiveError(entry: name, "fails its CRC or size check (damaged upload)")
            }
        }
    }
}
