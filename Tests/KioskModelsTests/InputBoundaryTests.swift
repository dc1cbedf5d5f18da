import Foundation
import KioskModels
import KioskStoreSupport
import Testing

/// Values built from what a request carries: days, months, periods, search excerpts. None of them may
/// trap, whatever the input, and each refusal is a nil the caller turns into a clear error.
@Suite struct InputBoundaryTests {
    @Test func monthsOfEveryFourDigitYearHaveAFirstAndLastDay() throws {
        for text in ["0001-01", "9999-12", "2024-02", "2025-02", "1900-02", "2000-02"] {
            let month = try #require(IssueMonth(text), "\(text)")
            #expect(month.first.day == 1 && month.first.description.hasPrefix(text))
            #expect(month.last.description.hasPrefix(text) && month.last.adding(days: 1).month != month.month
                    || month.last == .latest)
            #expect(month.description == text)
            #expect(month.days.dayCount == IssueDate.daysIn(month: month.month, year: month.year))
        }
        #expect(IssueMonth("2024-02")?.last.description == "2024-02-29")
        #expect(IssueMonth("9999-12")?.last == .latest, "the month that trapped: its next month is year 10000")
        for text in ["10000-01", "0000-01", "9999-13", "2025-00", "2025-1", "-001-01", "2025-01-01", "", "２０２５-０１",
                     "2025-0\u{301}1", "9999-99", "+999-12"] {
            #expect(IssueMonth(text) == nil, "\(text)")
        }
    }

    @Test func dayArithmeticStaysInsideTheCalendar() {
        #expect(IssueDate.latest.adding(days: 1) == .latest)
        #expect(IssueDate.earliest.adding(days: -1) == .earliest)
        #expect(IssueDate.latest.adding(days: .max) == .latest)
        #expect(IssueDate.earliest.adding(days: .min) == .earliest)
        #expect(IssueDate(daysSinceEpoch: .max) == .latest && IssueDate(daysSinceEpoch: .min) == .earliest)
        #expect(IssueDate(unixTime: .max) == .latest && IssueDate(unixTime: .min) == .earliest)
        #expect(IssueDate(unixTime: -1).description == "1969-12-31" && IssueDate(unixTime: 0).description == "1970-01-01")
        #expect(IssueDate.earliest.description == "0001-01-01" && IssueDate.latest.description == "9999-12-31")
        #expect(IssueDate(daysSinceEpoch: IssueDate.latest.daysSinceEpoch) == .latest)
        #expect(IssueDate(daysSinceEpoch: IssueDate.earliest.daysSinceEpoch) == .earliest)
        // Every day round-trips through its count and its text, at both ends of the calendar and around now.
        for start in [IssueDate.earliest, IssueDate(year: 2024, month: 12, day: 1)!, IssueDate.latest.adding(days: -800)] {
            var day = start
            for _ in 0..<800 {
                #expect(IssueDate(daysSinceEpoch: day.daysSinceEpoch) == day)
                #expect(IssueDate(day.description) == day)
                day = day.adding(days: 1)
            }
        }
    }

    @Test func aPeriodIsNeverBackwards() throws {
        let june1 = IssueDate(year: 2025, month: 6, day: 1)!, june3 = IssueDate(year: 2025, month: 6, day: 3)!
        #expect(DayPeriod(first: june3, last: june1) == nil, "from=2025-06-03&to=2025-06-01 trapped the dashboard")
        let period = try #require(DayPeriod(first: june1, last: june3))
        #expect(period.dayCount == 3 && period.seconds.count == 3 * 86_400)
        #expect(try #require(DayPeriod(first: june1, last: june1)).dayCount == 1)
        #expect(DayPeriod.all.dayCount == IssueDate.latest.daysSinceEpoch - IssueDate.earliest.daysSinceEpoch + 1)
        #expect(DayPeriod.all.seconds.lowerBound < 0 && DayPeriod.all.seconds.upperBound > 0)
    }

    // MARK: Search excerpts

    /// Scalars that join a neighbour into one grapheme cluster (prepended marks, combining marks,
    /// joiners, variation selectors, regional indicators, Hangul jamo), and the markup characters.
    static let joiners: [Unicode.Scalar] = [
        "\u{0600}", "\u{0601}", "\u{06DD}", "\u{070F}", "\u{0890}", "\u{08E2}", "\u{110BD}", "\u{110CD}", "\u{111C2}",
        "\u{0301}", "\u{0308}", "\u{20DD}", "\u{20E3}", "\u{0489}", "\u{1AB0}", "\u{FE20}", "\u{200D}", "\u{200C}",
        "\u{FE0F}", "\u{E0100}", "\u{1F1E6}", "\u{1F1F8}", "\u{1100}", "\u{1161}", "\u{11A8}", "\u{094D}", "\u{0E31}",
        "\u{1F3FB}", "\u{0D4E}",
    ]
    static let markup: [Unicode.Scalar] = ["<", ">", "&", "\"", "'", "/", "=", "\r", "\n", " ", "\t", "\u{85}", "\u{2028}",
                                           PageText.matchStart, PageText.matchEnd]
    static let plain: [Unicode.Scalar] = ["a", "é", "Ç", "1", ";", "#", "x", "\u{1F600}", "ß", "İ"]

    /// No `<`, `>` or `&` is left once Kiosk's own tags and entities are taken out, and the text comes back
    /// when the entities are undone: for generated texts that mix markup with every kind of joiner.
    @Test func excerptsEscapeMarkupWhateverJoinsIt() {
        var generator = SeededGenerator(seed: 0x4B494F534B)
        let pool = Self.joiners + Self.markup + Self.plain
        var texts = [
            "\u{0600}<img src=x onerror=alert(1)>", "<\u{0301}meta http-equiv=refresh content=0;url=//evil>",
            "\u{110BD}<b>&amp;", "a<\u{20DD}>&\u{200D}lt;", "\u{2}<\u{0301}script\u{3}>",
        ]
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...24, using: &generator)
            var scalars = String.UnicodeScalarView()
            for _ in 0..<length { scalars.append(pool.randomElement(using: &generator) ?? "a") }
            texts.append(String(scalars))
        }
        for text in texts {
            let html = PageText.fragment(fromMarked: text)
            let stripped = html.replacingAll("<b>", "").replacingAll("</b>", "")
                .replacingAll("&amp;", "").replacingAll("&lt;", "").replacingAll("&gt;", "")
            #expect(!stripped.unicodeScalars.contains { $0 == "<" || $0 == ">" || $0 == "&" },
                    "markup left in \(html.unicodeScalars.map { String($0.value, radix: 16) }) from \(text.unicodeScalars.map { String($0.value, radix: 16) })")
            let unescaped = html.replacingAll("<b>", "").replacingAll("</b>", "")
                .replacingAll("&lt;", "<").replacingAll("&gt;", ">").replacingAll("&amp;", "&")
            let expected = Self.collapsed(text)
            #expect(Array(unescaped.unicodeScalars) == Array(expected.unicodeScalars), "text lost or changed from \(text.debugDescription)")
        }
    }

    /// The input as an excerpt shows it: marks dropped, runs of white space as one space (none before
    /// the first thing shown, a highlight's start included, and none at the end).
    static func collapsed(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        var pending = false, shown = false, open = false
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace { pending = shown; continue }
            if pending { result.append(" "); pending = false }
            switch scalar {
            case PageText.matchStart: if !open { open = true; shown = true }
            case PageText.matchEnd: if open { open = false }
            default: result.append(scalar); shown = true
            }
        }
        return String(result)
    }
}

/// A small deterministic generator (SplitMix64), so a failing text can be found again.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension String {
    /// Every occurrence of `target`, compared by Unicode scalars (not by grapheme clusters), replaced.
    func replacingAll(_ target: String, _ replacement: String) -> String {
        let source = Array(unicodeScalars), pattern = Array(target.unicodeScalars)
        var result = String.UnicodeScalarView()
        var index = 0
        while index < source.count {
            if index + pattern.count <= source.count, Array(source[index..<index + pattern.count]) == pattern {
                result.append(contentsOf: replacement.unicodeScalars)
                index += pattern.count
            } else {
                result.append(source[index])
                index += 1
            }
        }
        return String(result)
    }
}

/// The listings record any `idenkey` an app sends: bounded per app and day.
@Suite struct ActivityLogLimitTests {
    final class Written: @unchecked Sendable {
        private let lock = NSLock()
        private var rows: [IdentitySighting] = []
        func add(_ batch: [IdentitySighting]) { lock.withLock { rows += batch } }
        var count: Int { lock.withLock { rows.count } }
    }

    @Test func eachAppRecordsAtMostItsDailyLimitAndCountsTheRest() async throws {
        let written = Written()
        let log = ActivityLog { written.add($0) }
        let limit = ActivityLog.perAppDayLimit
        var outcomes: [SightingOutcome: Int] = [:]
        for index in 0..<(limit + 500) {
            outcomes[log.record(IdentitySighting(day: 20_000, appKey: "quiosc", identityKey: "key-\(index)")), default: 0] += 1
        }
        #expect(outcomes[.queued] == limit && outcomes[.overLimit] == 500)
        #expect(log.record(IdentitySighting(day: 20_000, appKey: "quiosc", identityKey: "key-1")) == .known)
        #expect(log.record(IdentitySighting(day: 20_000, appKey: "presencia", identityKey: "key-1")) == .queued, "per app")
        #expect(log.record(IdentitySighting(day: 20_001, appKey: "quiosc", identityKey: "fresh")) == .queued, "per day")
        for _ in 0..<200 where written.count < limit + 2 { try await Task.sleep(for: .milliseconds(50)) }
        #expect(written.count == limit + 2)
    }
}
