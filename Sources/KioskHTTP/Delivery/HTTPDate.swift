import KioskIntegers
import KioskModels

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) without Foundation.
package enum HTTPDate {
    package static func format(seconds: Int64) -> String {
        let day = IssueDate(unixTime: seconds)
        let secondsOfDay = Int(widening: seconds - Int64(widening: day.daysSinceEpoch) * 86_400)
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]   // 1970-01-01 was a Thursday
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let weekday = weekdays[((day.daysSinceEpoch % 7) + 7) % 7]
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(weekday), \(two(day.day)) \(months[day.month - 1]) \(day.year) "
            + "\(two(secondsOfDay / 3600)):\(two(secondsOfDay / 60 % 60)):\(two(secondsOfDay % 60)) GMT"
    }
}
