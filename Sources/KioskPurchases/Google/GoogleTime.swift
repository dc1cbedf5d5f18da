import Foundation
import KioskIntegers

/// Google's two ways of writing a time: RFC 3339 text (`2026-11-27T10:15:30.123456Z`) in the newer APIs,
/// milliseconds since 1970 (as a JSON string or number) in the older ones and in notifications.
enum GoogleTime {
    /// An RFC 3339 date-time with `Z` or a numeric offset and any number of fraction digits (nanoseconds
    /// kept at most); nil for anything else, an impossible date included.
    static func rfc3339(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<(index + digits)] {
                guard let digit = digitValue(byte) else { return nil }
                value = value * 10 + digit
            }
            index += digits
            return value
        }
        func expect(_ allowed: String) -> Bool {
            guard index < bytes.count, allowed.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            expect("Tt"), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
            let second = number(2)
        else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second <= 60
        else { return nil }

        var nanoseconds = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, let digit = digitValue(bytes[index]) {
                if digits < 9 {
                    nanoseconds = nanoseconds * 10 + digit
                }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 9) { nanoseconds *= 10 }
        }

        var offsetSeconds = 0
        if expect("Zz") {
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let offsetHours = number(2), expect(":"), let offsetMinutes = number(2),
                offsetHours < 24, offsetMinutes < 60
            else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }

        let days = daysSince1970(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1_000_000_000)
    }

    /// Milliseconds since 1970 as decimal text; nil when not a whole number.
    static func milliseconds(_ text: String) -> Date? {
        guard let value = Int64(text) else { return nil }
        return milliseconds(value)
    }

    static func milliseconds(_ value: Int64) -> Date {
        Date(timeIntervalSince1970: Double(value) / 1000)
    }

    private static func digitValue(_ byte: UInt8) -> Int? {
        let zero = UInt8(ascii: "0")
        guard byte >= zero, byte <= UInt8(ascii: "9") else { return nil }
        return Int(widening: byte - zero)
    }

    private static func isLeap(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (years 0...9999 here).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

extension KeyedDecodingContainer {
    /// An RFC 3339 time, nil when the key is absent; a present value that is not one fails the decoding.
    func decodeGoogleTime(forKey key: Key) throws -> Date? {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let date = GoogleTime.rfc3339(text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not an RFC 3339 time")
        }
        return date
    }

    /// A 64-bit integer written as a JSON string (Google's int64 encoding) or number; nil when absent.
    func decodeGoogleInt64(forKey key: Key) throws -> Int64? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let number = try? decode(Int64.self, forKey: key) {
            return number
        }
        guard let value = Int64(try decode(String.self, forKey: key)) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not a whole number")
        }
        return value
    }

    /// Milliseconds since 1970, as a JSON string or number; nil when absent.
    func decodeGoogleMilliseconds(forKey key: Key) throws -> Date? {
        try decodeGoogleInt64(forKey: key).map(GoogleTime.milliseconds)
    }
}
