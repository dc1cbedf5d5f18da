import Foundation
import KioskModels
import Testing

/// The push rules below the wire: token shapes, quiet hours across midnight and time zones, which texts a
/// device gets, and what a publication, a republication and quiet hours send.
@Suite struct PushRulesTests {
    @Test func tokenShapes() {
        func accepted(_ token: String, _ platform: PushPlatform) -> Bool {
            (try? PushRegistrationRules.checkToken(token, platform: platform)) != nil
        }
        #expect(accepted(String(repeating: "aB", count: 32), .apns))
        #expect(accepted(String(repeating: "a", count: 200), .apns))
        #expect(!accepted(String(repeating: "a", count: 63), .apns) && !accepted(String(repeating: "a", count: 201), .apns))
        #expect(!accepted(String(repeating: "g", count: 64), .apns))
        #expect(accepted("x", .fcm) && accepted(String(repeating: "x", count: 4096), .fcm))
        #expect(!accepted("", .fcm) && !accepted(String(repeating: "x", count: 4097), .fcm))
        #expect(!accepted("a b", .fcm) && !accepted("é", .fcm) && !accepted("a\u{7F}", .fcm))
        #expect(PushRegistrationRules.normalized("ABCDEF", platform: .apns) == "abcdef")
        #expect(PushRegistrationRules.normalized("AbC", platform: .fcm) == "AbC")
        #expect(PushPlatform(wire: "APNs") == .apns && PushPlatform(wire: "sms") == nil)
    }

    @Test func quietHoursSpanMidnightInTheirTimeZone() throws {
        let night = try #require(QuietHours(from: "23:00", to: "06:30", timeZoneID: "Europe/Madrid"))
        // 2025-06-01 is summer time in Madrid: UTC+2.
        let utc = { (hour: Int64, minute: Int64) in Int64(1_748_736_000) + hour * 3_600 + minute * 60 }   // 2025-06-01 00:00 UTC
        #expect(night.contains(utc(21, 0)), "23:00 in Madrid")
        #expect(night.contains(utc(2, 0)), "04:00 in Madrid")
        #expect(night.contains(utc(4, 29)), "06:29 in Madrid")
        #expect(!night.contains(utc(4, 30)), "06:30 in Madrid: over")
        #expect(!night.contains(utc(20, 59)), "22:59 in Madrid")
        let noon = try #require(QuietHours(from: "12:00", to: "13:00", timeZoneID: "UTC"))
        #expect(noon.contains(utc(12, 30)) && !noon.contains(utc(13, 0)) && !noon.contains(utc(11, 59)))
        #expect(QuietHours(from: "23:00", to: "23:00", timeZoneID: "UTC") == nil)
        #expect(QuietHours(from: "24:00", to: "06:00", timeZoneID: "UTC") == nil)
        #expect(QuietHours(from: "7:00", to: "08:00", timeZoneID: "UTC") == nil)
        #expect(QuietHours(from: "07:00", to: "08:00", timeZoneID: "Nowhere/Else") == nil)
    }

    @Test func announcements() throws {
        let policy = AppPushPolicy(
            alerts: ["ca": PushAlertTemplate(title: "{publication}: {edition}", body: "{iso_date}"),
                     "es": PushAlertTemplate(title: "", body: "Número del {iso_date}")],
            defaultLanguage: "ca", background: true,
            quietHours: QuietHours(from: "00:00", to: "06:00", timeZoneID: "UTC"))
        let issue = IssueRef(editionID: 1, date: try #require(IssueDate("2025-06-02")))
        let day: Int64 = 1_748_779_200   // 2025-06-01 12:00 UTC
        func announce(_ type: EventType, _ language: String, at time: Int64 = day) -> PushAnnouncement? {
            policy.announcement(of: type, issue: issue, editionName: "Nacional", publicationName: "El Punt", language: language, at: time)
        }
        #expect(announce(.issuePublished, "ca") == PushAnnouncement(title: "El Punt: Nacional", body: "2025-06-02", background: true))
        #expect(announce(.issuePublished, "es-ES") == PushAnnouncement(title: nil, body: "Número del 2025-06-02", background: true),
                "the primary subtag's texts; an empty title is left out")
        #expect(announce(.issuePublished, "fr")?.title == "El Punt: Nacional", "the default language")
        #expect(announce(.issueRepublished, "ca") == PushAnnouncement(title: nil, body: nil, background: true))
        #expect(announce(.issuePublished, "ca", at: day - 9 * 3_600) == PushAnnouncement(title: nil, body: nil, background: true),
                "03:00 is quiet")
        var silent = policy
        silent.background = false
        #expect(silent.announcement(of: .issueRepublished, issue: issue, editionName: "N", publicationName: "P", language: "ca",
                                    at: day) == nil)
        let long = try #require(announce(.issuePublished, "ca")?.body)
        #expect(!long.isEmpty)
        let dated = AppPushPolicy(alerts: ["en": PushAlertTemplate(title: "{edition}", body: "{date}")], background: false)
        #expect(dated.announcement(of: .issuePublished, issue: issue, editionName: "N", publicationName: "P", language: "en",
                                   at: day)?.body?.contains("2025") == true, "the day, long, in the language")
    }
}
