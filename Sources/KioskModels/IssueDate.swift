import KioskIntegers

/// A calendar day written `YYYY-MM-DD`, the way every date travels on the wire and in the database.
///
/// Only real days are accepted (`2025-02-29` is not one). The text form orders like the days, so
/// comparisons and SQL `ORDER BY` agree.
public struct IssueDate: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// The first and last days a date can name: four-digit years only.
    public static let earliest = IssueDate(checkedYear: 1, month: 1, day: 1)
    public static let latest = IssueDate(checkedYear: 9999, month: 12, day: 31)

    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month),
              (1...IssueDate.daysIn(month: month, year: year)).contains(day)
        else { return nil }
        self.init(checkedYear: year, month: month, day: day)
    }

    /// Components already known to name a real day in 1...9999.
    private init(checkedYear year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses exactly `YYYY-MM-DD`.
    public init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(widening: byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10) else { return nil }
        self.init(year: year, month: month, day: day)
    }

    public var description: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public static func < (lhs: IssueDate, rhs: IssueDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    /// Days since 1970-01-01 (negative before), for day arithmetic without Foundation.
    public var daysSinceEpoch: Int {
        // Howard Hinnant's days_from_civil.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The day `daysSinceEpoch` days after 1970-01-01, held to `earliest...latest` (a count outside
    /// gives the nearest of the two).
    public init(daysSinceEpoch days: Int) {
        guard days > Self.earliestDays else { self = .earliest; return }
        guard days < Self.latestDays else { self = .latest; return }
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        self.year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        self.month = month
        self.day = day
    }

    /// `earliest` and `latest` as days since 1970-01-01.
    private static let earliestDays = -719_162
    private static let latestDays = 2_932_896

    /// The UTC day of a Unix time (held to `earliest...latest`).
    public init(unixTime seconds: Int64) {
        let days = seconds / 86_400
        self.init(daysSinceEpoch: Int(clamping: days) - (seconds % 86_400 < 0 ? 1 : 0))
    }

    /// The day `days` days later (earlier when negative), held to `earliest...latest`.
    public func adding(days: Int) -> IssueDate {
        let (sum, overflow) = daysSinceEpoch.addingReportingOverflow(days)
        return overflow ? (days < 0 ? .earliest : .latest) : IssueDate(daysSinceEpoch: sum)
    }

    /// The first day of the month after this day's, nil in December 9999.
    public var firstOfNextMonth: IssueDate? {
        month == 12 ? IssueDate(year: year + 1, month: 1, day: 1) : IssueDate(year: year, month: month + 1, day: 1)
    }

    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let date = IssueDate(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "expected a date YYYY-MM-DD, got \"\(text)\""))
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// A calendar month of issues, `YYYY-MM` in URLs: the archive's page.
public struct IssueMonth: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int

    public init(_ date: IssueDate) { year = date.year; month = date.month }

    /// Parses exactly `YYYY-MM`, years 1...9999.
    public init?(_ text: some StringProtocol) {
        guard text.utf8.count == 7, let date = IssueDate(text + "-01") else { return nil }
        self.init(date)
    }

    public var first: IssueDate { IssueDate(year: year, month: month, day: 1) ?? .earliest }
    public var last: IssueDate {
        IssueDate(year: year, month: month, day: IssueDate.daysIn(month: month, year: year)) ?? .latest
    }
    /// The days of the month.
    public var days: DayPeriod { DayPeriod(first: first, last: last) ?? DayPeriod.all }
    public func contains(_ date: IssueDate) -> Bool { date.year == year && date.month == month }
    public var description: String { String(first.description.prefix(7)) }
    public static func < (lhs: IssueMonth, rhs: IssueMonth) -> Bool { (lhs.year, lhs.month) < (rhs.year, rhs.month) }
}

/// A run of whole UTC days, `first` through `last`, never empty: the only way a period given by a
/// reader or an operator (two dates) becomes something to query.
public struct DayPeriod: Sendable, Hashable {
    public let first: IssueDate
    public let last: IssueDate

    /// Nil when `last` is before `first`.
    public init?(first: IssueDate, last: IssueDate) {
        guard first <= last else { return nil }
        self.first = first; self.last = last
    }

    /// Every day a date can name.
    public static let all = DayPeriod(uncheckedFirst: .earliest, last: .latest)
    private init(uncheckedFirst first: IssueDate, last: IssueDate) { self.first = first; self.last = last }

    /// How many days it holds (at least 1).
    public var dayCount: Int { last.daysSinceEpoch - first.daysSinceEpoch + 1 }

    /// The Unix seconds it covers: from its first second to the second after its last.
    public var seconds: Range<Int64> {
        Int64(widening: first.daysSinceEpoch) * 86_400 ..< Int64(widening: last.daysSinceEpoch + 1) * 86_400
    }

    public func contains(_ date: IssueDate) -> Bool { first <= date && date <= last }
}
