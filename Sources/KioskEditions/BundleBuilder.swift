#if canImport(Glibc)
import Glibc
#endif
import CLibZ
import Dispatch
import Foundation
import KioskModels
import KioskFiles

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
    /// Deflate level (zlib's scale) for entries that are deflated. 1: a page PDF's own streams are already
    /// compressed, so higher levels buy little (level 6 saved 0.07% more on the reference data set for 6%
    /// more CPU).
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
    /// fsync the bundle before it is renamed into place (and the folder after).
    public var sync = true
    /// Threads reading and compressing entries ahead of the writer; nil: one per processor (at most 8).
    public var workers: Int?

    public init(compressionLevel: Int32 = 1, minimumSaving: Double = 0.05, probeBytes: Int = 64 << 10,
                bufferLimit: Int = 4 << 20, forceZIP64: Bool = false, sync: Bool = true, workers: Int? = nil) {
        self.compressionLevel = compressionLevel; self.minimumSaving = minimumSaving; self.probeBytes = probeBytes
        self.bufferLimit = bufferLimit; self.forceZIP64 = forceZIP64; self.sync = sync; self.workers = workers
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

/// Writes an issue's ZIP bundle directly: `edicio.xml` first, then the entries in order.
///
/// JPEGs are stored. Other entries are deflated (raw deflate) only when that saves at least
/// `minimumSaving`. Entries up to `bufferLimit` are read, checksummed and compressed in one call with
/// libdeflate (into a buffer only as large as a paying result: when it does not fit, the entry is
/// stored) by one worker per processor, a few entries ahead of the writer, so their local headers carry
/// real sizes. Larger ones are streamed by the writer through zlib with a data descriptor, decided on
/// their first `probeBytes`. The archive is written sequentially to a temporary file beside `path`
/// (hashed on the way), fsynced, and renamed over `path`: a reader sees the old file, the complete new
/// one, or none, never a partial one. Entry times are the issue's date, so the same issue always gives
/// the same bytes.
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
            try Pipeline(entries: entries, options: options, writer: writer).run()
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

    /// Whether deflating `original` bytes into `compressed` saves enough.
    static func pays(_ original: Int, _ compressed: Int, options: BundleOptions) -> Bool {
        Double(compressed) <= Double(original) * (1 - options.minimumSaving)
    }

    /// The largest compressed size of `original` bytes that still `pays`, within `0...limit` (a negative,
    /// infinite or NaN `minimumSaving` gives `limit` or 0, never an overflow).
    static func payingCapacity(_ original: Int, options: BundleOptions, limit: Int) -> Int {
        let allowed = (Double(original) * (1 - options.minimumSaving)).rounded(.down)
        guard allowed >= 0 else { return 0 }      // also NaN
        return allowed >= Double(limit) ? limit : Int(allowed)
    }

    /// The buffers and results of one entry read whole, checksummed and (maybe) compressed by a worker.
    ///
    /// Handed over explicitly: a worker fills `entry` and runs `prepare(using:)`, the writer reads the
    /// results after the slot's semaphore. Never touched by two threads at once.
    final class EntrySlot: @unchecked Sendable {
        let input: UnsafeMutableRawBufferPointer
        let packed: UnsafeMutableRawBufferPointer
        let options: BundleOptions
        var entry: BundleEntry?
        var source: OpenFile?
        // Results.
        var size = 0
        var crc: UInt32 = 0
        var packedCount: Int?
        /// Too large for memory: the writer streams it.
        var streamed = false
        var failure: (any Error)?

        init(options: BundleOptions) {
            self.options = options
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

        /// Reads the entry's file and decides how to store it. Errors are kept for the writer.
        func prepare(using deflater: WholeDeflater) {
            failure = nil
            streamed = false
            packedCount = nil
            guard let entry else { return }
            do {
                let file = try source ?? FS.open(entry.source, O_RDONLY | O_NOFOLLOW)
                source = file
                let length = Int64(try file.status().st_size)
                guard length <= Int64(input.count) else { streamed = true; return }
                size = Int(length)
                guard try file.read(into: input.baseAddress!, count: size, at: 0) == size else { throw ZipError.changed(entry.source) }
                load(alwaysStore: entry.alwaysStore, deflater: deflater)
            } catch {
                failure = error
            }
        }

        /// Checksums and compresses the first `size` bytes of `input`: deflated into at most the size
        /// that pays, or stored when the result would be larger.
        func load(alwaysStore: Bool, deflater: WholeDeflater) {
            crc = WholeDeflater.crc32(input.baseAddress!, count: size)
            packedCount = nil
            guard !alwaysStore, size > 0, options.minimumSaving < 1 else { return }
            let capacity = BundleBuilder.payingCapacity(size, options: options, limit: packed.count)
            guard capacity > 0 else { return }
            packedCount = deflater.compress(input.baseAddress!, count: size, into: packed.baseAddress!, capacity: capacity)
        }
    }

    /// Workers prepare entries in order of index, each into the ring slot `index % ring` once the writer
    /// has released it; the writer takes the slots in order. Both processors stay busy: a worker never
    /// waits for a batch to finish, only for a free slot.
    struct Pipeline {
        let entries: [BundleEntry]
        let options: BundleOptions
        let writer: Writer
        /// Bytes of input hinted ahead of the writer.
        static let readAhead: Int64 = 64 << 20

        /// Hands out entry indices in order and tells a worker when its slot is free: the slot of index
        /// `i` is free once the writer has written index `i - ring`. (One semaphore per slot would not do:
        /// a worker holding a later index could take the slot before the one holding the earlier index.)
        final class Progress: @unchecked Sendable {
            private let condition = NSCondition()
            private var next = 0
            private var written = 0
            private var stopped = false

            /// The next index to prepare, or nil when the writer gave up.
            func take() -> Int? {
                condition.withLock {
                    guard !stopped else { return nil }
                    defer { next += 1 }
                    return next
                }
            }

            /// Waits until the writer has written `count` entries; false when it gave up.
            func waitUntilWritten(_ count: Int) -> Bool {
                condition.lock()
                defer { condition.unlock() }
                while written < count && !stopped { condition.wait() }
                return !stopped
            }

            func wrote(_ count: Int) {
                condition.withLock { written = count }
                condition.broadcast()
            }

            func stop() {
                condition.withLock { stopped = true }
                condition.broadcast()
            }
        }

        func run() throws {
            guard !entries.isEmpty else { return }
            let processors = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
            let workers = max(1, min(options.workers ?? processors, 8, entries.count))
            let ring = 2 * workers
            let slots = (0..<ring).map { _ in EntrySlot(options: options) }
            let deflaters = try (0..<workers).map { _ in try WholeDeflater(level: options.compressionLevel) }
            let ready = (0..<ring).map { _ in DispatchSemaphore(value: 0) }
            let progress = Progress()
            let entries = self.entries
            let group = DispatchGroup()
            for deflater in deflaters {
                DispatchQueue.global(qos: .utility).async(group: group) {
                    while let index = progress.take(), index < entries.count {
                        let position = index % ring
                        guard progress.waitUntilWritten(index - ring + 1) else { return }
                        slots[position].entry = entries[index]
                        slots[position].prepare(using: deflater)
                        ready[position].signal()
                    }
                }
            }
            // Read-ahead hints for the files ahead of the writer, up to `readAhead` bytes: on a cold
            // cache the disk reads them while the processors deflate, instead of after.
            var hinted = 0
            var hintedBytes: Int64 = 0, writtenBytes: Int64 = 0
            var sizes = [Int64](repeating: 0, count: entries.count)
            func hint() {
                while hinted < entries.count, hintedBytes - writtenBytes < Self.readAhead {
                    if let file = try? FS.open(entries[hinted].source, O_RDONLY | O_NOFOLLOW) {
                        sizes[hinted] = Int64((try? file.status().st_size) ?? 0)
                        file.willNeed()
                    }
                    hintedBytes += sizes[hinted]
                    hinted += 1
                }
            }
            var failure: (any Error)?
            for index in entries.indices {
                hint()
                let position = index % ring
                ready[position].wait()
                let slot = slots[position]
                do {
                    if let error = slot.failure { throw error }
                    if slot.streamed { try writer.addStreamed(slot.entry!, source: slot.source!) } else { try writer.addPrepared(slot) }
                } catch {
                    failure = error
                }
                slot.source = nil
                writtenBytes += sizes[index]
                if failure != nil { break }
                progress.wrote(index + 1)
            }
            if failure != nil { progress.stop() }   // workers waiting for a slot return
            group.wait()
            if let failure { throw failure }
        }
    }

    /// The sequential writer: headers, bodies and the central directory, in order.
    final class Writer {
        let output: ArchiveOutput
        let options: BundleOptions
        let dos: (date: UInt16, time: UInt16)
        /// For in-memory entries (`edicio.xml`).
        let memorySlot: EntrySlot
        let memoryDeflater: WholeDeflater
        /// For streamed entries: chunks read, and deflated output.
        private lazy var chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        private lazy var scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
        private var streamedUsed = false
        var records: [CentralRecord] = []
        var stored = 0
        var deflated = 0

        init(output: ArchiveOutput, options: BundleOptions, date: IssueDate) throws {
            self.output = output
            self.options = options
            self.dos = ZipFormat.dosDateTime(year: date.year, month: date.month, day: date.day)
            var small = options
            small.bufferLimit = 64 << 10
            memorySlot = EntrySlot(options: small)
            memoryDeflater = try WholeDeflater(level: options.compressionLevel)
        }

        deinit {
            if streamedUsed {
                chunk.deallocate()
                scratch.deallocate()
            }
        }

        /// Adds an entry from memory (`edicio.xml`, at most 64 KiB).
        func addMemory(name: String, _ bytes: [UInt8]) throws {
            guard bytes.count <= memorySlot.input.count else { throw ZipError.tooLarge(name) }
            bytes.withUnsafeBytes { memorySlot.input.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            memorySlot.size = bytes.count
            memorySlot.entry = BundleEntry(name: name, source: "", alwaysStore: false)
            memorySlot.load(alwaysStore: false, deflater: memoryDeflater)
            try addPrepared(memorySlot)
        }

        /// An entry read whole: CRC and sizes are known before its header is written.
        func addPrepared(_ slot: EntrySlot) throws {
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
        func addStreamed(_ entry: BundleEntry, source: OpenFile) throws {
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
                if BundleBuilder.pays(probe, probeSize, options: options) { method = 8 }
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
