// XML-RPC encoding into one growing byte buffer, handed over as a ByteBuffer (what the server writes).

import KioskIntegers
import NIOCore

/// Encodes XML-RPC documents as UTF-8 bytes. Output is always well-formed XML 1.0: characters XML
/// cannot carry (C0 controls other than tab, LF and CR; U+FFFE; U+FFFF) become U+FFFD.
public enum XMLRPCEncoder {
    /// `<methodResponse><params><param>` with one value. Throws -32603 only for a non-finite double.
    public static func encodeResponse(_ value: XMLRPCValue) throws(XMLRPCFault) -> ByteBuffer {
        var writer = XMLWriter(capacity: 128 + value.encodedSizeEstimate)
        writer.raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<methodResponse><params><param>")
        try writer.value(value)
        writer.raw("</param></params></methodResponse>\n")
        return writer.finish()
    }

    /// `<methodResponse><fault>` with the fault's code and message.
    public static func encodeFault(_ fault: XMLRPCFault) -> ByteBuffer {
        var writer = XMLWriter(capacity: 320 + fault.message.utf8.count)
        writer.raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<methodResponse><fault><value><struct>")
        writer.raw("<member><name>faultCode</name><value><int>")
        writer.integer(Int64(widening: Int32(clamping: fault.code)))
        writer.raw("</int></value></member><member><name>faultString</name><value><string>")
        writer.escaped(fault.message)
        writer.raw("</string></value></member></struct></value></fault></methodResponse>\n")
        return writer.finish()
    }

    /// `<methodCall>` (for clients, tests and benchmarks). Throws -32603 only for a non-finite double.
    public static func encodeCall(_ call: XMLRPCCall) throws(XMLRPCFault) -> ByteBuffer {
        var writer = XMLWriter(capacity: 1024)
        writer.raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<methodCall><methodName>")
        writer.escaped(call.methodName)
        writer.raw("</methodName><params>")
        for param in call.params {
            writer.raw("<param>")
            try writer.value(param)
            writer.raw("</param>")
        }
        writer.raw("</params></methodCall>\n")
        return writer.finish()
    }

    /// Formats a finite double as plain decimal digits (no exponent), with the shortest digits that
    /// round-trip: 1e-7 -> "0.0000001", 1e21 -> "1000000000000000000000.0", -0.0 -> "-0.0".
    /// Returns nil for infinities and NaN.
    public static func formatDouble(_ value: Double) -> String? {
        var bytes: [UInt8] = []
        guard appendDouble(value, to: &bytes) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func appendDouble(_ value: Double, to out: inout [UInt8]) -> Bool {
        guard value.isFinite else { return false }
        // Swift's description gives the shortest round-trip digits, sometimes in exponent form.
        let text = value.description
        var digits: [UInt8] = []
        digits.reserveCapacity(24)
        var negative = false
        var pointPosition: Int?
        var exponent = 0
        var exponentNegative = false
        var inExponent = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "-"):
                if inExponent { exponentNegative = true } else { negative = true }
            case UInt8(ascii: "+"):
                continue
            case UInt8(ascii: "."):
                pointPosition = digits.count
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                inExponent = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if inExponent {
                    exponent = exponent * 10 + Int(widening: byte - 0x30)
                } else {
                    digits.append(byte)
                }
            default:
                return false
            }
        }
        var point = (pointPosition ?? digits.count) + (exponentNegative ? -exponent : exponent)
        // Drop leading zeros (moving the point) and trailing zeros.
        var leading = 0
        while leading < digits.count - 1, digits[leading] == 0x30 {
            leading += 1
        }
        if leading > 0 {
            digits.removeFirst(leading)
            point -= leading
        }
        while digits.count > 1, digits.last == 0x30, digits.count > point {
            digits.removeLast()
        }
        if digits == [0x30] { point = 1 }
        if negative { out.append(UInt8(ascii: "-")) }
        if point <= 0 {
            out.append(UInt8(ascii: "0"))
            out.append(UInt8(ascii: "."))
            for _ in 0..<(-point) { out.append(UInt8(ascii: "0")) }
            out.append(contentsOf: digits)
        } else if point >= digits.count {
            out.append(contentsOf: digits)
            for _ in 0..<(point - digits.count) { out.append(UInt8(ascii: "0")) }
            out.append(UInt8(ascii: "."))
            out.append(UInt8(ascii: "0"))
        } else {
            out.append(contentsOf: digits[0..<point])
            out.append(UInt8(ascii: "."))
            out.append(contentsOf: digits[point...])
        }
        return true
    }
}

/// 0: copy as is; 1: needs attention (markup, CR, control character, or a possible U+FFFE/U+FFFF lead).
private let escapeClass: [UInt8] = {
    var table = [UInt8](repeating: 0, count: 256)
    for byte in 0..<0x20 where byte != 0x09 && byte != 0x0A { table[byte] = 1 }
    table[Int(widening: UInt8(ascii: "&"))] = 1
    table[Int(widening: UInt8(ascii: "<"))] = 1
    table[Int(widening: UInt8(ascii: ">"))] = 1
    table[0xEF] = 1
    return table
}()

private let base64Alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

/// True when any byte of `word` is below 0x20 or is `&`, `<`, `>` or 0xEF (exact for "any"; which
/// byte is then found one by one).
@inline(__always)
private func mayNeedEscaping(_ word: UInt64) -> Bool {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    @inline(__always) func hasZeroByte(_ value: UInt64) -> UInt64 { (value &- ones) & ~value & highs }
    let below20 = (word &- ones &* 0x20) & ~word & highs
    return below20 | hasZeroByte(word ^ (ones &* 0x26)) | hasZeroByte(word ^ (ones &* 0x3C))
        | hasZeroByte(word ^ (ones &* 0x3E)) | hasZeroByte(word ^ (ones &* 0xEF)) != 0
}

/// An append-only byte buffer in manually managed memory (cheaper than `[UInt8].append` for many small
/// pieces); `finish()` hands the bytes over as one `ByteBuffer` and frees the memory.
struct XMLWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    /// The bytes written so far.
    consuming func finish() -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: count)
        buffer.writeBytes(UnsafeRawBufferPointer(start: base, count: count))
        return buffer
    }

    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(extra) }
    }

    /// Doubles, or makes room for half as much again as needed when one piece (a kept, already encoded
    /// answer) is larger than that, so the small pieces after it do not grow the buffer again.
    private mutating func grow(_ extra: Int) {
        let newCapacity = max(capacity * 2, (count + extra) * 3 / 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    mutating func byte(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (base + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    mutating func bytes(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { self.bytes($0) }
    }

    mutating func bytes(_ buffer: ByteBuffer) {
        buffer.withUnsafeReadableBytes { self.bytes($0.assumingMemoryBound(to: UInt8.self)) }
    }

    @inline(__always)
    mutating func raw(_ text: StaticString) {
        bytes(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func integer(_ value: Int64) {
        reserve(20)
        if value < 0 {
            base[count] = UInt8(ascii: "-")
            count += 1
        }
        var magnitude = value.magnitude
        var digits = 1
        var probe = magnitude
        while probe >= 10 {
            probe /= 10
            digits += 1
        }
        var position = count + digits
        count = position
        repeat {
            position -= 1
            base[position] = 0x30 &+ UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
    }

    mutating func escaped(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ escaped($0) }) == nil {
            var copy = text
            copy.withUTF8 { escaped($0) }
        }
    }

    mutating func escaped(_ text: UnsafeBufferPointer<UInt8>) {
        guard let source = text.baseAddress else { return }
        let total = text.count
        var start = 0
        var index = 0
        escapeClass.withUnsafeBufferPointer { table in
            while index < total {
                // Skip clean 8-byte words quickly.
                while index + 8 <= total,
                      !mayNeedEscaping(UInt64(littleEndian: UnsafeRawPointer(source + index).loadUnaligned(as: UInt64.self)))
                {
                    index += 8
                }
                let limit = min(index + 8, total)
                while index < limit {
                    let byte = source[index]
                    if table[Int(widening: byte)] == 0 {
                        index += 1
                        continue
                    }
                    if start < index { bytes(UnsafeBufferPointer(start: source + start, count: index - start)) }
                    switch byte {
                    case UInt8(ascii: "&"): raw("&amp;")
                    case UInt8(ascii: "<"): raw("&lt;")
                    case UInt8(ascii: ">"): raw("&gt;")
                    case 0x0D: raw("&#13;")
                    case 0xEF:
                        // U+FFFE and U+FFFF are EF BF BE and EF BF BF.
                        if index + 2 < total, source[index + 1] == 0xBF, source[index + 2] >= 0xBE {
                            raw("\u{FFFD}")
                            index += 2
                        } else {
                            self.byte(byte)
                        }
                    default:  // C0 control character
                        raw("\u{FFFD}")
                    }
                    index += 1
                    start = index
                }
            }
        }
        if start < total { bytes(UnsafeBufferPointer(start: source + start, count: total - start)) }
    }

    mutating func value(_ value: borrowing XMLRPCValue) throws(XMLRPCFault) {
        switch value {
        case .string(let text):
            raw("<value><string>")
            escaped(text)
            raw("</string></value>")
        case .int(let number):
            raw("<value><int>")
            integer(Int64(widening: number))
            raw("</int></value>")
        case .i8(let number):
            raw("<value><i8>")
            integer(number)
            raw("</i8></value>")
        case .bool(let flag):
            raw(flag ? "<value><boolean>1</boolean></value>" : "<value><boolean>0</boolean></value>")
        case .double(let number):
            raw("<value><double>")
            var digits: [UInt8] = []
            guard XMLRPCEncoder.appendDouble(number, to: &digits) else { throw .internalError }
            bytes(digits)
            raw("</double></value>")
        case .dateTime(let date):
            raw("<value><dateTime.iso8601>")
            var digits: [UInt8] = []
            digits.reserveCapacity(17)
            date.appendISO8601(to: &digits)
            bytes(digits)
            raw("</dateTime.iso8601></value>")
        case .base64(let bytes):
            raw("<value><base64>")
            base64(bytes)
            raw("</base64></value>")
        case .array(let values):
            raw("<value><array><data>")
            try values.withUnsafeBufferPointer { (elements) throws(XMLRPCFault) in
                for index in elements.indices { try self.value(elements[index]) }
            }
            raw("</data></array></value>")
        case .structure(let members):
            raw("<value><struct>")
            try members.withUnsafeBufferPointer { (members) throws(XMLRPCFault) in
                for index in members.indices {
                    raw("<member><name>")
                    escaped(members[index].name)
                    if case .string(let text) = members[index].value {
                        // The common case, with fewer separate writes.
                        raw("</name><value><string>")
                        escaped(text)
                        raw("</string></value></member>")
                    } else {
                        raw("</name>")
                        try self.value(members[index].value)
                        raw("</member>")
                    }
                }
            }
            raw("</struct></value>")
        case .nil:
            raw("<value><nil/></value>")
        case .encoded(let encoded):
            bytes(encoded.bytes)
        }
    }

    mutating func base64(_ input: [UInt8]) {
        let alphabet = UnsafeBufferPointer(start: base64Alphabet.utf8Start, count: 64)
        let count = input.count
        reserve((count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= count {
            let chunk = UInt32(widening: input[index]) << 16 | UInt32(widening: input[index + 1]) << 8 | UInt32(widening: input[index + 2])
            byte(alphabet[Int(widening: chunk >> 18)])
            byte(alphabet[Int(widening: chunk >> 12 & 63)])
            byte(alphabet[Int(widening: chunk >> 6 & 63)])
            byte(alphabet[Int(widening: chunk & 63)])
            index += 3
        }
        switch count - index {
        case 1:
            let chunk = UInt32(widening: input[index]) << 16
            byte(alphabet[Int(widening: chunk >> 18)])
            byte(alphabet[Int(widening: chunk >> 12 & 63)])
            raw("==")
        case 2:
            let chunk = UInt32(widening: input[index]) << 16 | UInt32(widening: input[index + 1]) << 8
            byte(alphabet[Int(widening: chunk >> 18)])
            byte(alphabet[Int(widening: chunk >> 12 & 63)])
            byte(alphabet[Int(widening: chunk >> 6 & 63)])
            byte(UInt8(ascii: "="))
        default:
            break
        }
    }
}
