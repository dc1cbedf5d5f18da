// Byte sources the tar reader reads from: a plain file, or a gzip stream inflated with zlib.

#if canImport(Glibc)
import Glibc
#endif
import CLibZ

protocol ByteSource {
    /// Reads up to `count` bytes; 0 at the end.
    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int
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
    let file: OpenFile
    var offset: Int64 = 0
    init(file: OpenFile) { self.file = file }
    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        let n = try file.read(into: buffer, count: count, at: offset)
        offset += Int64(n)
        return n
    }
}

/// gunzip over a file, with a cap on the output (a gzip bomb stops there).
struct GzipSource: ByteSource {
    let file: OpenFile
    let stream: UnsafeMutablePointer<z_stream>
    let input: UnsafeMutableRawBufferPointer
    let holder: Holder
    var offset: Int64 = 0
    var produced: Int64 = 0
    let limit: Int64
    var finished = false

    /// Frees the zlib state with the source.
    final class Holder {
        let stream: UnsafeMutablePointer<z_stream>
        let input: UnsafeMutableRawBufferPointer
        init(stream: UnsafeMutablePointer<z_stream>, input: UnsafeMutableRawBufferPointer) { self.stream = stream; self.input = input }
        deinit { inflateEnd(stream); stream.deallocate(); input.deallocate() }
    }

    init(file: OpenFile, limit: Int64) throws {
        self.file = file
        self.limit = limit
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        input = .allocate(byteCount: 256 << 10, alignment: 16)
        guard inflateInit2_(stream, 16 + 15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            stream.deallocate(); input.deallocate()
            throw ArchiveError("cannot start gzip decompression")
        }
        holder = Holder(stream: stream, input: input)
    }

    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        guard !finished, count > 0 else { return 0 }
        stream.pointee.next_out = buffer.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(count)
        while stream.pointee.avail_out == uInt(count) {
            if stream.pointee.avail_in == 0 {
                let n = try file.read(into: input.baseAddress!, count: input.count, at: offset)
                offset += Int64(n)
                if n == 0 { throw ArchiveError("is a truncated gzip stream") }
                stream.pointee.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_in = uInt(n)
            }
            let status = inflate(stream, Z_NO_FLUSH)
            if status == Z_STREAM_END { finished = true; break }
            guard status == Z_OK || status == Z_BUF_ERROR else {
                throw ArchiveError("is a damaged gzip stream")
            }
        }
        let n = count - Int(stream.pointee.avail_out)
        produced += Int64(n)
        if produced > limit { throw ArchiveError("unpacks to more than the limit per issue", exceedsLimit: true) }
        return n
    }
}
