/// Why a ZIP could not be written.
package enum ZipError: Error, CustomStringConvertible {
    case zlib(String, Int32)
    case libdeflate(String)
    case changed(String)
    case tooLarge(String)
    case nameTooLong(String)
    case outOfRange(String)

    package var description: String {
        switch self {
        case .zlib(let call, let status): "zlib \(call) failed (\(status))"
        case .libdeflate(let call): "\(call) failed"
        case .changed(let path): "\(path) changed while the bundle was being built"
        case .tooLarge(let name): "\(name) is too large for an entry without ZIP64"
        case .nameTooLong(let name): "the entry name \(name.prefix(80))… is longer than a ZIP allows (65535 bytes)"
        case .outOfRange(let what): "\(what) is out of range for the ZIP writer"
        }
    }
}

/// Little-endian field writer for ZIP headers.
package struct HeaderBytes {
    package var bytes: [UInt8] = []
    package init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }
    package mutating func u16(_ value: UInt16) { bytes.append(UInt8(truncatingIfNeeded: value)); bytes.append(UInt8(truncatingIfNeeded: value >> 8)) }
    package mutating func u32(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) } }
    package mutating func u64(_ value: UInt64) { for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) } }
    package mutating func append(_ other: [UInt8]) { bytes.append(contentsOf: other) }
}

/// What the central directory needs to know about an entry once written.
package struct CentralRecord {
    package var name: [UInt8]
    package var method: UInt16
    package var flags: UInt16
    package var crc: UInt32
    package var compressedSize: UInt64
    package var size: UInt64
    package var localHeaderOffset: UInt64

    package init(name: [UInt8], method: UInt16, flags: UInt16, crc: UInt32, compressedSize: UInt64, size: UInt64,
                 localHeaderOffset: UInt64) {
        self.name = name; self.method = method; self.flags = flags; self.crc = crc
        self.compressedSize = compressedSize; self.size = size; self.localHeaderOffset = localHeaderOffset
    }
}

/// ZIP format constants and header encoding (PKWARE APPNOTE 6.3.x).
package enum ZipFormat {
    package static let max32: UInt64 = 0xFFFF_FFFF
    package static let max16: UInt64 = 0xFFFF
    package static let versionMadeBy: UInt16 = 3 << 8 | 45     // Unix, spec 4.5
    package static let flagDataDescriptor: UInt16 = 1 << 3
    package static let flagUTF8: UInt16 = 1 << 11
    package static let externalAttributes: UInt32 = 0o100644 << 16   // regular file, rw-r--r--

    /// DOS date and time of midnight on `date` (ZIP's only mandatory timestamp). Each field is kept to
    /// its bits: years 1980-2107, months 1-12, days 1-31.
    package static func dosDateTime(year: Int, month: Int, day: Int) -> (date: UInt16, time: UInt16) {
        let y = min(max(year, 1980), 2107) - 1980, m = min(max(month, 1), 12), d = min(max(day, 1), 31)
        return (UInt16(truncatingIfNeeded: y << 9 | m << 5 | d), 0)
    }

    /// A name's length for its 16-bit field.
    package static func nameLength(_ name: [UInt8]) throws -> UInt16 {
        guard let length = UInt16(exactly: name.count) else { throw ZipError.nameTooLong(String(decoding: name, as: UTF8.self)) }
        return length
    }

    /// A local header; without `zip64`, sizes of 4 GiB or more throw (`tooLarge`).
    package static func localHeader(name: [UInt8], flags: UInt16, method: UInt16, dos: (date: UInt16, time: UInt16),
                            crc: UInt32, compressedSize: UInt64, size: UInt64, zip64: Bool) throws -> [UInt8] {
        let nameLength = try nameLength(name)
        guard zip64 || (compressedSize < max32 && size < max32) else { throw ZipError.tooLarge(String(decoding: name, as: UTF8.self)) }
        var h = HeaderBytes(capacity: 30 + name.count + 20)
        h.u32(0x0403_4B50)
        h.u16(zip64 ? 45 : 20)
        h.u16(flags)
        h.u16(method)
        h.u16(dos.time)
        h.u16(dos.date)
        h.u32(crc)
        // With ZIP64, all ones: the extra field holds the sizes.
        h.u32(zip64 ? .max : UInt32(clamping: compressedSize))
        h.u32(zip64 ? .max : UInt32(clamping: size))
        h.u16(nameLength)
        h.u16(zip64 ? 20 : 0)
        h.append(name)
        if zip64 {
            h.u16(0x0001)
            h.u16(16)
            h.u64(size)
            h.u64(compressedSize)
        }
        return h.bytes
    }

    /// A data descriptor; without `zip64`, sizes of 4 GiB or more throw (`tooLarge`, naming `name`).
    package static func dataDescriptor(name: String, crc: UInt32, compressedSize: UInt64, size: UInt64, zip64: Bool) throws -> [UInt8] {
        var h = HeaderBytes(capacity: 24)
        h.u32(0x0807_4B50)
        h.u32(crc)
        if zip64 {
            h.u64(compressedSize)
            h.u64(size)
        } else {
            guard let compressedSize = UInt32(exactly: compressedSize), let size = UInt32(exactly: size) else {
                throw ZipError.tooLarge(name)
            }
            h.u32(compressedSize)
            h.u32(size)
        }
        return h.bytes
    }

    package static func centralHeader(_ r: CentralRecord, dos: (date: UInt16, time: UInt16), forceZIP64: Bool) throws -> [UInt8] {
        let nameLength = try nameLength(r.name)
        let bigSize = forceZIP64 || r.size >= max32
        let bigCompressed = forceZIP64 || r.compressedSize >= max32
        let bigOffset = forceZIP64 || r.localHeaderOffset >= max32
        var extra = HeaderBytes(capacity: 28)
        if bigSize || bigCompressed || bigOffset {
            extra.u16(0x0001)
            extra.u16((bigSize ? 8 : 0) + (bigCompressed ? 8 : 0) + (bigOffset ? 8 : 0))
            if bigSize { extra.u64(r.size) }
            if bigCompressed { extra.u64(r.compressedSize) }
            if bigOffset { extra.u64(r.localHeaderOffset) }
        }
        let zip64 = !extra.bytes.isEmpty
        var h = HeaderBytes(capacity: 46 + r.name.count + extra.bytes.count)
        h.u32(0x0201_4B50)
        h.u16(versionMadeBy)
        h.u16(zip64 ? 45 : 20)
        h.u16(r.flags)
        h.u16(r.method)
        h.u16(dos.time)
        h.u16(dos.date)
        h.u32(r.crc)
        // A value of 4 GiB or more is all ones here; the ZIP64 extra field holds it.
        h.u32(bigCompressed ? .max : UInt32(clamping: r.compressedSize))
        h.u32(bigSize ? .max : UInt32(clamping: r.size))
        h.u16(nameLength)
        h.u16(UInt16(clamping: extra.bytes.count))     // 0, or 4 + 8 for each of at most 3 values
        h.u16(0)            // comment
        h.u16(0)            // disk number start
        h.u16(0)            // internal attributes
        h.u32(externalAttributes)
        h.u32(bigOffset ? .max : UInt32(clamping: r.localHeaderOffset))
        h.append(r.name)
        h.append(extra.bytes)
        return h.bytes
    }

    /// The end records: ZIP64 end record and locator when anything needs them (or forced), then the
    /// classic end of central directory record.
    package static func end(entries: Int, directoryOffset: UInt64, directorySize: UInt64, forceZIP64: Bool) -> [UInt8] {
        let count = UInt64(clamping: entries)    // a count: never negative
        let zip64 = forceZIP64 || count >= max16 || directoryOffset >= max32 || directorySize >= max32
        var h = HeaderBytes(capacity: 98)
        if zip64 {
            let recordOffset = directoryOffset + directorySize
            h.u32(0x0606_4B50)
            h.u64(44)
            h.u16(versionMadeBy)
            h.u16(45)
            h.u32(0)
            h.u32(0)
            h.u64(count)
            h.u64(count)
            h.u64(directorySize)
            h.u64(directoryOffset)
            h.u32(0x0706_4B50)
            h.u32(0)
            h.u64(recordOffset)
            h.u32(1)
        }
        h.u32(0x0605_4B50)
        h.u16(0)
        h.u16(0)
        // With ZIP64, all ones: the ZIP64 end record holds the values.
        h.u16(zip64 ? .max : UInt16(clamping: count))
        h.u16(zip64 ? .max : UInt16(clamping: count))
        h.u32(zip64 ? .max : UInt32(clamping: directorySize))
        h.u32(zip64 ? .max : UInt32(clamping: directoryOffset))
        h.u16(0)
        return h.bytes
    }
}
