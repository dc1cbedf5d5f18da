// Shared by the archive fuzz targets (fuzz-tar, fuzz-gzip, fuzz-zip): a sink that only counts, the
// run of the real reader on bytes in a file, the fix-ups that let mutated archives past their
// checksums and CRCs, and writers of gzip and ZIP from a description.
import CLibZ
import Foundation
@testable import KioskFiles

#if canImport(Glibc)
import Glibc
#endif

// MARK: Running the reader

/// Counts what the reader hands over, with the limits of the real sink (so a huge declared size is
/// refused before it is read) and its own checks: no entry delivers more bytes than it declared, and a
/// tar entry delivers exactly its size.
struct CountingSink: ArchiveSink {
    struct Writer: ArchiveFileWriter {
        var written: Int64 = 0
        mutating func write(_ bytes: UnsafeRawBufferPointer) throws { written += Int64(bytes.count) }
    }

    static let maxFileBytes: Int64 = 8 << 20
    var entries = 0
    var exact: Bool
    var delivered: [String: Int64] = [:]

    mutating func directory(_ name: String) throws {
        entries += 1
        if entries > 4096 { throw ArchiveError("more than 4096 entries (fuzz sink)") }
    }

    mutating func file(_ name: String, declaredSize: Int64?, contents: (inout Writer) throws -> Void) throws {
        try directory(name)
        if let declaredSize {
            if declaredSize < 0 { fatalError("negative declared size \(declaredSize) for \(name.debugDescription)") }
            if declaredSize > Self.maxFileBytes { throw ArchiveError(entry: name, "too large (fuzz sink)", exceedsLimit: true) }
        }
        var writer = Writer()
        do {
            try contents(&writer)
        } catch {
            if let declaredSize, writer.written > declaredSize { fatalError("\(name.debugDescription): \(writer.written) bytes, declared \(declaredSize)") }
            throw error
        }
        if let declaredSize {
            if writer.written > declaredSize { fatalError("\(name.debugDescription): \(writer.written) bytes, declared \(declaredSize)") }
            if exact && writer.written != declaredSize { fatalError("\(name.debugDescription): \(writer.written) bytes, declared \(declaredSize)") }
        }
        delivered[name] = writer.written
    }
}

/// A file for the input, on tmpfs when there is one.
let inputPath: String = {
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    return base + "/kiosk-fuzz-archive-\(getpid())"
}()

/// Writes `bytes` to the input file and opens it.
func inputFile(_ bytes: [UInt8]) -> OpenFile {
    let fd = open(inputPath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { fatalError("cannot create \(inputPath)") }
    var done = 0
    while done < bytes.count {
        let n = bytes[done...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { fatalError("cannot write \(inputPath)") }
        done += n
    }
    return OpenFile(fd: fd, path: inputPath)
}

/// Runs `ArchiveReader.read` on `bytes`. The property that matters to the server: every failure is an
/// `ArchiveError` (the HTTP layer answers 400/413); anything else (a `SystemError`) would answer 500.
@discardableResult
func readArchive(_ bytes: [UInt8], exact: Bool) -> CountingSink? {
    var sink = CountingSink(exact: exact)
    do {
        try ArchiveReader.read(inputFile(bytes), into: &sink, inflatedLimit: 16 << 20)
        return sink
    } catch is ArchiveError {
        return nil
    } catch {
        fatalError("the reader threw \(type(of: error)), not an ArchiveError: \(error)")
    }
}

// MARK: Input cursor

/// Reads the fuzzer's bytes as a description; past the end it gives zeros.
struct Cursor {
    let bytes: [UInt8]
    var index = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var atEnd: Bool { index >= bytes.count }
    mutating func byte() -> UInt8 {
        defer { index += 1 }
        return index < bytes.count ? bytes[index] : 0
    }
    mutating func u16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }
    mutating func u32() -> UInt32 { UInt32(u16()) | UInt32(u16()) << 16 }
    mutating func u64() -> UInt64 { UInt64(u32()) | UInt64(u32()) << 32 }
    mutating func take(_ count: Int) -> [UInt8] {
        let start = min(index, bytes.count), end = min(bytes.count, start + max(0, count))
        index = start + max(0, count)
        return Array(bytes[start..<end])
    }
    mutating func rest() -> [UInt8] { take(bytes.count - index) }
    /// A 64-bit value that is often one of the edges (0, all ones, Int64.max, 2^32 - 1 …).
    mutating func edgy64() -> UInt64 {
        let edges: [UInt64] = [0, 1, 0xFFFF_FFFF, 0x1_0000_0000, UInt64(Int64.max), UInt64(Int64.max) - 511, UInt64(Int64.max) + 1,
                               UInt64.max, UInt64.max - 1, 0x7FFF_FFFF, 1 << 40]
        let pick = byte()
        return pick < 128 ? edges[Int(pick) % edges.count] : u64()
    }
}

// MARK: Little-endian fields, CRC-32

func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
func le64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }
func put(_ bytes: [UInt8], into target: inout [UInt8], at offset: Int) {
    guard offset >= 0, offset <= target.count - bytes.count else { return }
    target.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
}
func get32(_ b: [UInt8], _ i: Int) -> UInt32? {
    guard i >= 0, i <= b.count - 4 else { return nil }
    return UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
}
func get16(_ b: [UInt8], _ i: Int) -> UInt16? {
    guard i >= 0, i <= b.count - 2 else { return nil }
    return UInt16(b[i]) | UInt16(b[i + 1]) << 8
}
func get64(_ b: [UInt8], _ i: Int) -> UInt64? {
    guard let low = get32(b, i), let high = get32(b, i + 4) else { return nil }
    return UInt64(low) | UInt64(high) << 32
}

func crc(_ bytes: ArraySlice<UInt8>) -> UInt32 {
    bytes.withUnsafeBytes { raw in
        guard let base = raw.baseAddress else { return 0 }
        return UInt32(truncatingIfNeeded: crc32(0, base.assumingMemoryBound(to: Bytef.self), uInt(raw.count)))
    }
}

// MARK: tar

/// The harness's own lenient reading of a size field (octal or base-256), nil when unusable.
func tarSize(_ field: ArraySlice<UInt8>) -> Int? {
    if let first = field.first, first & 0x80 != 0 {
        guard first == 0x80 else { return nil }
        var value = 0
        for byte in field.dropFirst() {
            guard value < 1 << 40 else { return nil }
            value = value << 8 | Int(byte)
        }
        return value
    }
    var value = 0
    for byte in field where (0x30...0x37).contains(byte) {
        guard value < 1 << 40 else { return nil }
        value = value << 3 | Int(byte - 0x30)
    }
    return value
}

func octalField(_ value: Int, width: Int) -> [UInt8] {
    let digits = Array(String(value, radix: 8).utf8)
    return [UInt8](repeating: 0x30, count: max(0, width - 1 - digits.count)) + digits.suffix(width - 1) + [0]
}

func checksummed(_ header: [UInt8]) -> [UInt8] {
    var header = header
    header.replaceSubrange(148..<156, with: [UInt8](repeating: 0x20, count: 8))
    let sum = header.reduce(0) { $0 + Int($1) }
    header.replaceSubrange(148..<156, with: octalField(sum, width: 7) + [0x20])
    return header
}

/// Rewrites each pax record's length prefix to the record's real length ("<len> key=value\n").
func fixedPaxRecords(_ data: ArraySlice<UInt8>) -> [UInt8] {
    var out: [UInt8] = []
    for line in data.split(separator: 0x0A) {
        var body = line.drop { (0x30...0x39).contains($0) }
        if body.first == 0x20 { body = body.dropFirst() }
        let rest = Array(body) + [0x0A]
        var length = rest.count + 2
        while String(length).utf8.count + 1 + rest.count != length { length += 1 }
        out += Array("\(length) ".utf8) + rest
    }
    return out
}

/// Walks the headers as a reader would and makes each checksum right (and, when `fixPax`, each pax
/// record's length and the pax header's size), so mutations reach the fields behind the checksum.
func fixTar(_ bytes: [UInt8], fixPax: Bool) -> [UInt8] {
    var out: [UInt8] = []
    var position = 0
    while position + 512 <= bytes.count {
        var header = Array(bytes[position..<(position + 512)])
        position += 512
        if header.allSatisfy({ $0 == 0 }) { out += header; continue }
        guard let size = tarSize(header[124..<136]) else { out += checksummed(header); break }
        let end = min(bytes.count, position + (size + 511) / 512 * 512)
        var data = Array(bytes[position..<end])
        position = end
        if fixPax, header[156] == UInt8(ascii: "x") {
            let records = fixedPaxRecords(data.prefix(size))
            header.replaceSubrange(124..<136, with: octalField(records.count, width: 12))
            data = records + [UInt8](repeating: 0, count: (512 - records.count % 512) % 512)
        }
        out += checksummed(header) + data
    }
    return out + bytes[min(position, bytes.count)...]
}

// MARK: gzip

/// `bytes` deflated with zlib (raw deflate, `level`).
func rawDeflate(_ bytes: [UInt8], level: Int32) -> [UInt8] {
    var stream = z_stream()
    guard deflateInit2_(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
        fatalError("deflateInit2")
    }
    defer { deflateEnd(&stream) }
    var input = bytes
    var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 64)
    let produced: Int = input.withUnsafeMutableBytes { inRaw in
        output.withUnsafeMutableBytes { outRaw in
            stream.next_in = inRaw.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.avail_in = uInt(inRaw.count)
            stream.next_out = outRaw.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(outRaw.count)
            guard deflate(&stream, Z_FINISH) == Z_STREAM_END else { fatalError("deflate") }
            return outRaw.count - Int(stream.avail_out)
        }
    }
    return Array(output.prefix(produced))
}

/// Inflates raw deflate data from `data` (up to `cap` bytes out): the output, and how many input bytes
/// the stream took; nil when the data is not a complete deflate stream.
func rawInflate(_ data: ArraySlice<UInt8>, cap: Int) -> (output: [UInt8], consumed: Int)? {
    var stream = z_stream()
    guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
    defer { inflateEnd(&stream) }
    var output = [UInt8](repeating: 0, count: cap)
    var input = Array(data)
    let result: (Int, Int)? = input.withUnsafeMutableBytes { inRaw in
        output.withUnsafeMutableBytes { outRaw in
            stream.next_in = inRaw.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.avail_in = uInt(inRaw.count)
            stream.next_out = outRaw.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(outRaw.count)
            guard inflate(&stream, Z_FINISH) == Z_STREAM_END else { return nil }
            return (outRaw.count - Int(stream.avail_out), inRaw.count - Int(stream.avail_in))
        }
    }
    guard let (produced, consumed) = result else { return nil }
    return (Array(output.prefix(produced)), consumed)
}

/// The header options of a gzip member the harness writes.
struct GzipHeader {
    var extra: [UInt8]?
    /// Declared extra length, when it should differ from `extra.count`.
    var extraLength: UInt16?
    var name: [UInt8]?
    var comment: [UInt8]?
    var headerCRC = false
    var level: Int32 = 6

    init() {}

    /// Options chosen by the fuzzer.
    init(_ cursor: inout Cursor) {
        let flags = cursor.byte()
        if flags & 1 != 0 { extra = cursor.take(Int(cursor.byte()) * (flags & 0x40 != 0 ? 257 : 1)) }
        if flags & 2 != 0 { name = cursor.take(Int(cursor.byte() % 32)).filter { $0 != 0 } }
        if flags & 4 != 0 { comment = cursor.take(Int(cursor.byte() % 32)).filter { $0 != 0 } }
        headerCRC = flags & 8 != 0
        if flags & 0x80 != 0 { extraLength = cursor.u16() }
        level = Int32(flags >> 4 & 3) * 3
    }

    func bytes() -> [UInt8] {
        var flags: UInt8 = 0
        if headerCRC { flags |= 0x02 }
        if extra != nil { flags |= 0x04 }
        if name != nil { flags |= 0x08 }
        if comment != nil { flags |= 0x10 }
        var out: [UInt8] = [0x1F, 0x8B, 8, flags, 0, 0, 0, 0, 0, 3]
        if let extra { out += le16(extraLength ?? UInt16(truncatingIfNeeded: extra.count)) + extra }
        if let name { out += name + [0] }
        if let comment { out += comment + [0] }
        if headerCRC { out += le16(UInt16(crc(out[...]) & 0xFFFF)) }
        return out
    }
}

/// A whole gzip member of `payload`.
func gzipMember(_ payload: [UInt8], header: GzipHeader = GzipHeader()) -> [UInt8] {
    header.bytes() + rawDeflate(payload, level: header.level) + le32(crc(payload[...])) + le32(UInt32(truncatingIfNeeded: payload.count))
}

/// Makes a (mutated) gzip stream's header CRC, and each member's trailer CRC-32 and length, right;
/// members follow one another as long as each inflates.
func fixGzip(_ bytes: [UInt8]) -> [UInt8] {
    var out = bytes
    var start = 0
    while start + 10 <= out.count, out[start] == 0x1F, out[start + 1] == 0x8B {
        out[start + 2] = 8
        let flags = out[start + 3]
        var index = start + 10
        if flags & 0x04 != 0 {
            guard let length = get16(out, index) else { return out }
            index += 2 + Int(length)
        }
        for flag in [UInt8(0x08), 0x10] where flags & flag != 0 {
            while index < out.count, out[index] != 0 { index += 1 }
            index += 1
        }
        if flags & 0x02 != 0 {
            guard index + 2 <= out.count else { return out }
            put(le16(UInt16(crc(out[start..<index]) & 0xFFFF)), into: &out, at: index)
            index += 2
        }
        guard index <= out.count, let (payload, consumed) = rawInflate(out[index...], cap: 4 << 20) else { return out }
        let trailer = index + consumed
        guard trailer + 8 <= out.count else { return out + le32(crc(payload[...])) + le32(UInt32(truncatingIfNeeded: payload.count)) }
        put(le32(crc(payload[...])) + le32(UInt32(truncatingIfNeeded: payload.count)), into: &out, at: trailer)
        start = trailer + 8
    }
    return out
}

// MARK: ZIP

/// One entry of a ZIP the harness writes, with the fields the fuzzer may override.
struct ZipSpec {
    var name: [UInt8]
    var data: [UInt8]
    var deflate: Bool
    var flags: UInt16 = 0
    var method: UInt16?
    var madeBy: UInt16 = 3 << 8 | 20
    var externalAttributes: UInt32 = 0o100644 << 16
    /// Put sizes and offset in a ZIP64 extra field (32-bit fields all ones).
    var zip64 = false
    /// Values replacing the real ones in the central directory.
    var sizeOverride: UInt64?
    var compressedOverride: UInt64?
    var offsetOverride: UInt64?
    var crcOverride: UInt32?
    var extraLengthOverride: UInt16?
    var extraTail: [UInt8] = []
}

/// Writes a ZIP of `specs`: local headers and data, the central directory, and the end records
/// (ZIP64 ones when `zip64End`), with `countOverride` and `directoryOverride` replacing the real count
/// and directory offset/size when given.
func writeZip(_ specs: [ZipSpec], zip64End: Bool, countOverride: UInt64? = nil,
              directoryOverride: (offset: UInt64, size: UInt64)? = nil, comment: [UInt8] = []) -> [UInt8] {
    var out: [UInt8] = []
    var central: [UInt8] = []
    for spec in specs {
        let body = spec.deflate ? rawDeflate(spec.data, level: 6) : spec.data
        let method = spec.method ?? (spec.deflate ? 8 : 0)
        let dataCRC = crc(spec.data[...])
        let offset = UInt64(out.count)
        out += le32(0x0403_4B50) + le16(20) + le16(spec.flags) + le16(method) + le32(0) + le32(dataCRC)
            + le32(UInt32(body.count)) + le32(UInt32(spec.data.count)) + le16(UInt16(truncatingIfNeeded: spec.name.count)) + le16(0)
            + spec.name + body
        let size = spec.sizeOverride ?? UInt64(spec.data.count)
        let compressed = spec.compressedOverride ?? UInt64(body.count)
        let localOffset = spec.offsetOverride ?? offset
        var extra: [UInt8] = []
        let ones: UInt32 = 0xFFFF_FFFF
        if spec.zip64 {
            let values = [size, compressed, localOffset].flatMap(le64)
            extra = le16(1) + le16(UInt16(values.count)) + values
        }
        extra += spec.extraTail
        central += le32(0x0201_4B50) + le16(spec.madeBy) + le16(spec.zip64 ? 45 : 20) + le16(spec.flags) + le16(method)
            + le32(0) + le32(spec.crcOverride ?? dataCRC)
            + le32(spec.zip64 ? ones : UInt32(truncatingIfNeeded: compressed))
            + le32(spec.zip64 ? ones : UInt32(truncatingIfNeeded: size))
            + le16(UInt16(truncatingIfNeeded: spec.name.count)) + le16(spec.extraLengthOverride ?? UInt16(truncatingIfNeeded: extra.count))
            + le16(0) + le16(0) + le16(0) + le32(spec.externalAttributes)
            + le32(spec.zip64 ? ones : UInt32(truncatingIfNeeded: localOffset)) + spec.name + extra
    }
    let directoryOffset = directoryOverride?.offset ?? UInt64(out.count)
    let directorySize = directoryOverride?.size ?? UInt64(central.count)
    let count = countOverride ?? UInt64(specs.count)
    out += central
    if zip64End {
        let record = UInt64(out.count)
        out += le32(0x0606_4B50) + le64(44) + le16(45) + le16(45) + le32(0) + le32(0) + le64(count) + le64(count)
            + le64(directorySize) + le64(directoryOffset)
        out += le32(0x0706_4B50) + le32(0) + le64(record) + le32(1)
        out += le32(0x0605_4B50) + le16(0) + le16(0) + le16(0xFFFF) + le16(0xFFFF) + le32(0xFFFF_FFFF) + le32(0xFFFF_FFFF)
    } else {
        out += le32(0x0605_4B50) + le16(0) + le16(0) + le16(UInt16(truncatingIfNeeded: count)) + le16(UInt16(truncatingIfNeeded: count))
            + le32(UInt32(truncatingIfNeeded: directorySize)) + le32(UInt32(truncatingIfNeeded: directoryOffset))
    }
    return out + le16(UInt16(truncatingIfNeeded: comment.count)) + comment
}

/// Makes a (mutated) ZIP's CRCs and sizes right where the harness can find the data: for each central
/// entry whose local header is found, the CRC-32 (and, for deflate, the inflated size) of its data is
/// written into the central and local headers; when `fixEnd`, the end record's count, directory
/// offset and size are set to the central entries found, and a ZIP64 locator to the ZIP64 record.
func fixZip(_ bytes: [UInt8], fixEnd: Bool) -> [UInt8] {
    var out = bytes
    guard out.count >= 22 else { return out }
    let signature: (Int, UInt32) -> Bool = { i, s in get32(out, i) == s }
    guard let eocd = stride(from: out.count - 22, through: 0, by: -1).first(where: { signature($0, 0x0605_4B50) }) else { return out }
    // Central entries: from the first central signature, one after another.
    guard let first = (0..<out.count).first(where: { signature($0, 0x0201_4B50) }) else { return out }
    var index = first
    var count = 0
    while signature(index, 0x0201_4B50), let nameLength = get16(out, index + 28), let extraLength = get16(out, index + 30),
          let commentLength = get16(out, index + 32) {
        let next = index + 46 + Int(nameLength) + Int(extraLength) + Int(commentLength)
        guard next <= out.count else { break }
        count += 1
        if let method = get16(out, index + 10), let local32 = get32(out, index + 42), let compressed32 = get32(out, index + 20) {
            let local = Int(local32)
            if local32 != 0xFFFF_FFFF, signature(local, 0x0403_4B50), let n = get16(out, local + 26), let m = get16(out, local + 28) {
                let start = local + 30 + Int(n) + Int(m)
                if start <= out.count {
                    if method == 0, compressed32 != 0xFFFF_FFFF {
                        let end = min(out.count, start + Int(compressed32))
                        let value = crc(out[start..<end])
                        put(le32(value), into: &out, at: index + 16)
                        put(le32(value), into: &out, at: local + 14)
                        put(le32(UInt32(end - start)), into: &out, at: index + 24)
                    } else if method == 8, let (payload, consumed) = rawInflate(out[start...], cap: 1 << 20) {
                        let value = crc(payload[...])
                        put(le32(value), into: &out, at: index + 16)
                        put(le32(value), into: &out, at: local + 14)
                        if get32(out, index + 24) != 0xFFFF_FFFF { put(le32(UInt32(payload.count)), into: &out, at: index + 24) }
                        if compressed32 != 0xFFFF_FFFF { put(le32(UInt32(consumed)), into: &out, at: index + 20) }
                    }
                }
            }
        }
        index = next
    }
    if fixEnd {
        put(le16(UInt16(truncatingIfNeeded: count)) + le16(UInt16(truncatingIfNeeded: count))
            + le32(UInt32(truncatingIfNeeded: index - first)) + le32(UInt32(truncatingIfNeeded: first)), into: &out, at: eocd + 8)
        if eocd >= 20, signature(eocd - 20, 0x0706_4B50),
           let record = stride(from: eocd - 20 - 56, through: 0, by: -1).first(where: { signature($0, 0x0606_4B50) }) {
            put(le64(UInt64(record)), into: &out, at: eocd - 20 + 8)
            put(le64(UInt64(count)) + le64(UInt64(count)) + le64(UInt64(index - first)) + le64(UInt64(first)), into: &out, at: record + 24)
        }
    }
    return out
}
