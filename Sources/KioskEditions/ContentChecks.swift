import KioskFiles
import KioskIntegers

/// Limits a publish must respect. Defaults suit a daily newspaper with large page scans.
public struct PublishLimits: Sendable, Hashable {
    /// Largest single file.
    public var maxFileBytes: Int64
    /// Largest issue: all page files together.
    public var maxIssueBytes: Int64
    /// Most pages in one issue.
    public var maxPages: Int
    /// Largest side of a page image, in pixels.
    public var maxImageSide: Int

    public init(maxFileBytes: Int64 = 200 << 20, maxIssueBytes: Int64 = 4 << 30, maxPages: Int = 1000,
                maxImageSide: Int = 30_000) {
        self.maxFileBytes = maxFileBytes; self.maxIssueBytes = maxIssueBytes
        self.maxPages = maxPages; self.maxImageSide = maxImageSide
    }
}

/// Checks page files by their content, never their name: a PDF must look like a complete PDF, a JPEG
/// like a complete JPEG with sane dimensions. Reads only the head, the tail and the JPEG segment headers.
public enum ContentCheck {
    /// What a file turned out to be.
    public enum Kind: Sendable, Equatable { case pdf, jpeg(width: Int, height: Int) }

    /// Checks a PDF: `%PDF-` at the start, then in the last 1 KiB a `startxref` followed by a byte
    /// offset inside the file and an `%%EOF` marker at the end (allowing trailing whitespace). A truncated
    /// upload fails here. Returns nil when fine, or the problem.
    public static func checkPDF(_ file: OpenFile, size: Int64) throws -> String? {
        guard size >= 32 else { return "is not a PDF: only \(size) bytes" }
        let tailLength = Int(widening: min(size, 1024))
        return checkPDF(head: try file.bytes(at: 0, count: 8), tail: try file.bytes(at: size - Int64(widening: tailLength), count: tailLength),
                        size: size)
    }

    /// `checkPDF` on the file's first bytes (up to 8), its last bytes (up to 1 KiB) and its size.
    static func checkPDF(head: [UInt8], tail: [UInt8], size: Int64) -> String? {
        guard size >= 32 else { return "is not a PDF: only \(size) bytes" }
        guard head.starts(with: Array("%PDF-".utf8)) else {
            return "is not a PDF: it does not start with %PDF- (starts with \(describe(head)))"
        }
        var tail = tail
        while let last = tail.last, last == 0x20 || last == 0x0A || last == 0x0D || last == 0x09 || last == 0 {
            tail.removeLast()
        }
        guard tail.count >= 5, Array(tail.suffix(5)) == Array("%%EOF".utf8) else {
            return "is a truncated or damaged PDF: it does not end with %%EOF"
        }
        guard let xref = lastRange(of: Array("startxref".utf8), in: tail) else {
            return "is a damaged PDF: no startxref before the final %%EOF"
        }
        var index = xref.upperBound
        while index < tail.count, tail[index] == 0x20 || tail[index] == 0x0A || tail[index] == 0x0D { index += 1 }
        var offset: Int64 = 0
        var digits = 0
        var overflow = false
        while index < tail.count, (0x30...0x39).contains(tail[index]) {
            let (shifted, o1) = offset.multipliedReportingOverflow(by: 10)
            let (sum, o2) = shifted.addingReportingOverflow(Int64(widening: tail[index] - 0x30))
            overflow = overflow || o1 || o2
            offset = sum
            index += 1
            digits += 1
        }
        guard digits > 0, !overflow, offset < size else {
            return "is a damaged PDF: startxref does not give an offset inside the file"
        }
        return nil
    }

    /// Checks a JPEG: SOI (`FF D8`) at the start, a walk over the marker segments up to start of scan
    /// finding a frame header (SOF) whose width and height are 1...`maxSide`, and EOI (`FF D9`) at the end
    /// (allowing zero padding). Returns the dimensions, or the problem.
    public static func checkJPEG(_ file: OpenFile, size: Int64, maxSide: Int) throws -> Result<(width: Int, height: Int), JPEGProblem> {
        guard size >= 128 else { return .failure(.init("is not a JPEG: only \(size) bytes")) }
        let head = try file.bytes(at: 0, count: 3)
        guard head == [0xFF, 0xD8, 0xFF] else {
            return .failure(.init("is not a JPEG: it does not start with the FF D8 marker (starts with \(describe(head)))"))
        }
        let tailLength = Int(widening: min(size, 4096))
        var tail = try file.bytes(at: size - Int64(widening: tailLength), count: tailLength)
        while tail.last == 0 { tail.removeLast() }
        guard tail.count >= 2, tail[tail.count - 2] == 0xFF, tail[tail.count - 1] == 0xD9 else {
            return .failure(.init("is a truncated JPEG: it does not end with the FF D9 marker"))
        }
        // Walk the segments: FF xx, then a 2-byte big-endian length (including itself).
        var offset: Int64 = 2
        var segments = 0
        while offset + 4 <= size, segments < 4096 {
            segments += 1
            var marker = try file.bytes(at: offset, count: 4)
            guard marker.count == 4, marker[0] == 0xFF else {
                return .failure(.init("is a damaged JPEG: no marker at byte \(offset)"))
            }
            if marker[1] == 0xFF { offset += 1; continue }     // fill byte
            let type = marker[1]
            if type == 0xD8 || type == 0x01 || (0xD0...0xD7).contains(type) { offset += 2; continue }
            if type == 0xDA || type == 0xD9 {
                return .failure(.init("is a damaged JPEG: image data starts before any frame header (SOF)"))
            }
            let length = Int64(widening: marker[2]) << 8 | Int64(widening: marker[3])
            guard length >= 2, offset + 2 + length <= size else {
                return .failure(.init("is a damaged JPEG: a segment at byte \(offset) runs past the end"))
            }
            let isFrame = (0xC0...0xCF).contains(type) && type != 0xC4 && type != 0xC8 && type != 0xCC
            if isFrame {
                marker = try file.bytes(at: offset + 4, count: 6)
                guard length >= 8, marker.count == 6 else {
                    return .failure(.init("is a damaged JPEG: frame header too short"))
                }
                let height = Int(widening: marker[1]) << 8 | Int(widening: marker[2])
                let width = Int(widening: marker[3]) << 8 | Int(widening: marker[4])
                let components = Int(widening: marker[5])
                guard width >= 1, width <= maxSide, height >= 1, height <= maxSide else {
                    return .failure(.init("has impossible dimensions \(width)x\(height) (at most \(maxSide) pixels a side)"))
                }
                guard [1, 3, 4].contains(components) else {
                    return .failure(.init("is a damaged JPEG: \(components) colour components"))
                }
                return .success((width, height))
            }
            offset += 2 + length
        }
        return .failure(.init("is a damaged JPEG: no frame header (SOF) found"))
    }

    /// A JPEG check's finding.
    public struct JPEGProblem: Error, Sendable, Equatable {
        public let message: String
        init(_ message: String) { self.message = message }
    }

    static func lastRange(of needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
        guard haystack.count >= needle.count else { return nil }
        var start = haystack.count - needle.count
        while start >= 0 {
            if haystack[start..<start + needle.count].elementsEqual(needle) { return start..<start + needle.count }
            start -= 1
        }
        return nil
    }

    /// The first bytes, printable, for messages.
    static func describe(_ bytes: [UInt8]) -> String {
        bytes.prefix(8).map { $0 >= 0x20 && $0 < 0x7F ? String(UnicodeScalar($0)) : "\\x" + String($0, radix: 16) }.joined()
            .debugDescription
    }
}
