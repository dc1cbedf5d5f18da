// The scalar grammar of XML-RPC values, read straight from the bytes libxml2 hands over.

import CLibXML2
import KioskIntegers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

func trimBlanks(_ text: inout String) {
    let utf8 = text.utf8
    guard let first = utf8.first, let last = utf8.last else { return }
    func blank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
    guard blank(first) || blank(last) else { return }
    let start = utf8.firstIndex { !blank($0) } ?? utf8.endIndex
    let end = utf8.lastIndex { !blank($0) }.map { utf8.index(after: $0) } ?? start
    text = start < end ? String(text[start..<end]) : ""
}

/// An optionally signed run of ASCII digits, nothing else; nil when malformed or beyond ±`limit`
/// (the negative side allows `-limit - 1`; `limit` is 0 or more).
func parseInteger(_ bytes: UnsafeBufferPointer<UInt8>, limit: Int64) -> Int64? {
    var index = 0
    var negative = false
    if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
        negative = first == UInt8(ascii: "-")
        index = 1
    }
    guard index < bytes.count else { return nil }
    var magnitude: UInt64 = 0
    let bound = limit.magnitude + (negative ? 1 : 0)   // at most 2^63: no overflow
    while index < bytes.count {
        let digit = bytes[index] &- 0x30
        guard digit <= 9 else { return nil }
        let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
        let (sum, overflow2) = times10.addingReportingOverflow(UInt64(widening: digit))
        guard !overflow1, !overflow2, sum <= bound else { return nil }
        magnitude = sum
        index += 1
    }
    guard let value = Int64(exactly: magnitude) else {
        return negative && magnitude == Int64.min.magnitude ? Int64.min : nil
    }
    return negative ? -value : value
}

/// `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?`, finite; nil otherwise.
func parseDouble(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
    var index = 0
    let count = bytes.count
    func isDigit(_ at: Int) -> Bool { at < count && bytes[at] &- 0x30 <= 9 }
    if index < count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
    var digits = 0
    while isDigit(index) { index += 1; digits += 1 }
    if index < count, bytes[index] == UInt8(ascii: ".") {
        index += 1
        while isDigit(index) { index += 1; digits += 1 }
    }
    guard digits > 0 else { return nil }
    if index < count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
        index += 1
        if index < count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard isDigit(index) else { return nil }
        while isDigit(index) { index += 1 }
    }
    guard index == count, count <= 1100 else { return nil }
    guard let value = Double(String(decoding: bytes, as: UTF8.self)), value.isFinite else { return nil }
    return value
}

let base64DecodeTable: [UInt8] = {
    var table = [UInt8](repeating: 0xFF, count: 256)
    for (value, byte) in zip(UInt8(0)..., "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8) {
        table[Int(widening: byte)] = value
    }
    return table
}()

/// Standard alphabet; white space ignored; padding required and validated.
func decodeBase64(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
    var output: [UInt8] = []
    output.reserveCapacity(bytes.count / 4 * 3 + 3)
    var accumulator: UInt32 = 0
    var pending = 0
    var padding = 0
    return base64DecodeTable.withUnsafeBufferPointer { table -> [UInt8]? in
        for byte in bytes {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                continue
            case UInt8(ascii: "="):
                guard pending >= 2, pending + padding < 4 else { return nil }
                padding += 1
            default:
                let sextet = table[Int(widening: byte)]
                guard sextet != 0xFF, padding == 0 else { return nil }
                accumulator = accumulator << 6 | UInt32(widening: sextet)
                pending += 1
                if pending == 4 {
                    output.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                    output.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                    output.append(UInt8(truncatingIfNeeded: accumulator))
                    accumulator = 0
                    pending = 0
                }
            }
        }
        switch (pending, padding) {
        case (0, 0):
            break
        case (2, 2):
            output.append(UInt8(truncatingIfNeeded: accumulator >> 4))
        case (3, 1):
            output.append(UInt8(truncatingIfNeeded: accumulator >> 10))
            output.append(UInt8(truncatingIfNeeded: accumulator >> 2))
        default:
            return nil
        }
        return output
    }
}
