import Foundation
import KioskModels

/// The dashboard's chart of downloads per day, drawn on the server as SVG (no script, no library):
/// one bar per day of the period, a labelled axis, and a `<title>` per bar for screen readers and hover.
struct DownloadsChart {
    let days: [(day: IssueDate, downloads: Int)]

    /// Every day from `from` to `to`, with its downloads (0 for days without any).
    init(from: IssueDate, to: IssueDate, byDay: [IssueDate: Int]) {
        var days: [(IssueDate, Int)] = []
        var day = from
        while day <= to && days.count < 3660 {
            days.append((day, byDay[day] ?? 0))
            day = day.adding(days: 1)
        }
        self.days = days
    }

    func svg(title: String) -> String {
        let width = 720.0, height = 240.0, left = 44.0, bottom = 24.0, top = 10.0
        let peak = max(days.map(\.downloads).max() ?? 0, 1)
        let step = days.isEmpty ? 0 : (width - left) / Double(days.count)
        var svg = #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 720 240" role="img" aria-labelledby="chart-title" class="chart">"#
        svg += "<title id=\"chart-title\">\(Self.escape(title))</title>"
        svg += ##"<line x1="44" y1="216" x2="720" y2="216" stroke="#888"/>"##
        svg += "<text x=\"40\" y=\"\(top + 10)\" text-anchor=\"end\" font-size=\"11\">\(peak)</text>"
        svg += "<text x=\"40\" y=\"216\" text-anchor=\"end\" font-size=\"11\">0</text>"
        for (index, entry) in days.enumerated() {
            let barHeight = (height - bottom - top) * Double(entry.downloads) / Double(peak)
            let x = left + Double(index) * step
            svg += "<rect x=\"\(Self.format(x + step * 0.1))\" y=\"\(Self.format(height - bottom - barHeight))\" "
                + "width=\"\(Self.format(max(step * 0.8, 0.5)))\" height=\"\(Self.format(barHeight))\" fill=\"#0b57d0\">"
                + "<title>\(entry.day): \(entry.downloads)</title></rect>"
        }
        if let first = days.first, let last = days.last {
            svg += "<text x=\"44\" y=\"234\" font-size=\"11\">\(first.day)</text>"
            svg += "<text x=\"720\" y=\"234\" text-anchor=\"end\" font-size=\"11\">\(last.day)</text>"
        }
        return svg + "</svg>"
    }

    /// One decimal, cut toward zero.
    private static func format(_ value: Double) -> String { String((value * 10).rounded(.towardZero) / 10) }
    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
