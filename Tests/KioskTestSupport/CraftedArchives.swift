/// Archives written byte by byte for the hostile-upload tests: tar headers with valid checksums, gzip
/// members with valid header and trailer CRCs (stored deflate blocks), ZIP records with valid CRC-32s, so
/// each one gets past the format's own checks to the field it is aimed at.
public enum CraftedArchives {
    // MARK: Little-endian fields and CRC-32

    public static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    public static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    public static func le64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }

    static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// The CRC-32 of ZIP and gzip.
    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    // MARK: tar

    /// A 12-byte octal size field (11 digits and a NUL).
    public static func octal(_ value: UInt64, width: Int = 12) -> [UInt8] {
        let digits = Array(String(value, radix: 8).utf8)
        return [UInt8](repeating: UInt8(ascii: "0"), count: max(0, width - 1 - digits.count)) + digits.suffix(width - 1) + [0]
    }

    /// A 12-byte GNU base-256 field: the marker byte, then `value` big-endian in the last 8 bytes.
    public static func base256(_ value: UInt64, first: UInt8 = 0x80) -> [UInt8] {
        [first, 0, 0, 0] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// A ustar header whose size field is `sizeField` (12 bytes), with a correct checksum.
    public static func tarHeader(_ name: String, type: UInt8 = UInt8(ascii: "0"), sizeField: [UInt8]) -> [UInt8] {
        var header = [UInt8](repeating: 0, count: 512)
        func put(_ bytes: [UInt8], at offset: Int) { header.replaceSubrange(offset..<(offset + bytes.count), with: bytes) }
        put(Array(name.utf8.prefix(100)), at: 0)
        put(Array("0000644\0".utf8), at: 100)
        put(Array("0000000\0".utf8), at: 108)
        put(Array("0000000\0".utf8), at: 116)
        put(Array(sizeField.prefix(12)), at: 124)
        put(Array("00000000000\0".utf8), at: 136)
        header[156] = type
        put(Array("ustar\0".utf8), at: 257)
        put(Array("00".utf8), at: 263)
        return withChecksum(header)
    }

    /// `header` with its checksum field recomputed ("%06o\0 ").
    public static func withChecksum(_ header: [UInt8]) -> [UInt8] {
        var header = header
        header.replaceSubrange(148..<156, with: [UInt8](repeating: 0x20, count: 8))
        let sum = header.reduce(0) { $0 + Int($1) }
        header.replaceSubrange(148..<156, with: octal(UInt64(sum), width: 7) + [0x20])
        return header
    }

    /// `data` padded with zeros to whole 512-byte blocks.
    public static func padded(_ data: [UInt8]) -> [UInt8] {
        data + [UInt8](repeating: 0, count: (512 - data.count % 512) % 512)
    }

    /// A plain file entry.
    public static func tarFile(_ name: String, _ data: [UInt8]) -> [UInt8] {
        tarHeader(name, sizeField: octal(UInt64(data.count))) + padded(data)
    }

    /// A pax extended header ('x') holding `records` as written (each "<len> key=value\n").
    public static func paxHeader(_ records: [UInt8]) -> [UInt8] {
        tarHeader("PaxHeader", type: UInt8(ascii: "x"), sizeField: octal(UInt64(records.count))) + padded(records)
    }

    /// A pax record with its correct length prefix.
    public static func paxRecord(_ key: String, _ value: String) -> [UInt8] {
        let body = " \(key)=\(value)\n"
        var length = body.utf8.count + 1
        while String(length).utf8.count + body.utf8.count != length { length += 1 }
        return Array("\(length)\(body)".utf8)
    }

    /// The two zero blocks that end a tar archive.
    public static let tarEnd = [UInt8](repeating: 0, count: 1024)

    /// A minimal valid tar that unpacks to a publish folder (`issue.json` only).
    public static var minimalTar: [UInt8] { tarFile("issue.json", Array("{}".utf8)) + tarEnd }

    // MARK: gzip

    /// A gzip member of `payload` in stored deflate blocks, with optional header fields and a correct
    /// header CRC (when `headerCRC`) and trailer (CRC-32 and length), unless `breakTrailer`.
    public static func gzipMember(_ payload: [UInt8], extra: [UInt8]? = nil, name: String? = nil, headerCRC: Bool = false,
                                  method: UInt8 = 8, breakTrailer: Bool = false) -> [UInt8] {
        var flags: UInt8 = 0
        if headerCRC { flags |= 0x02 }
        if extra != nil { flags |= 0x04 }
        if name != nil { flags |= 0x08 }
        var bytes: [UInt8] = [0x1F, 0x8B, method, flags, 0, 0, 0, 0, 0, 3]
        if let extra { bytes += le16(UInt16(extra.count)) + extra }
        if let name { bytes += Array(name.utf8) + [0] }
        if headerCRC { bytes += le16(UInt16(crc32(bytes) & 0xFFFF)) }
        bytes += storedDeflate(payload)
        bytes += le32(crc32(payload) ^ (breakTrailer ? 1 : 0)) + le32(UInt32(truncatingIfNeeded: payload.count))
        return bytes
    }

    /// Raw deflate data of stored blocks (at most 65 535 bytes each).
    public static func storedDeflate(_ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var start = 0
        repeat {
            let end = min(payload.count, start + 65_535)
            let length = UInt16(end - start)
            out += [end == payload.count ? 1 : 0] + le16(length) + le16(~length) + payload[start..<end]
            start = end
        } while start < payload.count
        return out
    }

    // MARK: ZIP

    /// A local file header (stored, no extra field) followed by `data`.
    public static func zipLocal(_ name: String, _ data: [UInt8]) -> [UInt8] {
        le32(0x0403_4B50) + le16(20) + le16(0) + le16(0) + le16(0) + le16(0) + le32(crc32(data))
            + le32(UInt32(data.count)) + le32(UInt32(data.count)) + le16(UInt16(name.utf8.count)) + le16(0)
            + Array(name.utf8) + data
    }

    /// A central directory entry with the given 32-bit fields and extra field.
    public static func zipCentral(_ name: String, crc: UInt32, compressedSize: UInt32, size: UInt32, localOffset: UInt32,
                                  extra: [UInt8] = [], extraLength: UInt16? = nil, nameLength: UInt16? = nil) -> [UInt8] {
        le32(0x0201_4B50) + le16(3 << 8 | 20) + le16(20) + le16(0) + le16(0) + le16(0) + le16(0) + le32(crc)
            + le32(compressedSize) + le32(size) + le16(nameLength ?? UInt16(name.utf8.count))
            + le16(extraLength ?? UInt16(extra.count)) + le16(0) + le16(0) + le16(0) + le32(0o100644 << 16) + le32(localOffset)
            + Array(name.utf8) + extra
    }

    /// A ZIP64 extended information extra field holding `values` (8 bytes each), its length as given.
    public static func zip64Extra(_ values: [UInt64], declaredLength: UInt16? = nil) -> [UInt8] {
        le16(0x0001) + le16(declaredLength ?? UInt16(8 * values.count)) + values.flatMap(le64)
    }

    /// The classic end of central directory record.
    public static func zipEnd(count: UInt16, directorySize: UInt32, directoryOffset: UInt32) -> [UInt8] {
        le32(0x0605_4B50) + le16(0) + le16(0) + le16(count) + le16(count) + le32(directorySize) + le32(directoryOffset) + le16(0)
    }

    /// The ZIP64 end of central directory record (56 bytes).
    public static func zip64End(count: UInt64, directorySize: UInt64, directoryOffset: UInt64) -> [UInt8] {
        le32(0x0606_4B50) + le64(44) + le16(45) + le16(45) + le32(0) + le32(0) + le64(count) + le64(count)
            + le64(directorySize) + le64(directoryOffset)
    }

    /// The ZIP64 end of central directory locator (20 bytes).
    public static func zip64Locator(recordOffset: UInt64) -> [UInt8] {
        le32(0x0706_4B50) + le32(0) + le64(recordOffset) + le32(1)
    }

    /// A one-entry stored ZIP of `name` holding `data`, its central entry built by `central` from the
    /// local header's offset (0) and the data's CRC.
    public static func zip(_ name: String, _ data: [UInt8],
                           central: ((_ crc: UInt32) -> [UInt8])? = nil) -> [UInt8] {
        let local = zipLocal(name, data)
        let crc = crc32(data)
        let entry = central?(crc) ?? zipCentral(name, crc: crc, compressedSize: UInt32(data.count), size: UInt32(data.count), localOffset: 0)
        return local + entry + zipEnd(count: 1, directorySize: UInt32(entry.count), directoryOffset: UInt32(local.count))
    }

    /// A 128-byte ZIP: a local header stub (so it reads as a ZIP), then ZIP64 end
    /// record, locator and classic end record, the ZIP64 record claiming `count` entries.
    public static func zip64Claiming(count: UInt64 = 0xFFFF_FFFF_FFFF_FFFF, directorySize: UInt64 = 0,
                                     directoryOffset: UInt64 = 30, recordOffset: UInt64 = 30) -> [UInt8] {
        let stub = le32(0x0403_4B50) + [UInt8](repeating: 0, count: 26)
        return stub + zip64End(count: count, directorySize: directorySize, directoryOffset: directoryOffset)
            + zip64Locator(recordOffset: recordOffset)
            + le32(0x0605_4B50) + le16(0) + le16(0) + le16(0xFFFF) + le16(0xFFFF) + le32(0xFFFF_FFFF) + le32(0xFFFF_FFFF) + le16(0)
    }
}
