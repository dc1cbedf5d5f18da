// libFuzzer target: the gzip layer (KioskFiles' GzipSource), structure-aware. The first byte picks:
//   0  a description: header options (extra field and its declared length, name, comment, header
//      CRC, level), a number of members and the payload; the harness writes the members with correct
//      CRCs and lengths and GzipSource must give back exactly the payload (or refuse when a declared
//      extra length lies); then, read as a tar.gz, only ArchiveError may come out
//   1  a mutated gzip stream whose header CRC and each member's trailer (CRC-32, length) the harness
//      makes right; read through GzipSource and as a tar.gz
//   2  the same without the fix-ups (bad headers, truncations, wrong trailers)
//   3  the payload as a tar (checksums fixed), split over members, read as a tar.gz
// Properties: only ArchiveError; the output of a well-formed stream is its payload; nothing traps.
import Foundation
@testable import KioskFiles

/// All of a gzip stream through GzipSource; nil when it was refused.
func inflateAll(_ bytes: [UInt8]) -> [UInt8]? {
    do {
        var source = try GzipSource(input: try ArchiveInput(inputFile(bytes)), limit: 16 << 20)
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = try chunk.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return try source.read(into: base, count: 1 + Int(out.count % raw.count))   // varied read sizes
            }
            if n == 0 { break }
            out += chunk.prefix(n)
        }
        try source.finish()
        return out
    } catch is ArchiveError {
        return nil
    } catch {
        fatalError("GzipSource threw \(type(of: error)), not an ArchiveError: \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGzip(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    var cursor = Cursor(Array(UnsafeBufferPointer(start: data, count: size)))
    switch cursor.byte() % 4 {
    case 0:
        let header = GzipHeader(&cursor)
        let members = 1 + Int(cursor.byte() % 4)
        let trailing = cursor.take(Int(cursor.byte() % 8))
        let payload = cursor.rest()
        var stream: [UInt8] = []
        var start = 0
        for member in 0..<members {
            let end = member == members - 1 ? payload.count : min(payload.count, start + payload.count / members)
            stream += gzipMember(Array(payload[start..<end]), header: header)
            start = end
        }
        // Bytes after the last member are ignored unless they start another member.
        let ignorable = !trailing.starts(with: [0x1F, 0x8B])
        stream += trailing
        let lies = header.extraLength.map { $0 != UInt16(truncatingIfNeeded: header.extra?.count ?? 0) } ?? false
        let out = inflateAll(stream)
        if !lies, ignorable, (header.extra?.count ?? 0) <= 0xFFFF, out != payload {
            fatalError("a well-formed gzip stream of \(members) member(s) gave \(out.map { "\($0.count) bytes" } ?? "a refusal"), not its \(payload.count)-byte payload")
        }
        readArchive(stream, exact: true)
    case 1:
        let stream = fixGzip(cursor.rest())
        _ = inflateAll(stream)
        readArchive(stream, exact: true)
    case 2:
        let stream = cursor.rest()
        _ = inflateAll(stream)
        readArchive(stream, exact: true)
    default:
        let members = 1 + Int(cursor.byte() % 3)
        let tar = fixTar(cursor.rest(), fixPax: true)
        var stream: [UInt8] = []
        var start = 0
        for member in 0..<members {
            let end = member == members - 1 ? tar.count : min(tar.count, start + tar.count / members)
            stream += gzipMember(Array(tar[start..<end]))
            start = end
        }
        readArchive(stream, exact: true)
    }
    return 0
}
