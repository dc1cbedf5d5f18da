import Foundation

/// Hours of the day, in a time zone, in which an app's devices are not shown alerts.
public struct QuietHours: Sendable, Hashable {
    /// Minutes after local midnight: quiet from `from` (included) to `to` (excluded); `from` after `to` spans midnight.
    public let from: Int
    public let to: Int
    public let timeZone: TimeZone

    /// `from` and `to` as `HH:mm`, `timeZoneID` an IANA name; nil when one is not, or they are equal.
    public init?(from: String, to: String, timeZoneID: String) {
        guard let start = Self.minutes(from), let end = Self.minutes(to), start != end,
              let zone = TimeZone(identifier: timeZoneID) else { return nil }
        self.from = start; self.to = end; self.timeZone = zone
    }

    /// Whether `time` (Unix seconds) falls in the quiet hours.
    public func contains(_ time: Int64) -> Bool {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute], from: Date(timeIntervalSince1970: TimeInterval(time)))
        let minute = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        return from < to ? (from <= minute && minute < to) : (minute >= from || minute < to)
    }

    /// `HH:mm` as minutes after midnight.
    static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) }),
              let hour = Int(parts[0]), let minute = Int(parts[1]), (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        return hour * 60 + minute
    }
}

/// An alert's texts before the issue is known: `{edition}`, `{publication}`, `{date}` (the day, long, in the
/// template's language) and `{iso_date}` (`yyyy-MM-dd`) are replaced.
public struct PushAlertTemplate: Sendable, Hashable {
    public var title: String
    public var body: String
    public init(title: String, body: String) { self.title = title; self.body = body }

    func render(_ text: String, language: String, issue: IssueRef, editionName: String, publicationName: String) -> String {
        let day = Date(timeIntervalSince1970: TimeInterval(issue.date.daysSinceEpoch) * 86_400)
        let long = day.formatted(Date.FormatStyle(date: .long, time: .omitted, locale: Locale(identifier: language),
                                                  timeZone: TimeZone(identifier: "UTC") ?? .current))
        return text.replacingOccurrences(of: "{edition}", with: editionName)
            .replacingOccurrences(of: "{publication}", with: publicationName)
            .replacingOccurrences(of: "{iso_date}", with: issue.date.description)
            .replacingOccurrences(of: "{date}", with: long)
    }
}

/// What one device is sent about an issue: an alert (its texts) and/or a background push.
public struct PushAnnouncement: Sendable, Hashable {
    public var title: String?
    public var body: String?
    public var background: Bool

    public init(title: String?, body: String?, background: Bool) {
        self.title = title; self.body = body; self.background = background
    }

    /// Whether it shows an alert.
    public var alerts: Bool { title != nil || body != nil }
}

/// How an app's devices hear of new issues, as its configuration (`apps[].push`) sets it.
public struct AppPushPolicy: Sendable, Hashable {
    /// Language code → texts; empty: no alert, a background push only.
    public var alerts: [String: PushAlertTemplate]
    /// The language of devices that named none, or one without texts; nil: the first code in order.
    public var defaultLanguage: String?
    /// Whether a background push wakes the app to fetch the issue.
    public var background: Bool
    public var quietHours: QuietHours?

    public init(alerts: [String: PushAlertTemplate], defaultLanguage: String? = nil, background: Bool, quietHours: QuietHours? = nil) {
        self.alerts = alerts; self.defaultLanguage = defaultLanguage; self.background = background; self.quietHours = quietHours
    }

    /// The language whose texts a device of `language` gets: its own, its primary subtag's (`ca` for `ca-es`),
    /// else the default.
    public func language(for language: String) -> String? {
        if alerts[language] != nil { return language }
        if let primary = language.split(separator: "-").first.map(String.init), alerts[primary] != nil { return primary }
        return defaultLanguage ?? alerts.keys.min()
    }

    /// What a device of `language` is sent when `event` (a publication or republication) reports `issue`, at
    /// `time`; nil: nothing. A republication and quiet hours send the background push only: a corrected issue
    /// is not news, and at night the app fetches the issue silently so that it is there in the morning.
    public func announcement(of type: EventType, issue: IssueRef, editionName: String, publicationName: String,
                             language: String, at time: Int64) -> PushAnnouncement? {
        let quiet = quietHours?.contains(time) ?? false
        guard type == .issuePublished, !quiet, let chosen = self.language(for: language), let template = alerts[chosen] else {
            return background ? PushAnnouncement(title: nil, body: nil, background: true) : nil
        }
        let render = { (text: String) -> String? in
            text.isEmpty ? nil : template.render(text, language: chosen, issue: issue, editionName: editionName, publicationName: publicationName)
        }
        return PushAnnouncement(title: render(template.title), body: render(template.body), background: background)
    }
}
