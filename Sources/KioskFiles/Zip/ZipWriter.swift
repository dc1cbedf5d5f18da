#if canImport(Glibc)
import Glibc
#endif
import CLibZ
import NIOCore

/// One file to put in a ZIP archive.
public struct ZipEntry: Sendable, Hashable {
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

/// How a ZIP archive is written.
public struct ZipOptions: Sendable, Hashable {
    /// Deflate level (zlib's scale) for entries that are deflated.
    public var compressionLevel: Int32 = 1
    /// An entry is deflated only when that saves at least this fraction of its size (1: store everything).
    public var minimumSaving: Double = 0.05
    /// For entries streamed (over `bufferLimit`): their first block is deflated to decide whether the entry
    /// pays. Entries read whole are decided on their whole deflated size.
    public var probeBytes = 64 << 10
    /// Files up to this size are read once into memory, so their local headers carry the real CRC and
    /// sizes; larger ones are streamed with a data descriptor after their data.
    public var bufferLimit = 4 << 20
    /// Write ZIP64 extra fields and end records even when nothing needs them (to test readers).
    public var forceZIP64 = false
    /// Entries read and compressed at once ahead of the writer; nil: one per processor (at most 8).
    public var workers: Int?

    public init(compressionLevel: Int32 = 1, minimumSaving: Double = 0.05, probeBytes: Int = 64 << 10,
                bufferLimit: Int = 4 << 20, forceZIP64: Bool = false, workers: Int? = nil) {
        self.compressionLevel = compressionLevel; self.minimumSaving = minimumSaving; self.probeBytes = probeBytes
        self.bufferLimit = bufferLimit; self.forceZIP64 = forceZIP64; self.workers = workers
    }

    /// Whether deflating `original` bytes into `compressed` saves enough.
    public func pays(_ original: Int, _ compressed: Int) -> Bool {
        Double(compressed) <= Double(original) * (1 - minimumSaving)
    }

    /// The largest compressed size of `original` bytes that still `pays`, within `0...limit` (a negative,
    /// infinite or NaN `minimumSaving` gives `limit` or 0, never an overflow).
    public func payingCapacity(_ original: Int, limit: Int) -> Int {
        let allowed = (Double(original) * (1 - minimumSaving)).rounded(.down)
        guard allowed >= 0 else { return 0 }      // also NaN
        return allowed >= Double(limit) ? limit : Int(allowed)
    }
}

/// A ZIP archive as written.
public struct WrittenZip: Sendable, Hashable {
    public var size: Int64
    /// Lowercase hex SHA-256 of the whole file, computed while writing.
    public var sha256: String
    public var storedEntries: Int
    public var deflatedEntries: Int

    public init(size: Int64, sha256: String, storedEntries: Int, deflatedEntries: Int) {
        self.size = size; self.sha256 = sha256; self.storedEntries = storedEntries; self.deflatedEntries = deflatedEntries
    }
}

/// Writes a ZIP archive sequentially into an open file: local headers and bodies in order, then the
/// central directory. Entries that pay are deflated (raw deflate), the others stored.
///
/// Entries up to `bufferLimit` are read, checksummed and compressed whole with libdeflate by jobs on the
/// executor, a few entries ahead of the writer (`add(_:executor:)`), so their local headers carry real
/// sizes. Larger ones are streamed through zlib with a data descriptor, decided on their first
/// `probeBytes`. Every entry carries the same DOS date (midnight of `date`), so the same input always
/// gives the same bytes.
///
/// Owned by one task: its methods run one at a time, each as one job on the executor.
package final class ZipWriter: @unchecked Sendable {
    private let output: ArchiveOutput
    private let options: ZipOptions
    private let dos: (date: UInt16, time: UInt16)
    /// For the in-memory entry (`addMemory`).
    private let memorySlot: ZipEntrySlot
    /// For streamed entries: chunks read, and deflated output.
    private lazy var chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
    private lazy var scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
    private var streamedUsed = false
    private var records: [CentralRecord] = []
    private var stored = 0
    private var deflated = 0
    private var readAhead = ReadAhead()

    package init(file: OpenFile, options: ZipOptions, date: (year: Int, month: Int, day: Int)) throws {
        self.output = ArchiveOutput(file: file)
        self.options = options
        self.dos = ZipFormat.dosDateTime(year: date.year, month: date.month, day: date.day)
        var small = options
        small.bufferLimit = 64 << 10
        memorySlot = try ZipEntrySlot(options: small)
    }

    deinit {
        if streamedUsed {
            chunk.deallocate()
            scratch.deallocate()
        }
    }

    /// Adds an entry from memory (at most 64 KiB). Blocking.
    package func addMemory(name: String, _ bytes: [UInt8]) throws {
        guard bytes.count <= memorySlot.input.count else { throw ZipError.tooLarge(name) }
        bytes.withUnsafeBytes { memorySlot.input.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        memorySlot.size = bytes.count
        memorySlot.entry = ZipEntry(name: name, source: "", alwaysStore: false)
        memorySlot.load(alwaysStore: false)
        try addPrepared(memorySlot)
    }

    /// Adds `entries` in order. Up to two per worker are read and compressed ahead of the writer, each
    /// in a slot of its own, as jobs on `executor`; the writer takes the slots in order (also as a job),
    /// and a slot is reused for the entry `window` places later once it has been written.
    package func add(_ entries: [ZipEntry], executor: BlockingExecutor) async throws {
        guard !entries.isEmpty else { return }
        let workers = max(1, min(options.workers ?? System.coreCount, 8, entries.count))
        let window = min(2 * workers, entries.count)
        let slots = try (0..<window).map { _ in try ZipEntrySlot(options: options) }
        var preparing: [Task<Void, Never>] = []
        func prepare(_ index: Int) -> Task<Void, Never> {
            let slot = slots[index % window]
            slot.entry = entries[index]
            return Task {
                do { try await executor.run { slot.prepare() } } catch { slot.failure = error }
            }
        }
        preparing = (0..<window).map(prepare)
        do {
            for index in entries.indices {
                let position = index % window
                await preparing[position].value
                let slot = slots[position]
                try await executor.run { [self] in
                    readAhead.hint(entries, writing: index)
                    defer { slot.source = nil }
                    if let error = slot.failure { throw error }
                    if slot.streamed { try addStreamed(slot.entry!, source: slot.source!) } else { try addPrepared(slot) }
                }
                if index + window < entries.count { preparing[position] = prepare(index + window) }
            }
        } catch {
            for task in preparing { await task.value }   // no job keeps using a slot after this returns
            throw error
        }
    }

    /// An entry read whole: CRC and sizes are known before its header is written.
    private func addPrepared(_ slot: ZipEntrySlot) throws {
        let name = Array(slot.entry!.name.utf8)
        let body = slot.body
        let method: UInt16 = slot.packedCount == nil ? 0 : 8
        let record = CentralRecord(name: name, method: method, flags: 0, crc: slot.crc,
                                   compressedSize: UInt64(body.count), size: UInt64(slot.size),
                                   localHeaderOffset: output.offset)
        try output.append(ZipFormat.localHeader(name: name, flags: 0, method: method, dos: dos, crc: slot.crc,
                                                compressedSize: record.compressedSize, size: record.size,
                                                zip64: options.forceZIP64))
        try output.append(body)
        records.append(record)
        if method == 8 { deflated += 1 } else { stored += 1 }
    }

    /// A large entry streamed in chunks: header with a data-descriptor flag, data, then the descriptor.
    private func addStreamed(_ entry: ZipEntry, source: OpenFile) throws {
        streamedUsed = true
        let size = UInt64(try source.status().st_size)
        let name = Array(entry.name.utf8)
        let deflater = try Deflater(level: options.compressionLevel)
        var method: UInt16 = 0
        if !entry.alwaysStore && options.minimumSaving < 1 {
            let probe = min(Int(size), options.probeBytes, chunk.count)
            let read = try source.read(into: chunk.baseAddress!, count: probe, at: 0)
            guard read == probe else { throw ZipError.changed(entry.source) }
            let bound = deflater.bound(probe)
            let probeOutput = UnsafeMutableRawBufferPointer.allocate(byteCount: bound, alignment: 16)
            defer { probeOutput.deallocate() }
            let probeSize = try deflater.compressAll(chunk.baseAddress!, count: probe, into: probeOutput.baseAddress!, capacity: bound)
            if options.pays(probe, probeSize) { method = 8 }
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
            let want = Int(min(UInt64(chunk.count), size - done))
            let read = try source.read(into: chunk.baseAddress!, count: want, at: Int64(done))
            guard read == want else { throw ZipError.changed(entry.source) }
            crc = crc32(crc, chunk.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(read))
            done += UInt64(read)
            let piece = UnsafeRawBufferPointer(rebasing: chunk[0..<read])
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

    /// Writes the central directory and end records; returns the archive's size and hash. Blocking.
    package func finish() throws -> WrittenZip {
        let directoryOffset = output.offset
        for record in records {
            try output.append(ZipFormat.centralHeader(record, dos: dos, forceZIP64: options.forceZIP64))
        }
        let directorySize = output.offset - directoryOffset
        try output.append(ZipFormat.end(entries: records.count, directoryOffset: directoryOffset,
                                        directorySize: directorySize, forceZIP64: options.forceZIP64))
        let size = Int64(output.offset)
        let sha = try output.finish()
        return WrittenZip(size: size, sha256: sha, storedEntries: stored, deflatedEntries: deflated)
    }

    /// Read-ahead hints for the files ahead of the writer, up to `limit` bytes: on a cold cache the disk
    /// reads them while the processors deflate, instead of after.
    private struct ReadAhead {
        static let limit: Int64 = 64 << 20
        var hinted = 0
        var hintedBytes: Int64 = 0
        var writtenBytes: Int64 = 0
        var sizes: [Int64] = []

        /// Called before entry `index` is written.
        mutating func hint(_ entries: [ZipEntry], writing index: Int) {
            if sizes.isEmpty { sizes = [Int64](repeating: 0, count: entries.count) }
            if index > 0 { writtenBytes += sizes[index - 1] }
            while hinted < entries.count, hintedBytes - writtenBytes < Self.limit {
                if let file = try? FS.open(entries[hinted].source, O_RDONLY | O_NOFOLLOW) {
                    sizes[hinted] = Int64((try? file.status().st_size) ?? 0)
                    file.willNeed()
                }
                hintedBytes += sizes[hinted]
                hinted += 1
            }
        }
    }
}

/// The buffers and results of one entry read whole, checksummed and (maybe) compressed.
///
/// Handed over explicitly: a job on the executor fills it (`prepare()`), then, after that job is awaited,
/// the writer reads it. Never touched by two threads at once.
final class ZipEntrySlot: @unchecked Sendable {
    let input: UnsafeMutableRawBufferPointer
    let packed: UnsafeMutableRawBufferPointer
    let options: ZipOptions
    let deflater: WholeDeflater
    var entry: ZipEntry?
    var source: OpenFile?
    // Results.
    var size = 0
    var crc: UInt32 = 0
    var packedCount: Int?
    /// Too large for memory: the writer streams it.
    var streamed = false
    var failure: (any Error)?

    init(options: ZipOptions) throws {
        self.options = options
        deflater = try WholeDeflater(level: options.compressionLevel)
        let limit = max(options.bufferLimit, 64 << 10)
        input = .allocate(byteCount: limit, alignment: 16)
        packed = .allocate(byteCount: WholeDeflater.bound(limit), alignment: 16)
    }

    deinit {
        input.deallocate()
        packed.deallocate()
    }

    var body: UnsafeRawBufferPointer {
        packedCount.map { UnsafeRawBufferPointer(rebasing: packed[0..<$0]) } ?? UnsafeRawBufferPointer(rebasing: input[0..<size])
    }

    /// Reads the entry's file and decides how to store it. Errors are kept for the writer. Blocking.
    func prepare() {
        failure = nil
        streamed = false
        packedCount = nil
        source = nil
        guard let entry else { return }
        do {
            let file = try FS.open(entry.source, O_RDONLY | O_NOFOLLOW)
            source = file
            let length = Int64(try file.status().st_size)
            guard length <= Int64(input.count) else { streamed = true; return }
            size = Int(length)
            guard try file.read(into: input.baseAddress!, count: size, at: 0) == size else { throw ZipError.changed(entry.source) }
            load(alwaysStore: entry.alwaysStore)
        } catch {
            failure = error
        }
    }

    /// Checksums and compresses the first `size` bytes of `input`: deflated into at most the size
    /// that pays, or stored when the result would be larger.
    func load(alwaysStore: Bool) {
        crc = WholeDeflater.crc32(input.baseAddress!, count: size)
        packedCount = nil
        guard !alwaysStore, size > 0, options.minimumSaving < 1 else { return }
        let capacity = options.payingCapacity(size, limit: packed.count)
        guard capacity > 0 else { return }
        packedCount = deflater.compress(input.baseAddress!, count: size, into: packed.baseAddress!, capacity: capacity)
    }
}
