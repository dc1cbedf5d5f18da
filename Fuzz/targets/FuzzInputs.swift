// libFuzzer target: what the web pages build from their date, month and period parameters, and the
// search excerpt's escaping. Input: a mode byte, then text.
//   0: a month (`mes=`, "YYYY-MM"): if it parses, its first and last days, its period and its neighbours
//      make sense and it prints back as it was read.
//   1: a day ("YYYY-MM-DD"; dashboard `from`/`to`, issue pages): parse, print back, step by any number of
//      days (the next 8 bytes) without leaving the calendar, and from a day count and a Unix time.
//   2: a period "FROM TO": built only when FROM <= TO; its day count and seconds agree.
//   3: an engine's marked excerpt: the HTML has no `<`, `>` or `&` outside Kiosk's own `<b>`, `</b>`
//      and its three entities.
import KioskModels

private func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError(message()) }
}

private func int64(_ bytes: ArraySlice<UInt8>) -> Int64 {
    bytes.prefix(8).reduce(Int64(0)) { ($0 << 8) | Int64($1) }
}

private func checkDay(_ day: IssueDate) {
    check(IssueDate.earliest <= day && day <= IssueDate.latest, "\(day) outside the calendar")
    check(IssueDate(day.description) == day, "\(day) does not print back")
    check(IssueDate(daysSinceEpoch: day.daysSinceEpoch) == day, "\(day) does not survive its day count")
}

private func month(_ text: String) {
    guard let month = IssueMonth(text) else { return }
    check(month.first <= month.last, "\(month): first after last")
    check(month.contains(month.first) && month.contains(month.last), "\(month): its own days outside it")
    check(month.days.dayCount == IssueDate.daysIn(month: month.month, year: month.year), "\(month): day count")
    check(IssueMonth(month.description) == month, "\(month) does not print back")
    checkDay(month.first); checkDay(month.last)
    _ = month.first.firstOfNextMonth
}

private func day(_ text: String, _ step: Int64) {
    guard let day = IssueDate(text) else { return }
    checkDay(day)
    let moved = day.adding(days: Int(truncatingIfNeeded: step))
    checkDay(moved)
    checkDay(IssueDate(daysSinceEpoch: Int(truncatingIfNeeded: step)))
    checkDay(IssueDate(unixTime: step))
}

private func period(_ text: String) {
    let parts = text.split(separator: " ", maxSplits: 1)
    guard parts.count == 2, let first = IssueDate(parts[0]), let last = IssueDate(parts[1]) else { return }
    guard let period = DayPeriod(first: first, last: last) else {
        check(first > last, "\(first)…\(last) refused though in order")
        return
    }
    check(first <= last, "\(first)…\(last) built backwards")
    check(period.dayCount >= 1 && period.contains(first) && period.contains(last), "\(first)…\(last): bounds")
    check(period.seconds.lowerBound < period.seconds.upperBound, "\(first)…\(last): empty seconds")
    check(Int64(period.dayCount) * 86_400 == period.seconds.upperBound - period.seconds.lowerBound, "\(first)…\(last): seconds")
}

private func excerpt(_ text: String) {
    let html = PageText.fragment(fromMarked: text)
    var rest = Substring(html)
    let allowed = ["<b>", "</b>", "&amp;", "&lt;", "&gt;"]
    while let index = rest.unicodeScalars.firstIndex(where: { $0 == "<" || $0 == ">" || $0 == "&" }) {
        let tail = rest[index...]
        guard let token = allowed.first(where: { tail.unicodeScalars.starts(with: $0.unicodeScalars) }) else {
            fatalError("markup in the excerpt \(html.debugDescription) of \(text.debugDescription)")
        }
        rest = tail.dropFirst(token.count)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 1 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let mode = bytes[0] % 4
    switch mode {
    case 0: month(String(decoding: bytes.dropFirst(), as: UTF8.self))
    case 1: day(String(decoding: bytes.dropFirst(9), as: UTF8.self), int64(bytes.dropFirst()))
    case 2: period(String(decoding: bytes.dropFirst(), as: UTF8.self))
    default: excerpt(String(decoding: bytes.dropFirst(), as: UTF8.self))
    }
    return 0
}
