// The tar reader: ustar, pax and GNU long names.

#if canImport(Glibc)
import Glibc
#endif

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

    static func extract<S: ByteSource, Sink: ArchiveSink>(from source: inout S, into sink: inout Sink) throws {
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
            guard checksumMatches(header) else { throw ArchiveError("is a damaged tar archive (bad header checksum)") }
            guard let size = octal(header[124..<136]), size >= 0 else {
                throw ArchiveError("is a damaged tar archive (bad size)")
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
                guard size <= 64 << 10 else { throw ArchiveError("has an oversized tar extended header") }
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
                throw ArchiveError(entry: name, "is a \(type == UInt8(ascii: "1") ? "hard" : "symbolic") link; only plain files and folders may be uploaded")
            default:
                throw ArchiveError(entry: name, "is not a plain file or folder (tar type \(UnicodeScalar(type)))")
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
