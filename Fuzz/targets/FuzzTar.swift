// libFuzzer target: the tar reader (KioskFiles' TarReader through ArchiveReader.read), structure-aware.
// The input is a tar stream. Before reading, the harness walks its headers as a reader would and
// recomputes every header checksum (and, when the first byte's low bit is set, every pax record's
// length and the pax header's size), so mutations of sizes, types, names and pax records get past the
// checksum to the code behind it. The second bit of the first byte gzips the result (read through
// GzipSource). Properties: only `ArchiveError` is thrown (anything else would answer HTTP 500); a tar
// entry delivers exactly its declared size; nothing traps.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTar(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let options = data[0]
    let tar = fixTar(Array(UnsafeBufferPointer(start: data + 1, count: size - 1)), fixPax: options & 1 != 0)
    let bytes = options & 2 != 0 ? gzipMember(tar) : tar
    // A plain tar shorter than a block is told apart from nothing: pad it so the tar path is taken.
    readArchive(bytes.count < 512 && options & 2 == 0 ? bytes + [UInt8](repeating: 0, count: 512 - bytes.count) : bytes, exact: true)
    return 0
}
