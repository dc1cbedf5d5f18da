// libFuzzer target: the ZIP reader (KioskFiles' ZipReader through ArchiveReader.read), structure-aware.
// The first byte picks:
//   0  a description: up to 4 entries (name, data, stored or deflated, flags, method, mode) written by
//      the harness with correct CRCs and offsets, then some of the central directory's fields replaced
//      by fuzzed values, often edges (sizes, offsets, CRC, ZIP64 extra field and its declared length),
//      and the end records (classic or ZIP64) with a fuzzed count or directory offset/size
//   1  a mutated ZIP whose CRCs and sizes the harness makes right, and whose end records (and ZIP64
//      locator) it points at the central directory found
//   2  a mutated ZIP with CRCs fixed but the end records left as mutated
// Properties: only ArchiveError is thrown (anything else would answer HTTP 500); no entry delivers
// more bytes than it declares; an untouched description's ZIP is read back whole; nothing traps.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzZip(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    var cursor = Cursor(Array(UnsafeBufferPointer(start: data, count: size)))
    switch cursor.byte() % 3 {
    case 0:
        let shape = cursor.byte()
        let count = 1 + Int(shape % 4)
        var specs: [ZipSpec] = []
        var touched = false
        for _ in 0..<count {
            let kind = cursor.byte()
            let name = cursor.take(1 + Int(cursor.byte() % 24)).map { $0 == 0 || $0 == 0x2F ? 0x61 : $0 }
            var spec = ZipSpec(name: name, data: cursor.take(Int(cursor.u16() % 4096)), deflate: kind & 1 != 0)
            spec.zip64 = kind & 2 != 0
            if kind & 4 != 0 { spec.sizeOverride = cursor.edgy64(); touched = true }
            if kind & 8 != 0 { spec.compressedOverride = cursor.edgy64(); touched = true }
            if kind & 16 != 0 { spec.offsetOverride = cursor.edgy64(); touched = true }
            if kind & 32 != 0 { spec.crcOverride = cursor.u32(); touched = true }
            if kind & 64 != 0 {
                spec.extraLengthOverride = cursor.u16()
                spec.extraTail = cursor.take(Int(cursor.byte() % 32))
                touched = true
            }
            if kind & 128 != 0 {
                spec.flags = cursor.u16()
                spec.method = cursor.byte() & 1 == 0 ? cursor.u16() : nil
                spec.madeBy = cursor.u16()
                spec.externalAttributes = cursor.u32()
                touched = true
            }
            specs.append(spec)
        }
        let zip64End = shape & 4 != 0
        var countOverride: UInt64?
        var directoryOverride: (UInt64, UInt64)?
        if shape & 8 != 0 { countOverride = cursor.edgy64(); touched = true }
        if shape & 16 != 0 { directoryOverride = (cursor.edgy64(), cursor.edgy64()); touched = true }
        let comment = shape & 32 != 0 ? cursor.take(Int(cursor.byte())) : []
        let zip = writeZip(specs, zip64End: zip64End, countOverride: countOverride, directoryOverride: directoryOverride, comment: comment)
        let read = readArchive(zip, exact: false)
        // Unique names, nothing overridden: every entry comes back whole.
        let names = Set(specs.map { String(decoding: $0.name, as: UTF8.self) })
        if !touched, names.count == specs.count, !comment.contains(0x50) {
            guard let read else { fatalError("a well-formed ZIP of \(specs.count) entries was refused") }
            for spec in specs where read.delivered[String(decoding: spec.name, as: UTF8.self)] != Int64(spec.data.count) {
                if !String(decoding: spec.name, as: UTF8.self).hasSuffix("/") { fatalError("entry \(spec.name) not read back whole") }
            }
        }
    case 1:
        readArchive(fixZip(cursor.rest(), fixEnd: true), exact: false)
    default:
        readArchive(fixZip(cursor.rest(), fixEnd: false), exact: false)
    }
    return 0
}
