// Handler parameters with the lenient coercions old clients need.

import KioskIntegers

/// The parameters of one call, read by position with lenient coercion. Every failure is a -32602
/// fault whose message names the parameter.
public struct XMLRPCParameters: Sendable, Hashable {
    public let values: [XMLRPCValue]

    public init(_ values: [XMLRPCValue]) {
        self.values = values
    }

    public var count: Int { values.count }

    /// The raw value at `index`, or nil when absent.
    public func value(_ index: Int) -> XMLRPCValue? {
        values.indices.contains(index) ? values[index] : nil
    }

    /// A string; an int is accepted as its decimal text; absent or nil is "" (an absent optional
    /// trailing parameter is empty).
    public func string(_ index: Int, _ name: String) throws(XMLRPCFault) -> String {
        switch value(index) {
        case .string(let text)?: return text
        case .int(let number)?: return String(number)
        case .i8(let number)?: return String(number)
        case nil, .nil?: return ""
        case let other?: throw .invalidParameter(name, "expected a string, got \(other.typeName)")
        }
    }

    /// An integer from `int`/`i4`/`i8`, or from a string holding an optionally signed decimal integer
    /// (surrounding white space ignored). Absent, nil or "" gives `default` when there is one, else a
    /// "missing" fault; a value outside `range` is a fault naming the range.
    public func int(_ index: Int, _ name: String, default defaultValue: Int? = nil,
                    in range: ClosedRange<Int>? = nil) throws(XMLRPCFault) -> Int {
        let number: Int
        switch value(index) {
        case .int(let value)?:
            number = Int(widening: value)
        case .i8(let value)?:
            guard let value = Int(exactly: value) else { throw .invalidParameter(name, "integer out of range") }
            number = value
        case .string(let text)?:
            var text = text
            let parsed: Int64?? = text.withUTF8 { bytes -> Int64?? in
                var start = 0
                var end = bytes.count
                while start < end, isSpace(bytes[start]) { start += 1 }
                while end > start, isSpace(bytes[end - 1]) { end -= 1 }
                if start == end { return .some(nil) }  // empty: treated as absent
                guard let number = parseInteger(UnsafeBufferPointer(rebasing: bytes[start..<end]), limit: .max)
                else { return nil }  // malformed
                return .some(number)
            }
            switch parsed {
            case .none:
                throw .invalidParameter(name, "expected an integer, got \"\(Self.excerpt(text))\"")
            case .some(.none):
                guard let defaultValue else { throw .invalidParameter(name, "missing") }
                return defaultValue
            case .some(.some(let value)):
                guard let value = Int(exactly: value) else {
                    throw .invalidParameter(name, "integer out of range")
                }
                number = value
            }
        case nil, .nil?:
            guard let defaultValue else { throw .invalidParameter(name, "missing") }
            return defaultValue
        case let other?:
            throw .invalidParameter(name, "expected an integer, got \(other.typeName)")
        }
        if let range, !range.contains(number) {
            throw .invalidParameter(name, "\(number) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    /// A struct's members; absent, nil, "" and an empty array (what some clients send for an empty
    /// associative array) are an empty struct.
    public func structure(_ index: Int, _ name: String) throws(XMLRPCFault) -> [XMLRPCMember] {
        switch value(index) {
        case .structure(let members)?: return members
        case nil, .nil?: return []
        case .string(let text)? where text.isEmpty: return []
        case .array(let values)? where values.isEmpty: return []
        case let other?: throw .invalidParameter(name, "expected a struct, got \(other.typeName)")
        }
    }

    private static func excerpt(_ text: String) -> String {
        text.count > 40 ? String(text.prefix(40)) + "…" : text
    }
}

@inline(__always)
private func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
}
