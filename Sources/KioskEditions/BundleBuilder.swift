#if canImport(Glibc)
import Glibc
#endif
import CZlib
import KioskModels

/// One file to put in a bundle.
public struct BundleEntry: Sendable, Hashable {
    /// Path inside the archive, e.g. `pdf/001.pdf`.
    public var name: String
    /// Absolute path of the source file.
    public var source: String
    /// Store without trying to compress (JPEG never pays).
    public var alwaysStore: Bool

    public init(name: String, source: String, alwaysStore: Bool) {
        self.name = name; self.source = source; self.alwaysStore = alwaysStore
    }
}

/// How bundles are written.
public struct BundleOptions: Sendable, Hashable {
    /// zlib level for entries that are deflated.
    public var compressionLevel: Int32 = 6
    /// An entry is deflated only when that saves at least this fraction of its size.
    public var minimumSaving: Double = 0.05
    /// The first block of each entry is deflated to decide whether the entry pays.
    public var probeBytes = 64 << 10
    /// Files up to this size are read once into memory, so their local headers carry the real CRC and
    /// sizes; larger ones are streamed with a data descriptor after their data.
    public var bufferLimit = 4 << 20
    /// Write ZIP64 extra fields and end records even when nothing needs them (to test readers).
    public var forceZIP64 = false
    /// fsync the bundle before it is renamed into place (and the folder after).
    public var sync = true

    public init(compressionLevel: Int32 = 6, minimumSaving: Double = 0.05, probeBytes: Int = 64 << 10,
                bufferLimit: Int = 4 << 20, forceZIP64: Bool = false, sync: Bool = true) {
        self.compressionLevel = compressionLevel; self.minimumSaving = minimumSaving; self.probeBytes = probeBytes
        self.bufferLimit = bufferLimit; self.forceZIP64 = forceZIP64; self.sync = sync
    }
}

/// A bundle written to disk.
public struct BuiltBundle: Sendable, Hashable {
    public var size: Int64
    /// Lowercase hex SHA-256 of the whole file, computed while writing.
    public var sha256: String
    public var storedEntries: Int
    public var deflatedEntries: Int
}

/// Writes an issue's ZIP bundle with zlib directly: `edicio.xml` first, then the entries in order.
///
/// JPEGs are stored. Other entries are deflated (raw deflate, `crc32` from zlib) only when deflating
/// their first block saves at least `minimumSaving`, and the whole entry confirms it. The archive is
/// written sequentially to a temporary file beside `path` (hashed on the way), fsynced, and renamed
/// over `path`: a reader sees the old file, the complete new one, or none, never a partial one.
/// Entry times are the issue's date, so the same issue always gives the same bytes.
public enum BundleBuilder {
    /// Builds the bundle at `path`. Blocking: call through `Blocking.run` from async code.
    public static func build(manifest: [UInt8], entries: [BundleEntry], date: IssueDate, to path: String,
                             options: BundleOptions = BundleOptions()) throws -> BuiltBundle {
        let folder = FS.parentPath(path)
        let name = String(path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...])
        let temporary = "\(folder)/.\(name).tmp-\(getpid())-\(FS.randomSuffix())"
        let file = try FS.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o644)
        do {
            let writer = try Writer(output: ArchiveOutput(file: file), options: options, date: date)
            try writer.addMemory(name: "edicio.xml", manifest)
            var ahead: [OpenFile?] = []
            let window = 8
            func open(_ index: Int) -> OpenFile? {
                guard index < entries.count else { return nil }
                let source = try? FS.open(entries[index].source, O_RDONLY | O_NOFOLLOW)
                source?.willNeed()     // start reading it now: cold caches read several files at once
                return source
            }
            for index in 0..<min(window, entries.count) { ahead.append(open(index)) }
            for (index, entry) in entries.enumerated() {
                let source = try ahead[index % window] ?? FS.open(entry.source, O_RDONLY | O_NOFOLLOW)
                ahead[index % window] = open(index + window)
                try writer.addFile(entry, source: source)
            }
            let result = try writer.finish()
            if options.sync { try file.sync() }
            try FS.rename(temporary, path)
            if options.sync { try FS.syncDirectory(folder) }
            return result
        } catch {
            FS.unlink(temporary)
            throw error
        }
    }

    /// The sequential writer: one deflate stream and three buffers reused for every entry.
    final class Writer {
        let output: ArchiveOutput
        let options: BundleOptions
        let dos: (date: UInt16, time: UInt16)
        let deflater: Deflater
        /// Whole entries up to `bufferLimit`, or streamed chunks.
        let input: UnsafeMutableRawBufferPointer
        /// Deflated whole entries.
        let packed: UnsafeMutableRawBufferPointer
        /// Deflated probes and streamed output chunks.
        let scratch: UnsafeMutableRawBufferPointer
        var records: [CentralRecord] = []
        var stored = 0
        var deflated = 0

        init(output: ArchiveOutput, options: BundleOptions, date: IssueDate) throws {
            self.output = output
            self.options = options
            self.dos = ZipFormat.dosDateTime(year: date.year, month: date.month, day: date.day)
            deflater = try Deflater(level: options.compressionLevel)
            let bufferLimit = max(options.bufferLimit, options.probeBytes, 64 << 10)
            input = .allocate(byteCount: bufferLimit, alignment: 16)
            packed = .allocate(byteCount: deflater.bound(bufferLimit), alignment: 16)
            scratch = .allocate(byteCount: max(deflater.bound(options.probeBytes), 256 << 10), alignment: 16)
        }

        deinit {
            input.deallocate()
            packed.deallocate()
            scratch.deallocate()
        }

        private func pays(original: Int, compressed: Int) -> Bool {
            Double(compressed) <= Double(original) * (1 - options.minimumSaving)
        }

        /// Adds an entry from memory (`edicio.xml`).
        func addMemory(name: String, _ bytes: [UInt8]) throws {
            try bytes.withUnsafeBytes { raw in
                try addBuffered(name: Array(name.utf8), data: raw, alwaysStore: false)
            }
        }

        func addFile(_ entry: BundleEntry, source: OpenFile) throws {
            let size = Int64(try source.status().st_size)
            if size <= input.count {
                let count = Int(size)
                let read = try source.read(into: input.baseAddress!, count: count, at: 0)
                guard read == count else { throw ZipError.changed(entry.source) }
                try addBuffered(name: Array(entry.name.utf8),
                                data: UnsafeRawBufferPointer(rebasing: input[0..<count]), alwaysStore: entry.alwaysStore)
            } else {
                try addStreamed(entry, source: source, size: UInt64(size))
            }
        }

        /// An entry read whole: CRC and sizes are known before its header is written.
        private func addBuffered(name: [UInt8], data: UnsafeRawBufferPointer, alwaysStore: Bool) throws {
            let count = data.count
            let crc = UInt32(crc32(0, data.baseAddress?.assumingMemoryBound(to: Bytef.self), uInt(count)))
            var body = data
            var method: UInt16 = 0
            if !alwaysStore && count > 0 {
                let probe = min(count, options.probeBytes)
                let probeSize = try deflater.compressAll(data.baseAddress!, count: probe, into: scratch.baseAddress!,
                                                         capacity: scratch.count)
                if pays(original: probe, compressed: probeSize) {
                    if probe == count {
                        body = UnsafeRawBufferPointer(rebasing: scratch[0..<probeSize])
                        method = 8
                    } else {
                        let packedSize = try deflater.compressAll(data.baseAddress!, count: count,
                                                                  into: packed.baseAddress!, capacity: packed.count)
                        if pays(original: count, compressed: packedSize) {
                            body = UnsafeRawBufferPointer(rebasing: packed[0..<packedSize])
                            method = 8
                        }
                    }
                }
            }
            let record = CentralRecord(name: name, method: method, flags: 0, crc: crc,
                                       compressedSize: UInt64(body.count), size: UInt64(count),
                                       localHeaderOffset: output.offset)
            try output.append(ZipFormat.localHeader(name: name, flags: 0, method: method, dos: dos, crc: crc,
                                                    compressedSize: record.compressedSize, size: record.size,
                                                    zip64: options.forceZIP64))
            try output.append(body)
            records.append(record)
            if method == 8 { deflated += 1 } else { stored += 1 }
        }

        /// A large entry streamed in chunks: header with a data-descriptor flag, data, then the descriptor.
        private func addStreamed(_ entry: BundleEntry, source: OpenFile, size: UInt64) throws {
            let name = Array(entry.name.utf8)
            let chunk = input.count
            var method: UInt16 = 0
            if !entry.alwaysStore {
                let probe = min(Int(size), options.probeBytes)
                let read = try source.read(into: input.baseAddress!, count: probe, at: 0)
                guard read == probe else { throw ZipError.changed(entry.source) }
                let probeSize = try deflater.compressAll(input.baseAddress!, count: probe, into: scratch.baseAddress!,
                                                         capacity: scratch.count)
                if pays(original: probe, compressed: probeSize) { method = 8 }
            }
            let zip64 = options.forceZIP64 || size > 0xFF00_0000
            let flags = ZipFormat.flagDataDescriptor
            let offset = output.offset
            try output.append(ZipFormat.localHeader(name: name, flags: flags, method: method, dos: dos, crc: 0,
                                                    compressedSize: 0, size: 0, zip64: zip64))
            let start = output.offset
            var crc: uLong = 0
            var done: UInt64 = 0
            if method == 8 { deflater.reset() }
            while done < size {
                let want = Int(min(UInt64(chunk), size - done))
                let read = try source.read(into: input.baseAddress!, count: want, at: Int64(done))
                guard read == want else { throw ZipError.changed(entry.source) }
                crc = crc32(crc, input.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(read))
                done += UInt64(read)
                let piece = UnsafeRawBufferPointer(rebasing: input[0..<read])
                if method == 8 {
                    try deflater.compress(piece.baseAddress!, count: read, finish: done == size, scratch: scratch) {
                        try output.append($0)
                    }
                } else {
                    try output.append(piece)
                }
            }
            let compressed = output.offset - start
            guard zip64 || compressed < ZipFormat.max32 else { throw ZipError.tooLarge(entry.name) }
            try output.append(ZipFormat.dataDescriptor(crc: UInt32(crc), compressedSize: compressed, size: size, zip64: zip64))
            records.append(CentralRecord(name: name, method: method, flags: flags, crc: UInt32(crc),
                                         compressedSize: compressed, size: size, localHeaderOffset: offset))
            if method == 8 { deflated += 1 } else { stored += 1 }
        }

        /// Writes the central directory and end records; returns the archive's size and hash.
        func finish() throws -> BuiltBundle {
            let directoryOffset = output.offset
            for record in records {
                try output.append(ZipFormat.centralHeader(record, dos: dos, forceZIP64: options.forceZIP64))
            }
            let directorySize = output.offset - directoryOffset
            try output.append(ZipFormat.end(entries: records.count, directoryOffset: directoryOffset,
                                            directorySize: directorySize, forceZIP64: options.forceZIP64))
            let size = Int64(output.offset)
            let sha = try output.finish()
            return BuiltBundle(size: size, sha256: sha, storedEntries: stored, deflatedEntries: deflated)
        }
    }
}

/// The bundle's `edicio.xml`: the issue, its sections and its pages with the names of their files
/// inside the bundle.
///
/// ```xml
/// <?xml version="1.0" encoding="UTF-8"?>
/// <edicio id="1" titol="El Punt Avui" edicio="Nacional" data="2025-06-30" revisio="2" pagines="48">
///   <seccio id="1" nom="Portada"/>
///   <pagina numero="1" seccio_id="1" seccio="Portada" pdf="pdf/001.pdf" jpg="jpg/001.jpg" jpgA="jpgA/001.jpg"/>
/// </edicio>
/// ```
public enum BundleManifest {
    /// The issue as the bundle describes it.
    public struct Header: Sendable, Hashable {
        public var editionID: Int
        public var publicationName: String
        public var editionName: String
        public var date: IssueDate
        public var revision: Int
        public init(editionID: Int, publicationName: String, editionName: String, date: IssueDate, revision: Int) {
            self.editionID = editionID; self.publicationName = publicationName; self.editionName = editionName
            self.date = date; self.revision = revision
        }
    }

    /// A page: its number and section (file names follow from the number).
    public struct Page: Sendable, Hashable {
        public var number: Int
        public var section: Section
        public init(number: Int, section: Section) { self.number = number; self.section = section }
    }

    public static func xml(header: Header, pages: [Page]) -> [UInt8] {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<edicio id=\"\(header.editionID)\" titol=\(quote(header.publicationName)) edicio=\(quote(header.editionName))"
        out += " data=\"\(header.date)\" revisio=\"\(header.revision)\" pagines=\"\(pages.count)\">\n"
        var seen = Set<Int>()
        for page in pages where seen.insert(page.section.id).inserted {
            out += "  <seccio id=\"\(page.section.id)\" nom=\(quote(page.section.name))/>\n"
        }
        for page in pages {
            out += "  <pagina numero=\"\(page.number)\" seccio_id=\"\(page.section.id)\" seccio=\(quote(page.section.name))"
            out += " pdf=\"\(PageFileKind.pdf.name(page: page.number))\" jpg=\"\(PageFileKind.jpg.name(page: page.number))\""
            out += " jpgA=\"\(PageFileKind.jpgA.name(page: page.number))\"/>\n"
        }
        out += "</edicio>\n"
        return Array(out.utf8)
    }

    /// The entries of a bundle for pages whose files live under `folder` (absolute) in the published layout.
    public static func entries(pages: [Page], folder: String) -> [BundleEntry] {
        PageFileKind.allCases.flatMap { kind in
            pages.map { page in
                let name = kind.name(page: page.number)
                return BundleEntry(name: name, source: "\(folder)/\(name)", alwaysStore: kind != .pdf)
            }
        }
    }

    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            case "\t": out += "&#9;"
            default:
                // Characters XML 1.0 does not allow are dropped.
                if scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value) { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
