import Crypto

/// Appends bytes to the archive file through a buffer, hashing them (SHA-256) in write order and
/// counting the offset.
package final class ArchiveOutput {
    private let file: OpenFile
    private var hasher = SHA256()
    private let buffer: UnsafeMutableRawPointer
    private let capacity: Int
    private var pending = 0
    package private(set) var offset: UInt64 = 0

    package init(file: OpenFile, bufferSize: Int = 256 << 10) {
        self.file = file
        capacity = bufferSize
        buffer = .allocate(byteCount: bufferSize, alignment: 16)
    }

    deinit { buffer.deallocate() }

    package func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        if pending + bytes.count > capacity || bytes.count >= capacity / 2 { try flush() }
        if bytes.count >= capacity / 2 {
            // Large: straight from the caller's memory, after what is pending (order is everything).
            hasher.update(bufferPointer: bytes)
            try file.write(bytes)
        } else {
            (buffer + pending).copyMemory(from: source, byteCount: bytes.count)
            pending += bytes.count
        }
        offset += UInt64(clamping: bytes.count)     // a count: never negative
    }

    package func append(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try append($0) }
    }

    package func flush() throws {
        guard pending > 0 else { return }
        let chunk = UnsafeRawBufferPointer(start: buffer, count: pending)
        hasher.update(bufferPointer: chunk)
        try file.write(chunk)
        pending = 0
    }

    /// Flushes and returns the lowercase hex SHA-256 of everything written.
    package func finish() throws -> String {
        try flush()
        return hasher.finalize().map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
