// The tar reader: ustar, pax and GNU long names. Every header number is parsed with checked
// arithmetic; a size that cannot be right is an `ArchiveError`, never a trap.

#if canImport(Glibc)
import KioskIntegers
import Glibc
#endif
enum TarReader {
    /// Largest pax extended header, pax global header or GNU long name accepted.
    static let maxExtendedHeader: Int64 = 64 << 10

    static func looksLikeTar(_ input: ArchiveInput) throws -> Bool {
        let header = try input.bytes(at: 0, count: 512)
        guard header.count == 512 else { return false }
        return header[257..<262].elementsEqual("ustar".utf8) || checksumMatches(header)
    }

    static func checksumMatches(_ header: [UInt8]) -> Bool {
        guard header.count == 512, case .value(let stored) = number(header[148..<156]) else { return false }
        var sum: Int64 = 0      // at most 512 × 255
        for (index, byte) in header.enumerated() { sum += (148..<156).contains(index) ? 32 : Int64(widening: byte) }
        return sum == stored
    }

    /// A numeric header field as read.
    enum Number: Equatable {
        case value(Int64)
        /// GNU base-256 with the sign bit set.
        case negative
        /// More than `Int64.max`.
        case tooLarge
        /// Not octal digits (between optional spaces and NULs), nor base-256.
        case invalid
    }

    /// A numeric field: octal digits, or GNU base-256 (first byte's high bit set; two's complement, so
    /// `0xFF` first is negative).
    static func number(_ field: ArraySlice<UInt8>) -> Number {
        if let first = field.first, first & 0x80 != 0 {
            if first & 0x40 != 0 { return .negative }
            var value = Int64(widening: first & 0x3F)
            for byte in field.dropFirst() {
                let (shifted, overflow) = value.multipliedReportingOverflow(by: 256)
                guard !overflow else { return .tooLarge }
                value = shifted | Int64(widening: byte)
            }
            return .value(value)
        }
        var value: Int64 = 0
        var seen = false
        for byte in field {
            if byte == 0 || byte == 0x20 { if seen { break } else { continue } }
            guard (0x30...0x37).contains(byte) else { return .invalid }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 8)
            guard !overflow else { return .tooLarge }
            value = shifted | Int64(widening: byte - 0x30)
            seen = true
        }
        return .value(value)
    }

    static func string(_ field: ArraySlice<UInt8>) -> String {
        String(decoding: field.prefix { $0 != 0 }, as: UTF8.self)
    }

    static func extract<S: ByteSource, Sink: ArchiveSink>(from source: inout S, into sink: inout Sink) throws {
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { block.deallocate() }
        guard let base = block.baseAddress else { return }
        var longName: String?
        var paxSize: Int64?
        var zeroBlocks = 0
        while true {
            let n = try source.read(into: base, count: 512)
            if n == 0 { break }
            if n < 512 { try source.readExactly(into: base + n, count: 512 - n) }
            let header = Array(UnsafeRawBufferPointer(rebasing: block[0..<512]))
            if header.allSatisfy({ $0 == 0 }) {
                zeroBlocks += 1
                if zeroBlocks == 2 { break }
                continue
            }
            zeroBlocks = 0
            guard checksumMatches(header) else { throw ArchiveError("is a damaged tar archive (bad header checksum)") }
            var name = string(header[0..<100])
            let prefix = string(header[345..<500])
            if header[257..<262].elementsEqual("ustar".utf8), !prefix.isEmpty { name = prefix + "/" + name }
            if let long = longName { name = long; longName = nil }
            let type = header[156]
            let size = try entrySize(header, pax: paxSize, name: name, source: source)
            paxSize = nil
            // Whole blocks: `size` is at most Int64.max - 511 (`entrySize`).
            let padded = (size + 511) / 512 * 512
            switch type {
            case UInt8(ascii: "0"), 0, UInt8(ascii: "7"):
                try sink.file(name, declaredSize: size) { writer in
                    var left = size
                    while left > 0 {
                        let want = Int(widening: min(Int64(widening: block.count), left))
                        try source.readExactly(into: base, count: want)
                        try writer.write(UnsafeRawBufferPointer(rebasing: block[0..<want]))
                        left -= Int64(widening: want)
                    }
                }
                try skip(&source, padded - size, buffer: block)
            case UInt8(ascii: "5"):
                try sink.directory(name)
                try skip(&source, padded, buffer: block)
            case UInt8(ascii: "x"), UInt8(ascii: "L"), UInt8(ascii: "g"):
                guard size <= maxExtendedHeader else {
                    throw ArchiveError("has a tar extended header of \(size) bytes; at most \(maxExtendedHeader) are accepted")
                }
                try source.readExactly(into: base, count: Int(widening: padded))
                let data = Array(UnsafeRawBufferPointer(rebasing: block[0..<Int(widening: size)]))
                if type == UInt8(ascii: "L") {
                    longName = string(data[...])
                } else if type == UInt8(ascii: "x") {
                    guard let records = paxRecords(data) else { throw ArchiveError("has a damaged pax extended header") }
                    if let path = records["path"] { longName = String(decoding: path, as: UTF8.self) }
                    if let text = records["size"] {
                        guard let value = decimal(text[...]) else {
                            throw ArchiveError("has a pax extended header whose size is not a number of bytes")
                        }
                        paxSize = value
                    }
                }
            case UInt8(ascii: "1"), UInt8(ascii: "2"):
                throw ArchiveError(entry: name, "is a \(type == UInt8(ascii: "1") ? "hard" : "symbolic") link; only plain files and folders may be uploaded")
            default:
                throw ArchiveError(entry: name, "is not a plain file or folder (tar type \(UnicodeScalar(type).escaped(asASCII: true)))")
            }
        }
        try source.finish()
    }

    /// The entry's size: the pax `size` record when one came before, else the header's size field;
    /// refused when negative, unreadable, too large to round up to whole blocks, or more than the
    /// source can still hold.
    static func entrySize<S: ByteSource>(_ header: [UInt8], pax: Int64?, name: String, source: S) throws -> Int64 {
        let size: Int64
        if let pax {
            size = pax
        } else {
            switch number(header[124..<136]) {
            case .value(let value): size = value
            case .negative: throw ArchiveError(entry: name, "has a negative size in its tar header (damaged archive)")
            case .tooLarge: throw ArchiveError(entry: name, "has a size larger than any file can be in its tar header (damaged archive)")
            case .invalid: throw ArchiveError(entry: name, "has an unreadable size in its tar header (damaged archive)")
            }
        }
        guard size <= Int64.max - 511 else {
            throw ArchiveError(entry: name, "has a size larger than any file can be in its tar header (damaged archive)")
        }
        if let remaining = source.remaining, size > remaining {
            throw ArchiveError(entry: name, "declares \(size) bytes, but only \(remaining) bytes of the archive follow its header: "
                               + "the upload is truncated or damaged")
        }
        return size
    }

    static func skip<S: ByteSource>(_ source: inout S, _ count: Int64, buffer: UnsafeMutableRawBufferPointer) throws {
        guard let base = buffer.baseAddress else { return }
        var left = count
        while left > 0 {
            let want = Int(widening: min(left, Int64(widening: buffer.count)))
            try source.readExactly(into: base, count: want)
            left -= Int64(widening: want)
        }
    }

    /// A non-negative decimal number without sign or spaces; nil when it is not one or exceeds `Int64.max`.
    static func decimal(_ digits: ArraySlice<UInt8>) -> Int64? {
        guard !digits.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard (0x30...0x39).contains(byte) else { return nil }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.addingReportingOverflow(Int64(widening: byte - 0x30))
            guard !overflow, !overflow2 else { return nil }
            value = sum
        }
        return value
    }

    /// The records of a pax extended header ("<len> <key>=<value>\n" each, `len` counting the whole
    /// record); nil when a record is malformed. Trailing NUL bytes are allowed.
    static func paxRecords(_ data: [UInt8]) -> [String: [UInt8]]? {
        var records: [String: [UInt8]] = [:]
        var index = 0
        while index < data.count {
            if data[index...].allSatisfy({ $0 == 0 }) { break }
            guard let space = data[index...].firstIndex(of: 0x20),
                  let length = decimal(data[index..<space]), length > 0,
                  length <= Int64(widening: data.count - index)     // so `index + length` cannot overflow
            else { return nil }
            let end = index + Int(widening: length)
            // The record holds at least "<len> ", "=" and "\n".
            guard end - 1 > space + 1, data[end - 1] == 0x0A else { return nil }
            let record = data[(space + 1)..<(end - 1)]
            guard let equals = record.firstIndex(of: UInt8(ascii: "=")) else { return nil }
            records[String(decoding: record[record.startIndex..<equals], as: UTF8.self)] = Array(record[(equals + 1)...])
            index = end
        }
        return records
    }

    /// The `path` record of a pax extended header; nil when there is none or the header is malformed.
    static func paxPath(_ data: [UInt8]) -> String? {
        paxRecords(data)?["path"].map { String(decoding: $0, as: UTF8.self) }
    }
}
