#if canImport(Glibc)
import KioskIntegers
import CSystemCalls
import Glibc
#endif
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
        return allowed >= Double(limit) ? limit : Int(exactly: allowed) ?? 0     // whole, in 0..<limit
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
    private static let chunkSize = 1 << 20
    private lazy var chunk = UnsafeMutableRawPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
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
        guard bytes.count <= memorySlot.inputCapacity else { throw ZipError.tooLarge(name) }
        UnsafeMutableRawBufferPointer(start: memorySlot.input, count: bytes.count).copyBytes(from: bytes)
        memorySlot.size = bytes.count
        memorySlot.load(alwaysStore: false)
        try addPrepared(memorySlot, name: name)
    }

    /// Adds `entries` in order. Up to two per worker are read and compressed ahead of the writer, each
    /// in a slot of its own, as jobs on `executor`; the writer takes the slots in order (also as a job),
    /// and a slot is reused for the entry `window` places later once it has been written.
    package func add(_ entries: [ZipEntry], executor: BlockingExecutor) async throws {
        guard !entries.isEmpty else { return }
        let workers = max(1, min(options.workers ?? System.coreCount, 8, entries.count))
        let window = min(2 * workers, entries.count)
        let slots = try (0..<window).map { _ in try ZipEntrySlot(options: options) }
        var preparing: [Task<ZipEntrySlot.Prepared, Never>] = []
        func prepare(_ index: Int) -> Task<ZipEntrySlot.Prepared, Never> {
            let slot = slots[index % window]
            let entry = entries[index]
            return Task {
                do { return try await executor.run { slot.prepare(entry) } } catch { return .failed(error) }
            }
        }
        preparing = (0..<window).map(prepare)
        do {
            for index in entries.indices {
                let position = index % window
                let prepared = await preparing[position].value
                let slot = slots[position]
                try await executor.run { [self] in
                    readAhead.hint(entries, writing: index)
                    switch prepared {
                    case .whole(let entry): try addPrepared(slot, name: entry.name)
                    case .streamed(let entry, let source): try addStreamed(entry, source: source)
                    case .failed(let error): throw error
                    }
                }
                if index + window < entries.count { preparing[position] = prepare(index + window) }
            }
        } catch {
            for task in preparing { _ = await task.value }   // no job keeps using a slot after this returns
            throw error
        }
    }

    /// An entry read whole (into `slot`, as `name`): CRC and sizes are known before its header is written.
    private func addPrepared(_ slot: ZipEntrySlot, name entryName: String) throws {
        let name = Array(entryName.utf8)
        let body = slot.body
        let method: UInt16 = slot.packedCount == nil ? 0 : 8
        // Byte counts, never negative.
        let record = CentralRecord(name: name, method: method, flags: 0, crc: slot.crc,
                                   compressedSize: UInt64(clamping: body.count), size: UInt64(clamping: slot.size),
                                   localHeaderOffset: output.offset)
        let zip64 = options.forceZIP64 || record.size >= ZipFormat.max32 || record.compressedSize >= ZipFormat.max32
        try output.append(ZipFormat.localHeader(name: name, flags: 0, method: method, dos: dos, crc: slot.crc,
                                                compressedSize: record.compressedSize, size: record.size,
                                                zip64: zip64))
        try output.append(body)
        records.append(record)
        if method == 8 { deflated += 1 } else { stored += 1 }
    }

    /// A large entry streamed in chunks: header with a data-descriptor flag, data, then the descriptor.
    private func addStreamed(_ entry: ZipEntry, source: OpenFile) throws {
        streamedUsed = true
        let length = Int64(widening: try source.status().st_size)
        guard let size = UInt64(exactly: length) else { throw ZipError.outOfRange("the size \(length) of \(entry.source)") }
        let name = Array(entry.name.utf8)
        let deflater = try Deflater(level: options.compressionLevel)
        var method: UInt16 = 0
        if !entry.alwaysStore && options.minimumSaving < 1 {
            let probe = min(Int(widening: length), options.probeBytes, Self.chunkSize)
            let read = try source.read(into: chunk, count: probe, at: 0)
            guard read == probe else { throw ZipError.changed(entry.source) }
            let bound = try deflater.bound(probe)
            let probeOutput = UnsafeMutableRawPointer.allocate(byteCount: bound, alignment: 16)
            defer { probeOutput.deallocate() }
            let probeSize = try deflater.compressAll(chunk, count: probe, into: probeOutput, capacity: bound)
            if options.pays(probe, probeSize) { method = 8 }
        }
        let zip64 = options.forceZIP64 || size > 0xFF00_0000
        let flags = ZipFormat.flagDataDescriptor
        let offset = output.offset
        try output.append(ZipFormat.localHeader(name: name, flags: flags, method: method, dos: dos, crc: 0,
                                                compressedSize: 0, size: 0, zip64: zip64))
        let start = output.offset
        var crc: UInt32 = 0
        var done: Int64 = 0
        if method == 8 { deflater.reset() }
        while done < length {
            let want = Int(widening: min(Int64(widening: Self.chunkSize), length - done))
            let read = try source.read(into: chunk, count: want, at: done)
            guard read == want else { throw ZipError.changed(entry.source) }
            crc = WholeDeflater.crc32(chunk, count: read, continuing: crc)
            done += Int64(widening: read)
            if method == 8 {
                try deflater.compress(chunk, count: read, finish: done == length, scratch: scratch) {
                    try output.append($0)
                }
            } else {
                try output.append(UnsafeRawBufferPointer(start: chunk, count: read))
            }
        }
        let compressed = output.offset - start
        guard zip64 || compressed < ZipFormat.max32 else { throw ZipError.tooLarge(entry.name) }
        try output.append(ZipFormat.dataDescriptor(name: entry.name, crc: crc, compressedSize: compressed, size: size, zip64: zip64))
        records.append(CentralRecord(name: name, method: method, flags: flags, crc: crc,
                                     compressedSize: compressed, size: size, localHeaderOffset: offset))
        if method == 8 { deflated += 1 } else { stored += 1 }
    }

    /// Writes the central directory and end records; returns the archive's size and hash. Blocking.
    package func finish() throws -> WrittenZip {
        let directoryOffset = output.offset
        for record in records {
            try output.append(try ZipFormat.centralHeader(record, dos: dos, forceZIP64: options.forceZIP64))
        }
        let directorySize = output.offset - directoryOffset
        try output.append(ZipFormat.end(entries: records.count, directoryOffset: directoryOffset,
                                        directorySize: directorySize, forceZIP64: options.forceZIP64))
        guard let size = Int64(exactly: output.offset) else { throw ZipError.outOfRange("an archive of \(output.offset) bytes") }
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
                    sizes[hinted] = (try? file.status()).map { Int64(widening: $0.st_size) } ?? 0
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
/// Handed over explicitly: a job on the executor fills it (`prepare(_:)`), then, after that job is awaited,
/// the writer reads it. Never touched by two threads at once.
final class ZipEntrySlot: @unchecked Sendable {
    /// What `prepare(_:)` made of an entry.
    enum Prepared: Sendable {
        /// Read whole into the slot.
        case whole(ZipEntry)
        /// Too large for memory: the writer streams it from `source`.
        case streamed(ZipEntry, source: OpenFile)
        case failed(any Error)
    }

    let input: UnsafeMutableRawPointer
    let inputCapacity: Int
    let packed: UnsafeMutableRawPointer
    let packedCapacity: Int
    let options: ZipOptions
    let deflater: WholeDeflater
    // Results.
    var size = 0
    var crc: UInt32 = 0
    var packedCount: Int?

    init(options: ZipOptions) throws {
        self.options = options
        deflater = try WholeDeflater(level: options.compressionLevel)
        inputCapacity = max(options.bufferLimit, 64 << 10)
        packedCapacity = WholeDeflater.bound(inputCapacity)
        input = .allocate(byteCount: inputCapacity, alignment: 16)
        packed = .allocate(byteCount: packedCapacity, alignment: 16)
    }

    deinit {
        input.deallocate()
        packed.deallocate()
    }

    var body: UnsafeRawBufferPointer {
        packedCount.map { UnsafeRawBufferPointer(start: packed, count: $0) } ?? UnsafeRawBufferPointer(start: input, count: size)
    }

    /// Reads `entry`'s file and decides how to store it. Errors are kept for the writer. Blocking.
    func prepare(_ entry: ZipEntry) -> Prepared {
        packedCount = nil
        do {
            let file = try FS.open(entry.source, O_RDONLY | O_NOFOLLOW)
            let length = Int64(widening: try file.status().st_size)
            guard length <= Int64(widening: inputCapacity) else { return .streamed(entry, source: file) }
            size = Int(widening: length)
            guard try file.read(into: input, count: size, at: 0) == size else { throw ZipError.changed(entry.source) }
            load(alwaysStore: entry.alwaysStore)
            return .whole(entry)
        } catch {
            return .failed(error)
        }
    }

    /// Checksums and compresses the first `size` bytes of `input`: deflated into at most the size
    /// that pays, or stored when the result would be larger.
    func load(alwaysStore: Bool) {
        crc = WholeDeflater.crc32(input, count: size)
        packedCount = nil
        guard !alwaysStore, size > 0, options.minimumSaving < 1 else { return }
        let capacity = options.payingCapacity(size, limit: packedCapacity)
        guard capacity > 0 else { return }
        packedCount = deflater.compress(input, count: size, into: packed, capacity: capacity)
    }
}
