import NIOCore
import KioskFiles

/// One chunk buffer, filled on the event loop or the blocking executor and then handed to the connection.
///
/// The box holds the only reference between uses, so a fill writes into the same storage unless the
/// connection still holds the previous chunk (then `clear()` gives it fresh storage). Used by one
/// response task at a time: filled while the task awaits, read after.
package final class FileChunkBuffer: @unchecked Sendable {
    private(set) var buffer: ByteBuffer

    package init(capacity: Int) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
    }

    package func fill(from file: OpenFile, count: Int, at offset: Int64) throws {
        buffer.clear()
        let read = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
            guard let start = raw.baseAddress else { return 0 }   // no room at all: count is 0
            return try file.read(into: start, count: count, at: offset)
        }
        guard read == count else { throw FileTruncated() }
    }

    /// `fill` if the bytes are in the page cache (never waits for the disk); false otherwise.
    package func fillIfCached(from file: OpenFile, count: Int, at offset: Int64) -> Bool {
        buffer.clear()
        var cached = false
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
            guard let start = raw.baseAddress else {   // no room at all: count is 0, nothing to read
                cached = true
                return 0
            }
            cached = file.readIfCached(into: start, count: count, at: offset)
            return cached ? count : 0
        }
        return cached
    }
}

/// The file ended before the bytes its size promised (it was truncated while being served).
package struct FileTruncated: Error {}
