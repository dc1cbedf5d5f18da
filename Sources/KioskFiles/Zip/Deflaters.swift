#if canImport(Glibc)
import KioskIntegers
import Glibc
#endif
import CLibDeflate
import CLibZ
/// `sizeof(z_stream)`, which zlib's init functions check against their own: 0, which they refuse with
/// `Z_VERSION_ERROR`, if it did not fit an Int32.
let zStreamSize = Int32(exactly: MemoryLayout<z_stream>.size) ?? 0

/// Raw deflate (no zlib header, windowBits -15) over one `z_stream`, for entries streamed in chunks.
/// The stream lives at a fixed heap address, as zlib requires.
package final class Deflater {
    private let stream: UnsafeMutablePointer<z_stream>
    /// zlib's largest hash table (memLevel 9, 384 KiB per stream instead of 256): on page PDFs at level 1
    /// it deflates 13% faster than the default 8 (fewer hash collisions) and 0.05 points smaller.
    package static let memoryLevel: Int32 = 9

    package init(level: Int32) throws {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = deflateInit2_(stream, level, Z_DEFLATED, -15, Self.memoryLevel, Z_DEFAULT_STRATEGY,
                                   ZLIB_VERSION, zStreamSize)
        guard status == Z_OK else {
            stream.deallocate()
            throw ZipError.zlib("deflateInit2", status)
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    /// Worst-case output size of compressing `count` bytes in one go.
    package func bound(_ count: Int) throws -> Int {
        guard let length = uLong(exactly: count), let bound = Int(exactly: deflateBound(stream, length)) else {
            throw ZipError.outOfRange("a deflate input of \(count) bytes")
        }
        return bound
    }

    package func reset() { deflateReset(stream) }

    /// Compresses `count` bytes at `input` completely into `output` (which must hold `bound(count)`);
    /// returns the compressed size.
    package func compressAll(_ input: UnsafeRawPointer, count: Int, into output: UnsafeMutableRawPointer, capacity: Int) throws -> Int {
        guard let available = uInt(exactly: count), let space = uInt(exactly: capacity) else {
            throw ZipError.outOfRange("a deflate of \(count) bytes into \(capacity)")
        }
        reset()
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = available
        stream.pointee.next_out = output.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = space
        let status = deflate(stream, Z_FINISH)
        guard status == Z_STREAM_END else { throw ZipError.zlib("deflate", status) }
        return Int(widening: space - stream.pointee.avail_out)
    }

    /// Feeds `count` bytes (finishing the stream when `finish`), handing each full or final output chunk
    /// to `emit`.
    package func compress(_ input: UnsafeRawPointer, count: Int, finish: Bool, scratch: UnsafeMutableRawBufferPointer,
                  emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let available = uInt(exactly: count), let output = scratch.baseAddress, !scratch.isEmpty else {
            throw ZipError.outOfRange("a deflate of \(count) bytes through \(scratch.count)")
        }
        // Told of at most 4 GiB - 1 of the scratch buffer, and counted from what it was told.
        let space = uInt(clamping: scratch.count)
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = available
        while true {
            stream.pointee.next_out = output.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = space
            let status = deflate(stream, finish ? Z_FINISH : Z_NO_FLUSH)
            guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                throw ZipError.zlib("deflate", status)
            }
            let produced = Int(widening: space - stream.pointee.avail_out)
            if produced > 0 { try emit(UnsafeRawBufferPointer(rebasing: scratch[0..<produced])) }
            if finish ? status == Z_STREAM_END : (stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0) { return }
        }
    }
}

/// libdeflate's raw deflate of a whole buffer in one call, for entries read whole into memory.
/// A compressor is used by one thread at a time and reused for every entry it compresses.
package final class WholeDeflater: @unchecked Sendable {
    private let compressor: OpaquePointer

    /// `level` on zlib's scale (0 stores, 1 fastest, -1 zlib's default 6); libdeflate goes up to 12.
    package init(level: Int32) throws {
        let clamped = level < 0 ? 6 : min(level, 12)
        guard let compressor = libdeflate_alloc_compressor(clamped) else {
            throw ZipError.libdeflate("libdeflate_alloc_compressor(\(clamped))")
        }
        self.compressor = compressor
    }

    deinit { libdeflate_free_compressor(compressor) }

    /// Worst-case output size of compressing `count` bytes, for any compressor.
    package static func bound(_ count: Int) -> Int { libdeflate_deflate_compress_bound(nil, count) }

    /// Compresses `count` bytes at `input` into at most `capacity` bytes at `output`; returns the
    /// compressed size, or nil when the result would not fit.
    package func compress(_ input: UnsafeRawPointer, count: Int, into output: UnsafeMutableRawPointer, capacity: Int) -> Int? {
        let written = libdeflate_deflate_compress(compressor, input, count, output, capacity)
        return written == 0 ? nil : written
    }

    /// CRC-32 (the ZIP one, as zlib's `crc32`) of `count` bytes at `bytes`, continuing `crc`, the CRC-32
    /// of the bytes before them.
    package static func crc32(_ bytes: UnsafeRawPointer, count: Int, continuing crc: UInt32 = 0) -> UInt32 {
        libdeflate_crc32(crc, bytes, count)
    }
}
