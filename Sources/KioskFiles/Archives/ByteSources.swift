// Byte sources the tar reader reads from: a plain file, or a gzip stream inflated with zlib.

#if canImport(Glibc)
import KioskIntegers
import Glibc
#endif
import CLibZ
protocol ByteSource {
    /// Reads up to `count` bytes; 0 at the end.
    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int
    /// Bytes left when the source knows (a plain file), nil when it cannot tell before reading them.
    var remaining: Int64? { get }
    /// Called once the reader has all it needs: checks what is left of the source (a gzip stream's
    /// checksum and length). Throws `ArchiveError`.
    mutating func finish() throws
}

extension ByteSource {
    /// Reads exactly `count` bytes or throws at a premature end.
    mutating func readExactly(into buffer: UnsafeMutableRawPointer, count: Int) throws {
        var done = 0
        while done < count {
            let n = try read(into: buffer + done, count: count - done)
            guard n > 0 else { throw ArchiveError("is truncated: the archive ends in the middle of a file") }
            done += n
        }
    }
}

struct PlainSource: ByteSource {
    let input: ArchiveInput
    var offset: Int64 = 0
    init(input: ArchiveInput) { self.input = input }

    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        let n = try input.read(into: buffer, count: count, at: offset)
        offset += Int64(widening: n)
        return n
    }

    var remaining: Int64? { max(0, input.size - offset) }
    mutating func finish() throws {}
}

/// gunzip over a file, with a cap on the output (a gzip bomb stops there). Members written one after
/// another (`cat a.gz b.gz`) read as one stream, as gzip reads them; bytes after the last member that do
/// not start another are ignored, as gzip ignores them.
struct GzipSource: ByteSource {
    let input: ArchiveInput
    let stream: UnsafeMutablePointer<z_stream>
    /// Compressed bytes read from the file, not yet all inflated.
    let buffer: UnsafeMutableRawBufferPointer
    let holder: Holder
    /// The next byte of the file to read into `buffer`.
    var offset: Int64 = 0
    var produced: Int64 = 0
    let limit: Int64
    var finished = false

    /// Frees the zlib state with the source.
    final class Holder {
        let stream: UnsafeMutablePointer<z_stream>
        let buffer: UnsafeMutableRawBufferPointer
        init(stream: UnsafeMutablePointer<z_stream>, buffer: UnsafeMutableRawBufferPointer) { self.stream = stream; self.buffer = buffer }
        deinit { inflateEnd(stream); stream.deallocate(); buffer.deallocate() }
    }

    init(input: ArchiveInput, limit: Int64) throws {
        self.input = input
        self.limit = limit
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        buffer = .allocate(byteCount: 256 << 10, alignment: 16)
        guard inflateInit2_(stream, 16 + 15, ZLIB_VERSION, zStreamSize) == Z_OK else {
            stream.deallocate(); buffer.deallocate()
            throw ArchiveError("cannot be unpacked: gzip decompression failed to start")
        }
        holder = Holder(stream: stream, buffer: buffer)
    }

    var remaining: Int64? { nil }

    mutating func read(into output: UnsafeMutableRawPointer, count: Int) throws -> Int {
        guard !finished, count > 0 else { return 0 }
        let want = uInt(clamping: min(count, 1 << 30))     // at most 1 GiB a call
        stream.pointee.next_out = output.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = want
        while !finished, stream.pointee.avail_out == want {
            if stream.pointee.avail_in == 0 {
                guard try refill(keeping: 0) else { throw ArchiveError("is a truncated gzip stream: the upload ends before the stream does") }
            }
            let status = inflate(stream, Z_NO_FLUSH)
            switch status {
            case Z_OK:
                continue
            case Z_STREAM_END:
                if try nextMemberFollows() {
                    guard inflateReset(stream) == Z_OK else { throw ArchiveError("is a damaged gzip stream") }
                } else {
                    finished = true
                }
            case Z_BUF_ERROR where stream.pointee.avail_in == 0:
                continue    // needs more input
            default:
                throw ArchiveError("is a damaged gzip stream (\(zlibMessage ?? "zlib status \(status)"))")
            }
        }
        let n = Int(widening: want - stream.pointee.avail_out)
        produced += Int64(widening: n)
        if produced > limit { throw ArchiveError("unpacks to more than the limit per issue", exceedsLimit: true) }
        return n
    }

    /// Inflates what is left, so the last member's CRC-32 and length are checked.
    mutating func finish() throws {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { scratch.deallocate() }
        guard let base = scratch.baseAddress else { return }
        while try read(into: base, count: scratch.count) > 0 {}
    }

    private var zlibMessage: String? { stream.pointee.msg.map { String(cString: $0) } }

    /// Moves the last `keeping` unread bytes to the start of the buffer and reads more after them;
    /// false at the end of the file (nothing more read).
    private mutating func refill(keeping: Int) throws -> Bool {
        guard let base = buffer.baseAddress else { return false }
        if keeping > 0, let next = stream.pointee.next_in { memmove(base, next, keeping) }
        let n = try input.read(into: base + keeping, count: buffer.count - keeping, at: offset)
        offset += Int64(widening: n)
        stream.pointee.next_in = base.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = uInt(clamping: keeping + n)     // at most the buffer's 256 KiB
        return n > 0
    }

    /// After a member's end: whether another member (the gzip magic `1F 8B`) follows.
    private mutating func nextMemberFollows() throws -> Bool {
        if stream.pointee.avail_in < 2 {
            _ = try refill(keeping: Int(widening: stream.pointee.avail_in))
        }
        guard stream.pointee.avail_in >= 2, let next = stream.pointee.next_in else { return false }
        return next[0] == 0x1F && next[1] == 0x8B
    }
}
