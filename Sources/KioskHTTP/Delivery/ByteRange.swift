import Foundation

/// A single `Range: bytes=` range (RFC 9110 §14.1.2).
package enum ByteRange: Equatable {
    /// Malformed, several ranges, or a unit other than bytes: serve the whole file.
    case none
    /// No byte of the range exists: `416`.
    case unsatisfiable
    case range(ClosedRange<Int64>)

    package static func parse(_ header: String, size: Int64) -> ByteRange {
        let value = header.trimmingCharacters(in: .whitespaces)
        guard value.lowercased().hasPrefix("bytes=") else { return .none }
        let spec = value.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .none }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        func number(_ text: String) -> Int64? {
            guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return Int64(text, radix: 10)
        }
        if first.isEmpty {
            // Suffix range: the last N bytes.
            guard let count = number(last) else { return .none }
            guard count > 0, size > 0 else { return .unsatisfiable }
            return .range(max(0, size - count)...(size - 1))
        }
        guard let start = number(first) else { return .none }
        let end: Int64
        if last.isEmpty {
            end = size - 1
        } else {
            guard let value = number(last), value >= start else { return .none }
            end = min(value, size - 1)
        }
        guard start < size else { return .unsatisfiable }
        return .range(start...end)
    }
}
