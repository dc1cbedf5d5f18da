import Foundation

/// Deterministic pseudo-random bytes (xorshift), so test data is the same on every run.
public struct Noise: Sendable {
    public var state: UInt64
    public init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
    public mutating func next() -> UInt64 {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return state
    }
    /// `count` bytes, none of them 0xFF (so they can sit in a JPEG's entropy-coded data).
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(count)
        while out.count < count {
            var word = next()
            for _ in 0..<8 where out.count < count {
                let byte = UInt8(truncatingIfNeeded: word)
                out.append(byte == 0xFF ? 0x7F : byte)
                word >>= 8
            }
        }
        return out
    }
}

/// The one generator of publish folders for the tests: well-formed page files (JPEG, PDF) and
/// `issue.json`, the same bytes on every run.
public enum IssueFolders {
    /// A structurally valid baseline JPEG of the given size in pixels, with `body` bytes of scan data
    /// (random: incompressible; or `compressible`: a repeated pattern).
    public static func jpeg(width: Int = 1200, height: Int = 1600, body: Int = 20_000, seed: UInt64 = 1,
                            compressible: Bool = false) -> [UInt8] {
        var out: [UInt8] = [0xFF, 0xD8]
        out += [0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]
        out += [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 1, count: 64)
        out += [0xFF, 0xC0, 0x00, 0x11, 0x08, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF),
                0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01]
        out += [0xFF, 0xC4, 0x00, 0x1F, 0x00] + [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0] + Array(0...11)
        out += [0xFF, 0xDA, 0x00, 0x0C, 0x03, 0x01, 0x00, 0x02, 0x11, 0x03, 0x11, 0x00, 0x3F, 0x00]
        if compressible {
            out += [UInt8](repeating: 0x42, count: body)
        } else {
            var noise = Noise(seed: seed)
            out += noise.bytes(body)
        }
        out += [0xFF, 0xD9]
        return out
    }

    /// A PDF with `text` bytes of compressible page content and `binary` bytes of random image data,
    /// ending with a correct `startxref` and `%%EOF`.
    public static func pdf(text: Int = 4_000, binary: Int = 0, seed: UInt64 = 2) -> [UInt8] {
        var out = Array("%PDF-1.4\n%\u{E2}\u{E3}\u{CF}\u{D3}\n".utf8)
        out += Array("1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n".utf8)
        let words = "El Govern aprova el pressupost de la Generalitat per a l'any vinent. "
        var content = ""
        while content.utf8.count < text { content += "BT /F1 12 Tf 50 700 Td (\(words)) Tj ET\n" }
        out += Array("4 0 obj << /Length \(content.utf8.count) >> stream\n\(content)endstream endobj\n".utf8)
        if binary > 0 {
            var noise = Noise(seed: seed)
            out += Array("5 0 obj << /Length \(binary) /Filter /DCTDecode >> stream\n".utf8) + noise.bytes(binary)
                + Array("\nendstream endobj\n".utf8)
        }
        let xref = out.count
        out += Array("xref\n0 1\n0000000000 65535 f \ntrailer << /Size 1 /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n".utf8)
        return out
    }

    /// One page's number, section id, the bytes of its three files and, optionally, its text
    /// (written as `txt/NNN.txt` and named in `issue.json`).
    public struct PageSpec: Sendable {
        public var number: Int
        public var text: String?
        public var section: Int = 1
        public var pdf: [UInt8] = IssueFolders.pdf()
        public var jpg: [UInt8] = IssueFolders.jpeg(width: 300, height: 400, body: 2_000)
        public var jpgA: [UInt8] = IssueFolders.jpeg(body: 20_000)
        public init(number: Int, section: Int = 1, pdf: [UInt8] = IssueFolders.pdf(),
                    jpg: [UInt8] = IssueFolders.jpeg(width: 300, height: 400, body: 2_000),
                    jpgA: [UInt8] = IssueFolders.jpeg(body: 20_000)) {
            self.number = number; self.section = section; self.pdf = pdf; self.jpg = jpg; self.jpgA = jpgA
        }
    }

    /// Pages 1…count, page 1 in section 1 and the others in 2, with incompressible image data.
    public static func pages(_ count: Int, seed: UInt64 = 1) -> [PageSpec] {
        (1...count).map { n in
            PageSpec(number: n, section: n == 1 ? 1 : 2,
                     pdf: pdf(text: 3_000 + n * 10, binary: 10_000, seed: seed &* 100 &+ UInt64(n)),
                     jpg: jpeg(width: 300, height: 400, body: 2_000 + n, seed: seed &* 200 &+ UInt64(n)),
                     jpgA: jpeg(body: 20_000 + n, seed: seed &* 300 &+ UInt64(n)))
        }
    }

    /// Writes a publish folder: files as `pdf/NNN.pdf` etc. and `issue.json` (or `manifest` verbatim).
    /// On a thread of its own: Foundation's writes fsync, and on a busy disk that must not hold one of the
    /// two threads every test's tasks share.
    @discardableResult
    public static func writeFolder(_ folder: String, pages: [PageSpec], manifest: String? = nil,
                                   sections: [(Int, String)] = [(1, "Portada"), (2, "Política")]) async throws -> String {
        try await onOwnThread { try writeFolderNow(folder, pages: pages, manifest: manifest, sections: sections) }
    }

    private static func writeFolderNow(_ folder: String, pages: [PageSpec], manifest: String?, sections: [(Int, String)]) throws -> String {
        let fm = FileManager.default
        for kind in ["pdf", "jpg", "jpgA"] { try fm.createDirectory(atPath: "\(folder)/\(kind)", withIntermediateDirectories: true) }
        var entries: [String] = []
        for page in pages {
            let n = String(format: "%03d", page.number)
            try Data(page.pdf).write(to: URL(fileURLWithPath: "\(folder)/pdf/\(n).pdf"))
            try Data(page.jpg).write(to: URL(fileURLWithPath: "\(folder)/jpg/\(n).jpg"))
            try Data(page.jpgA).write(to: URL(fileURLWithPath: "\(folder)/jpgA/\(n).jpg"))
            var textKey = ""
            if let text = page.text {
                try fm.createDirectory(atPath: "\(folder)/txt", withIntermediateDirectories: true)
                try Data(text.utf8).write(to: URL(fileURLWithPath: "\(folder)/txt/\(n).txt"))
                textKey = ", \"text\": \"txt/\(n).txt\""
            }
            entries.append("""
                {"number": \(page.number), "section": \(page.section), "pdf": "pdf/\(n).pdf", "jpg": "jpg/\(n).jpg", "jpgA": "jpgA/\(n).jpg"\(textKey)}
                """)
        }
        let sectionList = sections.map { "{\"id\": \($0.0), \"name\": \"\($0.1)\"}" }.joined(separator: ", ")
        let text = manifest ?? "{\"sections\": [\(sectionList)], \"pages\": [\n\(entries.joined(separator: ",\n"))\n]}"
        try Data(text.utf8).write(to: URL(fileURLWithPath: "\(folder)/issue.json"))
        return folder
    }
}

extension IssueFolders {
    /// A publish folder of `pages` small pages in one section (1, "Portada"), as the server tests use:
    /// `smallPages`. About 47 KB a page.
    @discardableResult
    public static func writeIssue(_ path: String, pages: Int, seed: UInt8 = 1) async throws -> String {
        try await onOwnThread { try writeFolderNow(path, pages: smallPages(pages, seed: seed), manifest: nil, sections: [(1, "Portada")]) }
    }

    /// Pages 1…count in section 1: as `jpgA` a minimal baseline JPEG (1200×1600) whose scan data is a
    /// pattern of 40 000 + n bytes set by `seed`, as `jpg` its first 2 000 bytes closed again, and a
    /// text-only PDF naming the page.
    public static func smallPages(_ count: Int, seed: UInt8 = 1) -> [PageSpec] {
        (1...count).map { n in
            let body = (0..<(40_000 + n)).map { UInt8(truncatingIfNeeded: ($0 &* 7919 &+ Int(seed)) % 251) }
            let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x06, 0x40, 0x04, 0xB0, 0x03,
                                 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01] + body + [0xFF, 0xD9]
            var pdf = Array("%PDF-1.4\n1 0 obj << >> endobj\n".utf8)
                + Array(repeating: Array("BT (pagina \(n)) Tj ET\n".utf8), count: 200).flatMap { $0 }
            let xref = pdf.count
            pdf += Array("xref\n0 1\n0000000000 65535 f \ntrailer << >>\nstartxref\n\(xref)\n%%EOF\n".utf8)
            return PageSpec(number: n, section: 1, pdf: pdf, jpg: Array(jpeg.prefix(2_000)) + [0xFF, 0xD9], jpgA: jpeg)
        }
    }
}
