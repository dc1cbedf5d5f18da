import KioskModels
import KioskSQLite
import Testing

/// Statistics data whose every number is known, written through the store's own methods (so the
/// per-day counts come from however the store keeps them), on the sample catalogue.
///
/// Downloads, by UTC day of download (edition 1 and 2 on `quiosc`, 8 on `presencia`):
///
/// | day        | ed. 1 (iOS) | ed. 2 (Android, issue 06-01) | ed. 8 (no OS) |
/// |------------|-------------|------------------------------|---------------|
/// | 2025-06-01 | 1           | 2                            | 1             |
/// | 2025-06-02 | 2           | 2                            | 1             |
/// | 2025-06-03 | 3           | 2                            | 1             |
/// | 2025-06-04 | 4           | 2                            | 1             |
/// | 2025-06-05 | 5 + 1 at 23:59:59 | 2                      | 1             |
/// | 2025-06-06 | 1 at 00:00:00 (issue 06-05) | —            | —             |
///
/// Edition 1 and 8 downloads are of the day's issue. Total 32; quiosc 27, presencia 5.
///
/// Demos: on quiosc, device A takes 2 (06-02, one spent on edition 1) and signs in on 06-03 as `una`
/// (subscribed to edition 1): converted. B takes 1 (unused), signs in as `dos` (no subscription).
/// C signed in as `tres` (subscribed to 2) on 06-01, *before* its demo of 06-02 (spent on edition 2):
/// not converted. E takes 1 on 2025-05-20 and signs in as `una` on 05-21: converted. On presencia,
/// D takes 1 and never signs in.
public enum KnownStatistics {
    /// Unix time of midnight UTC of `text` (`YYYY-MM-DD`).
    public static func day(_ text: String) -> Int64 { Int64(IssueDate(text)!.daysSinceEpoch) * 86_400 }

    public static func at(_ text: String, hour: Int64, minute: Int64 = 0, second: Int64 = 0) -> Int64 {
        day(text) + hour * 3600 + minute * 60 + second
    }

    public static func fill(_ store: any KioskDatabase) async throws {
        func download(_ edition: Int, issue: String, app: String, os: String, time: Int64, device: String) async throws {
            try await store.recordDownload(DownloadRecord(
                editionID: edition, date: IssueDate(issue)!, appKey: app, identityKey: "key-\(device)", userID: 0,
                claimedUserID: "", deviceKey: device, os: os, time: time))
        }
        let days = ["2025-06-01", "2025-06-02", "2025-06-03", "2025-06-04", "2025-06-05"]
        for (i, day) in days.enumerated() {
            for k in 0...i { try await download(1, issue: day, app: "quiosc", os: "iOS", time: at(day, hour: 12, second: Int64(k)), device: "d1") }
            for k in 0..<2 { try await download(2, issue: "2025-06-01", app: "quiosc", os: "Android", time: at(day, hour: 13, second: Int64(k)), device: "d2") }
            try await download(8, issue: day, app: "presencia", os: "", time: at(day, hour: 14), device: "d8")
        }
        try await download(1, issue: "2025-06-05", app: "quiosc", os: "iOS", time: at("2025-06-05", hour: 23, minute: 59, second: 59), device: "d1")
        try await download(1, issue: "2025-06-05", app: "quiosc", os: "iOS", time: day("2025-06-06"), device: "d1")

        let una = try await store.addUser(username: "una", name: "", email: "", passwordHash: "x", at: 0)
        let dos = try await store.addUser(username: "dos", name: "", email: "", passwordHash: "x", at: 0)
        let tres = try await store.addUser(username: "tres", name: "", email: "", passwordHash: "x", at: 0)
        try await store.subscribe(username: "una", editionID: 1, until: IssueDate("2025-12-31")!)
        try await store.subscribe(username: "tres", editionID: 2, until: IssueDate("2025-12-31")!)
        func signIn(_ app: String, _ device: String, _ user: Int, at time: Int64) async throws {
            try await store.saveIdentity(DeviceIdentity(key: "\(app)-\(device)-\(user)", appKey: app, deviceKey: device, userID: user,
                                                        deviceInfo: [:], os: "iOS"), at: time, retiringImported: false)
        }
        func demo(_ app: String, _ device: String, at time: Int64, spendOn edition: Int? = nil) async throws {
            #expect(try await store.consumeDemo(appKey: app, deviceKey: device, quota: 3, at: time).granted)
            if let edition {
                #expect(try await store.useDemoGrant(appKey: app, deviceKey: device, editionID: edition,
                                                     date: IssueDate("2025-06-01")!, at: time + 60))
            }
        }
        try await signIn("quiosc", "A", 0, at: at("2025-06-02", hour: 8))
        try await demo("quiosc", "A", at: at("2025-06-02", hour: 10), spendOn: 1)
        try await demo("quiosc", "A", at: at("2025-06-02", hour: 10, minute: 30))
        try await signIn("quiosc", "A", una, at: at("2025-06-03", hour: 9))
        try await demo("quiosc", "B", at: at("2025-06-02", hour: 11))
        try await signIn("quiosc", "B", dos, at: at("2025-06-04", hour: 9))
        try await signIn("quiosc", "C", tres, at: at("2025-06-01", hour: 9))
        try await demo("quiosc", "C", at: at("2025-06-02", hour: 12), spendOn: 2)
        try await demo("quiosc", "E", at: at("2025-05-20", hour: 10))
        try await signIn("quiosc", "E", una, at: at("2025-05-21", hour: 10))
        try await demo("presencia", "D", at: at("2025-06-03", hour: 10))
    }
}
