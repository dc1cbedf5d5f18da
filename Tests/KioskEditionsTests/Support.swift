import Foundation
@testable import KioskEditions
@testable import KioskFiles
import KioskModels
import KioskStorage

/// A temporary folder removed when released.
final class TemporaryFolder: @unchecked Sendable {
    let path: String

    init(_ label: String = "kiosk-editions") {
        var template = Array("/tmp/\(label)-XXXXXX".utf8CString)
        let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(result != nil, "mkdtemp failed")
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func sub(_ name: String) -> String {
        let full = path + "/" + name
        try? FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
        return full
    }
}

/// Deterministic pseudo-random bytes (xorshift), so test data is the same on every run.
struct Noise {
    var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
    mutating func next() -> UInt64 {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return state
    }
    /// `count` bytes, none of them 0xFF (so they can sit in a JPEG's entropy-coded data).
    mutating func bytes(_ count: Int) -> [UInt8] {
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

enum Fixtures {
    /// A structurally valid baseline JPEG of the given size in pixels, with `body` bytes of scan data
    /// (random: incompressible; or `compressible`: a repeated pattern).
    static func jpeg(width: Int = 1200, height: Int = 1600, body: Int = 20_000, seed: UInt64 = 1,
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
    static func pdf(text: Int = 4_000, binary: Int = 0, seed: UInt64 = 2) -> [UInt8] {
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

    struct PageSpec {
        var number: Int
        var section: Int = 1
        var pdf: [UInt8] = Fixtures.pdf()
        var jpg: [UInt8] = Fixtures.jpeg(width: 300, height: 400, body: 2_000)
        var jpgA: [UInt8] = Fixtures.jpeg(body: 20_000)
    }

    static func pages(_ count: Int, seed: UInt64 = 1) -> [PageSpec] {
        (1...count).map { n in
            PageSpec(number: n, section: n == 1 ? 1 : 2,
                     pdf: pdf(text: 3_000 + n * 10, binary: 10_000, seed: seed &* 100 &+ UInt64(n)),
                     jpg: jpeg(width: 300, height: 400, body: 2_000 + n, seed: seed &* 200 &+ UInt64(n)),
                     jpgA: jpeg(body: 20_000 + n, seed: seed &* 300 &+ UInt64(n)))
        }
    }

    /// Writes a publish folder: files as `pdf/NNN.pdf` etc. and `issue.json` (or `manifest` verbatim).
    @discardableResult
    static func writeFolder(_ folder: String, pages: [PageSpec], manifest: String? = nil,
                            sections: [(Int, String)] = [(1, "Portada"), (2, "Política")]) throws -> String {
        let fm = FileManager.default
        for kind in ["pdf", "jpg", "jpgA"] { try fm.createDirectory(atPath: "\(folder)/\(kind)", withIntermediateDirectories: true) }
        var entries: [String] = []
        for page in pages {
            let n = String(format: "%03d", page.number)
            try Data(page.pdf).write(to: URL(fileURLWithPath: "\(folder)/pdf/\(n).pdf"))
            try Data(page.jpg).write(to: URL(fileURLWithPath: "\(folder)/jpg/\(n).jpg"))
            try Data(page.jpgA).write(to: URL(fileURLWithPath: "\(folder)/jpgA/\(n).jpg"))
            entries.append("""
                {"number": \(page.number), "section": \(page.section), "pdf": "pdf/\(n).pdf", "jpg": "jpg/\(n).jpg", "jpgA": "jpgA/\(n).jpg"}
                """)
        }
        let sectionList = sections.map { "{\"id\": \($0.0), \"name\": \"\($0.1)\"}" }.joined(separator: ", ")
        let text = manifest ?? "{\"sections\": [\(sectionList)], \"pages\": [\n\(entries.joined(separator: ",\n"))\n]}"
        try Data(text.utf8).write(to: URL(fileURLWithPath: "\(folder)/issue.json"))
        return folder
    }
}

/// A store, an editions directory and a publisher on a temporary folder.
struct TestEnvironment {
    let temp: TemporaryFolder
    let store: SQLiteKioskStore
    let directory: EditionsDirectory
    let publisher: IssuePublisher
    static let day = IssueDate("2025-06-30")!

    init(limits: PublishLimits = PublishLimits(), bundleOptions: BundleOptions = BundleOptions(sync: false)) async throws {
        temp = TemporaryFolder()
        store = try SQLiteKioskStore(path: temp.path + "/kiosk.sqlite")
        try await store.syncCatalogue(Catalogue(
            publications: [Publication(id: 1, name: "El Punt Avui")],
            editions: [Edition(id: 1, publicationID: 1, name: "Nacional", createdOn: IssueDate("2010-03-01")!),
                       Edition(id: 2, publicationID: 1, name: "Comarques Gironines", createdOn: IssueDate("2010-03-01")!)],
            apps: [], tariffLines: []), dryRun: false)
        directory = try EditionsDirectory(path: temp.path + "/Editions")
        let store = self.store
        publisher = IssuePublisher(directory: directory, registry: store, limits: limits, bundleOptions: bundleOptions,
                                   publicationName: { try await store.publicationName(id: $0) })
    }

    var offered: OfferedEdition {
        OfferedEdition(line: TariffLine(appKey: "app", editionID: 1, order: 1, access: .free),
                       edition: Edition(id: 1, publicationID: 1, name: "Nacional", createdOn: IssueDate("2010-03-01")!),
                       publicationName: "El Punt Avui")
    }

    /// Every path below the editions directory (files and folders), relative, excluding `.locks`.
    func tree() -> Set<String> {
        var result = Set<String>()
        let root = directory.root
        if let walker = FileManager.default.enumerator(atPath: root) {
            for case let path as String in walker where !path.hasPrefix(".locks") { result.insert(path) }
        }
        return result
    }
}

struct ProcessResult { var status: Int32; var output: String; var error: String }

/// Runs a program and collects its output.
@discardableResult
func run(_ arguments: [String], input: String? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let output = out.fileHandleForReading.readDataToEndOfFile()
    let error = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus, output: String(decoding: output, as: UTF8.self),
                         error: String(decoding: error, as: UTF8.self))
}

/// Python's `zipfile` opens the archive, `testzip()` checks every CRC, and every member but
/// `edicio.xml` must equal the file of the same name under `folder`. Prints `name:method` per member.
let pythonZipCheck = """
import os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
bad = z.testzip()
if bad is not None:
    sys.exit("bad CRC: " + bad)
folder = sys.argv[2]
for info in z.infolist():
    if info.filename != "edicio.xml":
        with open(os.path.join(folder, info.filename), "rb") as f:
            if z.read(info.filename) != f.read():
                sys.exit("differs: " + info.filename)
    print(info.filename + ":" + str(info.compress_type))
"""

/// Entry name -> compression method, as Python reads the archive (after checking it against `folder`).
func pythonCheck(zip: String, against folder: String) throws -> [String: Int] {
    let result = try run(["python3", "-c", pythonZipCheck, zip, folder])
    guard result.status == 0 else { throw CheckFailure("python zipfile: \(result.error)") }
    var methods: [String: Int] = [:]
    for line in result.output.split(separator: "\n") {
        let parts = line.split(separator: ":")
        methods[String(parts[0])] = Int(parts[1])
    }
    return methods
}

struct CheckFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func readFile(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }
