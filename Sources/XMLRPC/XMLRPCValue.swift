// XML-RPC data model: values, members, date-times, faults, limits and calls.

import KioskIntegers
import NIOCore

/// One XML-RPC value. Structures keep their members in order; the encoder writes them in that order.
public enum XMLRPCValue: Sendable, Hashable {
    /// `<int>` / `<i4>`
    case int(Int32)
    /// `<i8>` / `<ex:i8>` (Apache extension)
    case i8(Int64)
    /// `<boolean>`
    case bool(Bool)
    /// `<string>` and untyped `<value>text</value>`
    case string(String)
    /// `<double>`
    case double(Double)
    /// `<dateTime.iso8601>`
    case dateTime(XMLRPCDateTime)
    /// `<base64>`
    case base64([UInt8])
    /// `<array>`
    case array([XMLRPCValue])
    /// `<struct>`, members in order
    case structure([XMLRPCMember])
    /// `<nil/>` / `<ex:nil/>` (extension)
    case `nil`
    /// A value encoded once and written as it is wherever it goes: answers kept between calls skip
    /// encoding. Never made by the decoder.
    case encoded(XMLRPCEncodedValue)
}

/// A value's `<value>…</value>` bytes, as `XMLRPCEncoder` writes them, and its type name.
public struct XMLRPCEncodedValue: Sendable, Hashable {
    public let bytes: ByteBuffer
    public let typeName: String

    /// Encodes `value`; throws -32603 for a non-finite double, as encoding a response does.
    public init(_ value: XMLRPCValue) throws(XMLRPCFault) {
        var writer = XMLWriter(capacity: value.encodedSizeEstimate)
        try writer.value(value)
        bytes = writer.finish()
        typeName = value.typeName
    }
}

/// One named member of an XML-RPC `<struct>`.
public struct XMLRPCMember: Sendable, Hashable {
    public var name: String
    public var value: XMLRPCValue

    @inlinable
    public init(_ name: String, _ value: XMLRPCValue) {
        self.name = name
        self.value = value
    }
}

extension XMLRPCValue {
    /// An integer as `.int` when it fits in 32 bits, else as `.i8`.
    @inlinable
    public static func integer(_ value: Int) -> XMLRPCValue {
        if let small = Int32(exactly: value) { return .int(small) }
        return .i8(Int64(widening: value))
    }

    /// The first member named `name`, for structures; nil otherwise.
    public subscript(name: String) -> XMLRPCValue? {
        guard case .structure(let members) = self else { return nil }
        for member in members where member.name == name { return member.value }
        return nil
    }

    /// The element at `index`, for arrays; nil otherwise or when out of range.
    public subscript(index: Int) -> XMLRPCValue? {
        guard case .array(let values) = self, values.indices.contains(index) else { return nil }
        return values[index]
    }

    /// The text of a `.string`.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The integer of an `.int` or `.i8`.
    public var intValue: Int? {
        switch self {
        case .int(let value): return Int(widening: value)
        case .i8(let value): return Int(exactly: value)
        default: return nil
        }
    }

    /// The elements of an `.array`.
    public var arrayValue: [XMLRPCValue]? {
        if case .array(let values) = self { return values }
        return nil
    }

    /// The members of a `.structure`.
    public var structureValue: [XMLRPCMember]? {
        if case .structure(let members) = self { return members }
        return nil
    }

    /// The XML-RPC type name used by introspection (`int`, `string`, `struct`, ...).
    public var typeName: String {
        switch self {
        case .int: return "int"
        case .i8: return "i8"
        case .bool: return "boolean"
        case .string: return "string"
        case .double: return "double"
        case .dateTime: return "dateTime.iso8601"
        case .base64: return "base64"
        case .array: return "array"
        case .structure: return "struct"
        case .nil: return "nil"
        case .encoded(let encoded): return encoded.typeName
        }
    }
}

extension XMLRPCValue: ExpressibleByStringLiteral {
    @inlinable
    public init(stringLiteral value: String) { self = .string(value) }
}

extension XMLRPCValue: ExpressibleByIntegerLiteral {
    @inlinable
    public init(integerLiteral value: Int32) { self = .int(value) }
}

extension XMLRPCValue: ExpressibleByFloatLiteral {
    @inlinable
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension XMLRPCValue: ExpressibleByBooleanLiteral {
    @inlinable
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension XMLRPCValue: ExpressibleByArrayLiteral {
    @inlinable
    public init(arrayLiteral elements: XMLRPCValue...) { self = .array(elements) }
}

extension XMLRPCValue: ExpressibleByDictionaryLiteral {
    /// Members in the order written.
    @inlinable
    public init(dictionaryLiteral elements: (String, XMLRPCValue)...) {
        self = .structure(elements.map { XMLRPCMember($0.0, $0.1) })
    }
}

// MARK: - Date-time

/// An XML-RPC `dateTime.iso8601` value: a calendar date and wall-clock time without a time zone.
public struct XMLRPCDateTime: Sendable, Hashable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int
    public let hour: Int
    public let minute: Int
    public let second: Int

    /// Validates every field (year 0...9999, a real calendar day, 00:00:00...23:59:59); nil if invalid.
    public init?(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        guard (0...9999).contains(year), (1...12).contains(month),
              day >= 1, day <= XMLRPCDateTime.daysIn(month: month, year: year),
              (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// Parses `19980717T14:08:55` or `1998-07-17T14:08:55`; nil if the text is anything else.
    public init?(_ text: String) {
        var text = text
        guard let parsed = text.withUTF8({ XMLRPCDateTime(bytes: $0) }) else { return nil }
        self = parsed
    }

    init?(bytes: UnsafeBufferPointer<UInt8>) {
        // 19980717T14:08:55 (17 bytes) or 1998-07-17T14:08:55 (19 bytes)
        let dashed: Bool
        switch bytes.count {
        case 17: dashed = false
        case 19: dashed = true
        default: return nil
        }
        func digits(_ start: Int, _ count: Int) -> Int? {
            var value = 0
            for index in start..<(start + count) {
                let digit = Int(widening: bytes[index]) &- 0x30
                guard digit >= 0, digit <= 9 else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        let dateEnd = dashed ? 10 : 8
        guard bytes[dateEnd] == UInt8(ascii: "T"),
              bytes[dateEnd + 3] == UInt8(ascii: ":"), bytes[dateEnd + 6] == UInt8(ascii: ":"),
              !dashed || (bytes[4] == UInt8(ascii: "-") && bytes[7] == UInt8(ascii: "-")),
              let year = digits(0, 4),
              let month = digits(dashed ? 5 : 4, 2),
              let day = digits(dashed ? 8 : 6, 2),
              let hour = digits(dateEnd + 1, 2),
              let minute = digits(dateEnd + 4, 2),
              let second = digits(dateEnd + 7, 2)
        else { return nil }
        self.init(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 1, 3, 5, 7, 8, 10, 12: return 31
        case 4, 6, 9, 11: return 30
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        default: return 0
        }
    }

    /// The wire form, e.g. `19980717T14:08:55`.
    public var iso8601: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(17)
        appendISO8601(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    public var description: String { iso8601 }

    func appendISO8601(to out: inout [UInt8]) {
        func put(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                out.append(UInt8(truncatingIfNeeded: 0x30 + rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        put(year, 4); put(month, 2); put(day, 2)
        out.append(UInt8(ascii: "T"))
        put(hour, 2); out.append(UInt8(ascii: ":"))
        put(minute, 2); out.append(UInt8(ascii: ":"))
        put(second, 2)
    }
}

// MARK: - Faults

/// An XML-RPC fault: a code and a message. Codes -32700...-32600 follow the
/// "specification for fault code interoperability".
public struct XMLRPCFault: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: Int
    public var message: String

    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }

    /// -32700: the body is not well-formed XML (or is refused before parsing).
    public static func notWellFormed(_ detail: String) -> Self {
        .init(code: -32700, message: "parse error: not well formed: \(detail)")
    }

    /// -32600: well-formed, but not a valid XML-RPC document.
    public static func invalidRequest(_ detail: String) -> Self {
        .init(code: -32600, message: "server error: invalid xml-rpc: \(detail)")
    }

    /// -32601: no method with that name.
    public static func methodNotFound(_ name: String) -> Self {
        .init(code: -32601, message: "unknown method \(name)")
    }

    /// -32602: a parameter is missing or wrong; the message names it.
    public static func invalidParameter(_ name: String, _ problem: String) -> Self {
        .init(code: -32602, message: "parameter \(name): \(problem)")
    }

    /// -32603: something failed inside the server; never carries details.
    public static let internalError = XMLRPCFault(code: -32603, message: "internal error")

    public var description: String { "fault \(code): \(message)" }
}

/// Errors a handler throws that know their fault (domain layers conform their own error types).
public protocol XMLRPCFaultConvertible: Error {
    var xmlrpcFault: XMLRPCFault { get }
}

// MARK: - Limits and calls

/// Bounds the decoder and the dispatcher enforce on hostile input.
public struct XMLRPCLimits: Sendable, Hashable {
    /// Maximum nesting of arrays and structs (a flat array of scalars has depth 1).
    public var maxDepth: Int
    /// Maximum number of XML elements in one document.
    public var maxElements: Int
    /// Maximum number of calls in one `system.multicall`.
    public var maxMulticallCalls: Int
    /// Maximum UTF-8 bytes in one text (string, base64 text, member or method name).
    public var maxStringBytes: Int
    /// Maximum attributes on one element (XML-RPC has none; namespace declarations count): refused
    /// before parsing, since libxml2's check of a tag's attributes is quadratic in their number.
    public var maxAttributes: Int

    public init(maxDepth: Int = 64, maxElements: Int = 200_000, maxMulticallCalls: Int = 100,
                maxStringBytes: Int = 1 << 20, maxAttributes: Int = 16) {
        self.maxDepth = maxDepth
        self.maxElements = maxElements
        self.maxMulticallCalls = maxMulticallCalls
        self.maxStringBytes = maxStringBytes
        self.maxAttributes = maxAttributes
    }
}

/// A decoded `<methodCall>`.
public struct XMLRPCCall: Sendable, Hashable {
    public var methodName: String
    public var params: [XMLRPCValue]

    public init(methodName: String, params: [XMLRPCValue] = []) {
        self.methodName = methodName
        self.params = params
    }
}

/// Method names accepted on the wire: ASCII letters, digits, `_ . : /`, 1...256 bytes.
func isValidMethodName(_ name: String) -> Bool {
    let utf8 = name.utf8
    guard !utf8.isEmpty, utf8.count <= 256 else { return false }
    for byte in utf8 {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"), UInt8(ascii: "/"):
            continue
        default:
            return false
        }
    }
    return true
}

extension XMLRPCValue {
    /// About the size of the value encoded (exact for an `.encoded` one; escapes not counted): the
    /// writer's first capacity, so that a large answer is not copied as its buffer grows.
    var encodedSizeEstimate: Int {
        switch self {
        case .int, .i8, .bool, .double, .dateTime, .nil: 48
        case .string(let text): 32 + text.utf8.count
        case .base64(let bytes): 40 + bytes.count / 3 * 4 + 4
        case .array(let values): values.reduce(48) { $0 + 16 + $1.encodedSizeEstimate }
        case .structure(let members): members.reduce(48) { $0 + 48 + $1.name.utf8.count + $1.value.encodedSizeEstimate }
        case .encoded(let encoded): encoded.bytes.readableBytes
        }
    }
}
