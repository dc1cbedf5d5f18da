import Foundation

/// PDFs written by hand for the PDF-publishing tests: real, minimal documents (a catalogue, a page tree,
/// Helvetica text, a cross-reference table with correct offsets), with an optional outline and the
/// hostile variants the tests need. Every tool of poppler-utils and qpdf reads them.
public enum TestPDFs {
    /// A PDF of one page per entry of `texts` (each drawn as one line of text), with top-level bookmarks
    /// `outline` (title, 1-based page), a page size `mediaBox` in points, and `catalogExtra` added to the
    /// catalogue dictionary; `extraObjects` are appended as objects 5, 6, ….
    public static func make(texts: [String], outline: [(title: String, page: Int)] = [],
                            mediaBox: String = "0 0 595 842", catalogExtra: String = "",
                            extraObjects: [String] = []) -> [UInt8] {
        var objects: [Int: String] = [:]
        let n = texts.count
        let kids = (0..<n).map { "\(10 + 2 * $0) 0 R" }.joined(separator: " ")
        objects[1] = "<< /Type /Catalog /Pages 2 0 R\(outline.isEmpty ? "" : " /Outlines 4 0 R") \(catalogExtra) >>"
        objects[2] = "<< /Type /Pages /Kids [\(kids)] /Count \(n) >>"
        objects[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
        if !outline.isEmpty {
            let items = (0..<outline.count).map { 1000 + $0 }
            objects[4] = "<< /Type /Outlines /First \(items.first!) 0 R /Last \(items.last!) 0 R /Count \(items.count) >>"
            for (k, mark) in outline.enumerated() {
                let title = mark.title.utf16.map { String(format: "%04X", $0) }.joined()
                var item = "<< /Title <FEFF\(title)> /Parent 4 0 R /Dest [\(10 + 2 * (mark.page - 1)) 0 R /Fit]"
                if k > 0 { item += " /Prev \(items[k - 1]) 0 R" }
                if k < items.count - 1 { item += " /Next \(items[k + 1]) 0 R" }
                objects[items[k]] = item + " >>"
            }
        }
        for (k, object) in extraObjects.enumerated() { objects[5 + k] = object }
        for (i, text) in texts.enumerated() {
            let escaped = escape(text)
            let content = "BT /F1 24 Tf 72 700 Td (\(escaped)) Tj ET"
            objects[10 + 2 * i] = "<< /Type /Page /Parent 2 0 R /MediaBox [\(mediaBox)] /Resources << /Font << /F1 3 0 R >> >> "
                + "/Contents \(11 + 2 * i) 0 R >>"
            objects[11 + 2 * i] = "<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream"
        }
        return assemble(objects)
    }

    /// `text` as a PDF literal string's contents in WinAnsi: Latin-1 letters (è, à, ç) as octal escapes.
    public static func escape(_ text: String) -> String {
        text.unicodeScalars.map { scalar -> String in
            switch scalar {
            case "\\", "(", ")": "\\" + String(scalar)
            case _ where scalar.value >= 0x80 && scalar.value <= 0xFF: "\\" + String(scalar.value, radix: 8)
            default: String(scalar)
            }
        }.joined()
    }

    /// Objects into a PDF with a correct cross-reference table and trailer.
    public static func assemble(_ objects: [Int: String]) -> [UInt8] {
        var bytes = Array("%PDF-1.7\n%\u{E2}\u{E3}\u{CF}\u{D3}\n".utf8)
        var offsets: [Int: Int] = [:]
        for key in objects.keys.sorted() {
            offsets[key] = bytes.count
            bytes += Array("\(key) 0 obj\n\(objects[key]!)\nendobj\n".utf8)
        }
        let size = (objects.keys.max() ?? 0) + 1
        let xref = bytes.count
        var table = "xref\n0 \(size)\n0000000000 65535 f \n"
        for key in 1..<size {
            table += offsets[key].map { String(format: "%010d 00000 n \n", $0) } ?? "0000000000 65535 f \n"
        }
        table += "trailer\n<< /Size \(size) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return bytes + Array(table.utf8)
    }

    /// One page whose resources hold an array nested `depth` deep.
    public static func deeplyNested(depth: Int) -> [UInt8] {
        let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var objects: [Int: String] = [:]
        objects[1] = "<< /Type /Catalog /Pages 2 0 R >>"
        objects[2] = "<< /Type /Pages /Kids [10 0 R] /Count 1 >>"
        objects[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
        objects[5] = nested
        let content = "BT /F1 24 Tf 72 700 Td (Nested) Tj ET"
        objects[10] = "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> /Deep 5 0 R >> "
            + "/Contents 11 0 R >>"
        objects[11] = "<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream"
        return assemble(objects)
    }

    /// Two pages, with a document-level JavaScript action run on opening and an embedded file.
    public static func withJavaScriptAndAttachment() -> [UInt8] {
        let attachment = "secret attachment"
        return make(texts: ["Scripted page one", "Scripted page two"],
                    catalogExtra: "/OpenAction 5 0 R /Names << /JavaScript << /Names [(js) 5 0 R] >> "
                        + "/EmbeddedFiles << /Names [(a.txt) 6 0 R] >> >>",
                    extraObjects: ["<< /S /JavaScript /JS (app.alert\\('hello'\\);) >>",
                                   "<< /Type /Filespec /F (a.txt) /EF << /F 7 0 R >> >>",
                                   "<< /Type /EmbeddedFile /Length \(attachment.utf8.count) >>\nstream\n\(attachment)\nendstream"])
    }
}
