import Foundation

/// A write position in memory sized beforehand (a link is measured first, then written once).
struct LinkBytes {
    private let start: UnsafeMutablePointer<UInt8>
    private(set) var position: UnsafeMutablePointer<UInt8>

    /// Writes from the start of `buffer`, which is not empty (every caller sizes it for a link, a token
    /// or a signed message first).
    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        start = buffer.baseAddress!
        position = start
    }

    /// Bytes written (or skipped) so far.
    var count: Int { position - start }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        position.initialize(to: byte)
        position += 1
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        position.initialize(from: source, count: bytes.count)
        position += bytes.count
    }

    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Leaves `count` bytes to be written later; returns where they start.
    mutating func skip(_ count: Int) -> UnsafeMutablePointer<UInt8> {
        defer { position += count }
        return position
    }

    /// Writes `value` as `String(value, radix: radix)` does (lowercase digits, `-` when negative), in
    /// `digits` bytes from `digitCount`. `radix` is 2 to 16.
    mutating func append(_ value: Int64, radix: UInt64, digits: Int) {
        let table = Self.hexDigits(uppercase: false)
        var magnitude = value.magnitude
        var index = digits - 1
        repeat {
            position[index] = table[Int(truncatingIfNeeded: magnitude % radix)]   // below the radix: fits
            magnitude /= radix
            index -= 1
        } while magnitude > 0
        if value < 0 { position[0] = UInt8(ascii: "-") }
        position += digits
    }

    /// Characters of `String(value, radix: radix)`.
    static func digitCount(_ value: Int64, radix: UInt64) -> Int {
        var magnitude = value.magnitude
        var count = value < 0 ? 1 : 0
        repeat {
            count += 1
            magnitude /= radix
        } while magnitude > 0
        return count
    }

    static func hexDigits(uppercase: Bool) -> UnsafePointer<UInt8> {
        let digits: StaticString = uppercase ? "0123456789ABCDEF" : "0123456789abcdef"
        return digits.utf8Start
    }
}
