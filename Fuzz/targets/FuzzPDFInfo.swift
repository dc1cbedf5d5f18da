// libFuzzer target: what Kiosk reads from tool output and from the numbers a PDF or JPEG writes. The
// first byte picks:
//   0  arbitrary text as pdfinfo's output -> PDFToolbox.pageSizes(pdfinfo:)
//   1  the text as the PDF's title (and other metadata) inside pdfinfo's real output for a known
//      document: the sizes must be exactly the document's, whatever the metadata says
//   2  bytes as a PDF's tail -> ContentCheck.checkPDF (startxref), with a fuzzed file size
//   3  bytes as a JPEG -> ContentCheck.checkJPEG (from a file), with a fuzzed side limit
//   4  sections.json and outline bookmarks -> PDFSections.parseManifest / fromOutline
// Properties: only PublishRejected from the parsers; accepted sizes are finite and as many as the count;
// nothing traps.
import Foundation
@testable import KioskEditions
@testable import KioskFiles

#if canImport(Glibc)
import Glibc
#endif

private let jpegPath = NSTemporaryDirectory() + "kiosk-fuzz-jpeg-\(getpid())"

private func pdfinfo(title: String, sizes: [(Double, Double)]) -> String {
    var lines = ["Title:           \(title)", "Subject:         \(title)", "Author:          \(title)",
                 "Custom Metadata: no", "Tagged:          no", "Form:            none", "JavaScript:      no",
                 "Pages:           \(sizes.count)", "Encrypted:       no"]
    for (index, size) in sizes.enumerated() {
        lines.append("Page \(String(repeating: " ", count: max(1, 4 - String(index + 1).count)))\(index + 1) size: \(size.0) x \(size.1) pts")
        lines.append("Page \(String(repeating: " ", count: max(1, 4 - String(index + 1).count)))\(index + 1) rot:  0")
    }
    return (lines + ["File size:       1234 bytes", "Optimized:       no", "PDF version:     1.7"]).joined(separator: "\n") + "\n"
}

private func int(_ bytes: ArraySlice<UInt8>) -> Int {
    bytes.prefix(8).reduce(0) { $0 << 8 | Int($1) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPDFInfo(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let selector = data[0]
    let rest = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let text = String(decoding: rest, as: UTF8.self)
    let maxPages = 1 + Int(selector >> 3)
    switch selector % 5 {
    case 0:
        do {
            let sizes = try PDFToolbox.pageSizes(pdfinfo: text, file: "f.pdf", maxPages: maxPages)
            if sizes.isEmpty || sizes.count > maxPages { fatalError("accepted \(sizes.count) pages (at most \(maxPages))") }
            if sizes.contains(where: { !$0.width.isFinite || !$0.height.isFinite }) { fatalError("accepted a size that is not finite") }
        } catch {}
    case 1:
        let real: [(Double, Double)] = (0..<(1 + Int(selector >> 5))).map { (595 + Double($0), 842.5 - Double($0)) }
        do {
            let sizes = try PDFToolbox.pageSizes(pdfinfo: pdfinfo(title: text, sizes: real), file: "f.pdf", maxPages: 64)
            if sizes.map({ [$0.width, $0.height] }) != real.map({ [$0.0, $0.1] }) {
                fatalError("metadata \(text.debugDescription) changed the page sizes to \(sizes)")
            }
        } catch {
            fatalError("metadata \(text.debugDescription) made pdfinfo's output unreadable: \(error)")
        }
    case 2:
        let sizes: [Int64] = [Int64(rest.count), Int64(rest.count) + 1, 32, Int64.max, 1 << 40]
        let fileSize = max(Int64(rest.count), sizes[Int(selector >> 3) % sizes.count])
        let problem = ContentCheck.checkPDF(head: Array(rest.prefix(8)), tail: Array(rest.suffix(1024)), size: fileSize)
        if problem == nil, !rest.starts(with: Array("%PDF-".utf8)) { fatalError("accepted a PDF without %PDF-") }
        // The same through a file, as the publisher reads it.
        let pdf = Array("%PDF-1.7\n".utf8) + [UInt8](repeating: 0x20, count: 32) + Array("startxref\n".utf8) + rest + Array("\n%%EOF\n".utf8)
        _ = ContentCheck.checkPDF(head: Array(pdf.prefix(8)), tail: Array(pdf.suffix(1024)), size: Int64(pdf.count))
    case 3:
        let fd = open(jpegPath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { fatalError("cannot create \(jpegPath)") }
        let file = OpenFile(fd: fd, path: jpegPath)
        try? rest.withUnsafeBytes { try file.write($0) }
        let sides = [0, 1, 30_000, Int.max, -1]
        let maxSide = sides[Int(selector >> 3) % sides.count]
        if case .success(let found) = try? ContentCheck.checkJPEG(file, size: Int64(rest.count), maxSide: maxSide) {
            if found.width < 1 || found.height < 1 || found.width > maxSide || found.height > maxSide {
                fatalError("accepted \(found.width)x\(found.height) with at most \(maxSide) a side")
            }
        }
    default:
        let pageCount = Int(selector >> 3)
        if let sections = try? PDFSections.parseManifest(rest, pageCount: pageCount), sections.count != pageCount {
            fatalError("sections.json gave \(sections.count) sections for \(pageCount) pages")
        }
        var bookmarks: [PDFSections.Bookmark] = []
        var index = 0
        while index + 9 <= rest.count {
            let page = int(rest[index..<(index + 8)])
            let length = Int(rest[index + 8] % 16)
            let title = String(decoding: rest[(index + 9)..<min(rest.count, index + 9 + length)], as: UTF8.self)
            bookmarks.append(.init(title: title, page: page))
            index += 9 + length
        }
        if let sections = PDFSections.fromOutline(bookmarks, pageCount: pageCount), sections.count != pageCount {
            fatalError("the outline gave \(sections.count) sections for \(pageCount) pages")
        }
    }
    return 0
}
