import Crypto
import Foundation
import KioskModels
import KioskFiles

/// A write position in memory sized beforehand (a link is measured first, then written once).
struct LinkBytes {
    private(set) var position: UnsafeMutablePointer<UInt8>

    init(_ start: UnsafeMutablePointer<UInt8>) { position = start }

    func count(from start: UnsafeMutablePointer<UInt8>) -> Int { position - start }

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
    /// `digits` bytes from `digitCount`.
    mutating func append(_ value: Int64, radix: Int, digits: Int) {
        let table = Self.hexDigits(uppercase: false)
        var magnitude = value.magnitude
        let base = UInt64(radix)
        var index = digits - 1
        repeat {
            position[index] = table[Int(magnitude % base)]
            magnitude /= base
            index -= 1
        } while magnitude > 0
        if value < 0 { position[0] = UInt8(ascii: "-") }
        position += digits
    }

    /// Characters of `String(value, radix: radix)`.
    static func digitCount(_ value: Int64, radix: Int) -> Int {
        var magnitude = value.magnitude
        var count = value < 0 ? 1 : 0
        repeat {
            count += 1
            magnitude /= UInt64(radix)
        } while magnitude > 0
        return count
    }

    static func hexDigits(uppercase: Bool) -> UnsafePointer<UInt8> {
        let digits: StaticString = uppercase ? "0123456789ABCDEF" : "0123456789abcdef"
        return digits.utf8Start
    }
}
