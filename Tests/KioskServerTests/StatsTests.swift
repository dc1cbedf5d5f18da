import Foundation
import GRDB
import KioskModels
import KioskStorage
import Testing
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles

/// `KioskServer stats` and the store queries behind it, on data whose every number is known.
@Suite struct StatsTests {
    /// A database (with its configuration file, for the binary) filled with `fill`.
    struct Fixture {
        let directory: URL
        let config: String
        let store: SQLiteKioskStore

        init() async throws {
            directory = temporaryDirectory()
            config = try writeTestConfiguration(in: directory)
            let configuration = try KioskConfiguration.load(from: config)
            store = try StoreOptions.openStore(configuration)
            try await store.syncCatalogue(configuration.catalogue, dryRun: false)
            try await StatsTests.fill(store)
        }

        func stats(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
            try await ServerProcess.run(["stats", "--config", config] + arguments)
        }
    }

    static func day(_ text: String) -> Int64 { Int64(IssueDate(text)!.daysSinceEpoch) * 86_400 }
    static func at(_ text: String, hour: Int64, minute: Int64 = 0, second: Int64 = 0) -> Int64 {
        day(text) + hour * 3600 + minute * 60 + second
    }

    /// The data, written through the store's own methods (so the per-day counts come from the triggers):
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
    static func fill(_ store: SQLiteKioskStore) async throws {
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

    typealias S = KioskStatistics

    static func editionDays(_ rows: [(String, Int, Int)]) -> [S.EditionDay] {
        let names = [1: "Nacional", 2: "Comarques Gironines", 8: "Presència"]
        return rows.map { S.EditionDay(editionID: $0.1, editionName: names[$0.1]!, day: IssueDate($0.0)!, downloads: $0.2) }
    }

    @Test func statisticsOfKnownData() async throws {
        let fixture = try await Fixture()
        let all = try await fixture.store.statistics(StatisticsQuery(topIssues: 3))
        #expect(all.totalDownloads == 32)
        #expect(all.byEditionAndDay == Self.editionDays([
            ("2025-06-01", 1, 1), ("2025-06-01", 2, 2), ("2025-06-01", 8, 1),
            ("2025-06-02", 1, 2), ("2025-06-02", 2, 2), ("2025-06-02", 8, 1),
            ("2025-06-03", 1, 3), ("2025-06-03", 2, 2), ("2025-06-03", 8, 1),
            ("2025-06-04", 1, 4), ("2025-06-04", 2, 2), ("2025-06-04", 8, 1),
            ("2025-06-05", 1, 6), ("2025-06-05", 2, 2), ("2025-06-05", 8, 1),
            ("2025-06-06", 1, 1),
        ]))
        #expect(all.byApp == [S.AppDownloads(appKey: "quiosc", appName: "El Quiosc", downloads: 27),
                              S.AppDownloads(appKey: "presencia", appName: "Presència", downloads: 5)])
        #expect(all.byOS == [S.OSDownloads(os: "iOS", downloads: 17), S.OSDownloads(os: "Android", downloads: 10),
                             S.OSDownloads(os: "", downloads: 5)])
        #expect(all.topIssues == [
            S.IssueDownloads(editionID: 2, editionName: "Comarques Gironines", date: IssueDate("2025-06-01")!, downloads: 10),
            S.IssueDownloads(editionID: 1, editionName: "Nacional", date: IssueDate("2025-06-05")!, downloads: 7),
            S.IssueDownloads(editionID: 1, editionName: "Nacional", date: IssueDate("2025-06-04")!, downloads: 4),
        ])
        #expect(all.demos == [
            S.DemoUse(appKey: "presencia", appName: "Presència", devices: 1, grants: 1, used: 0, converted: 0),
            S.DemoUse(appKey: "quiosc", appName: "El Quiosc", devices: 4, grants: 5, used: 2, converted: 2),
        ])
        #expect(all.demos[1].conversionRate == 0.5)

        // A range of days (UTC, both ends included): 2025-06-06 00:00:00 is out, 06-05 23:59:59 in.
        let june = try await fixture.store.statistics(StatisticsQuery(from: IssueDate("2025-06-02"), to: IssueDate("2025-06-05")))
        #expect(june.totalDownloads == 27)
        #expect(june.byEditionAndDay.first?.day == IssueDate("2025-06-02"))
        #expect(june.byEditionAndDay.last == Self.editionDays([("2025-06-05", 8, 1)])[0])
        #expect(june.byApp.map(\.downloads) == [23, 4])
        #expect(june.topIssues.first == S.IssueDownloads(editionID: 2, editionName: "Comarques Gironines",
                                                          date: IssueDate("2025-06-01")!, downloads: 8))
        #expect(june.demos == [
            S.DemoUse(appKey: "presencia", appName: "Presència", devices: 1, grants: 1, used: 0, converted: 0),
            S.DemoUse(appKey: "quiosc", appName: "El Quiosc", devices: 3, grants: 4, used: 2, converted: 1),
        ])
        #expect(try await fixture.store.statistics(StatisticsQuery(to: IssueDate("2025-06-05"))).totalDownloads == 31)

        let presencia = try await fixture.store.statistics(StatisticsQuery(appKey: "presencia"))
        #expect(presencia.totalDownloads == 5)
        #expect(Set(presencia.byEditionAndDay.map(\.editionID)) == [8])
        #expect(presencia.demos.map(\.appKey) == ["presencia"])

        // An edition: its downloads; demos spent on it, converted by a subscription to it.
        let nacional = try await fixture.store.statistics(StatisticsQuery(editionID: 1))
        #expect(nacional.totalDownloads == 17)
        #expect(nacional.byOS == [S.OSDownloads(os: "iOS", downloads: 17)])
        #expect(nacional.demos == [S.DemoUse(appKey: "quiosc", appName: "El Quiosc", devices: 1, grants: 1, used: 1, converted: 1)])
        let comarques = try await fixture.store.statistics(StatisticsQuery(editionID: 2))
        #expect(comarques.totalDownloads == 10)
        #expect(comarques.demos == [S.DemoUse(appKey: "quiosc", appName: "El Quiosc", devices: 1, grants: 1, used: 1, converted: 0)])

        let empty = try await fixture.store.statistics(StatisticsQuery(from: IssueDate("2024-01-01"), to: IssueDate("2024-12-31")))
        #expect(empty.totalDownloads == 0 && empty.byEditionAndDay.isEmpty && empty.byApp.isEmpty && empty.demos.isEmpty)
    }

    @Test func statsCommandInEveryFormat() async throws {
        let fixture = try await Fixture()

        let json = try await fixture.stats(["--format", "json", "--top", "2", "--from", "2025-06-02", "--to", "2025-06-05"])
        #expect(json.status == 0, "\(json.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(object["total_downloads"] as? Int == 27)
        let filters = try #require(object["filters"] as? [String: Any])
        #expect(filters["from"] as? String == "2025-06-02" && filters["to"] as? String == "2025-06-05")
        #expect(filters["app"] is NSNull && filters["edition"] is NSNull)
        let byApp = try #require(object["by_app"] as? [[String: Any]])
        #expect(byApp.map { $0["app"] as! String } == ["quiosc", "presencia"])
        #expect(byApp.map { $0["downloads"] as! Int } == [23, 4])
        let byOS = try #require(object["by_os"] as? [[String: Any]])
        #expect(byOS.map { $0["os"] as! String } == ["iOS", "Android", ""])
        #expect(byOS.map { $0["downloads"] as! Int } == [15, 8, 4])
        let days = try #require(object["by_edition_day"] as? [[String: Any]])
        #expect(days.count == 12)
        #expect(days.first.map { [$0["day"] as! String, String($0["edition_id"] as! Int), String($0["downloads"] as! Int)] }
                == ["2025-06-02", "1", "2"])
        let top = try #require(object["top_issues"] as? [[String: Any]])
        #expect(top.map { "\($0["rank"]!) \($0["edition_id"]!) \($0["date"]!) \($0["downloads"]!)" }
                == ["1 2 2025-06-01 8", "2 1 2025-06-05 6"])
        let demos = try #require(object["demos"] as? [[String: Any]])
        #expect(demos.map { "\($0["app"]!) \($0["devices"]!) \($0["grants"]!) \($0["used"]!) \($0["converted"]!) \($0["conversion_rate"]!)" }
                == ["presencia 1 1 0 0 0", "quiosc 3 4 2 1 0.3333"])

        let csv = try await fixture.stats(["--format", "csv", "--top", "3"])
        #expect(csv.status == 0, "\(csv.errors)")
        let lines = csv.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.starts(with: ["section,downloads", "total,32", "", "section,day,edition_id,edition,downloads",
                                    "by_edition_day,2025-06-01,1,Nacional,1", "by_edition_day,2025-06-01,2,Comarques Gironines,2"]))
        #expect(lines.filter { $0.hasPrefix("by_edition_day,") }.count == 16)
        #expect(lines.contains("by_edition_day,2025-06-06,1,Nacional,1"))
        #expect(lines.filter { $0.hasPrefix("by_app,") } == ["by_app,quiosc,El Quiosc,27", "by_app,presencia,Presència,5"])
        #expect(lines.filter { $0.hasPrefix("by_os,") } == ["by_os,iOS,17", "by_os,Android,10", "by_os,,5"])
        #expect(lines.filter { $0.hasPrefix("demos,") } == ["demos,presencia,Presència,1,1,0,0,0.0000",
                                                            "demos,quiosc,El Quiosc,4,5,2,2,0.5000"])
        #expect(lines.filter { $0.hasPrefix("top_issues,") } == ["top_issues,1,2,Comarques Gironines,2025-06-01,10",
                                                                 "top_issues,2,1,Nacional,2025-06-05,7",
                                                                 "top_issues,3,1,Nacional,2025-06-04,4"])

        let table = try await fixture.stats(["--app", "quiosc"])
        #expect(table.status == 0, "\(table.errors)")
        let text = table.output
        #expect(text.contains("Kiosk statistics, beginning to today (UTC days), app quiosc\nDownloads: 27\n"))
        #expect(text.contains("  day         1 Nacional  2 Comarques Gironines  total\n  2025-06-01           1                      2      3\n"))
        #expect(text.contains("  2025-06-05           6                      2      8\n  2025-06-06           1                      0      1\n"))
        #expect(text.contains("  quiosc  El Quiosc         27  100.0%"))
        #expect(text.contains("  quiosc  El Quiosc        4       5     2          2       50.0%"))
        #expect(!text.contains("presencia"))
    }

    @Test func statsCommandRefusesBadArguments() async throws {
        let fixture = try await Fixture()
        let garbage = try await fixture.stats(["--from", "2025-13-01"])
        #expect(garbage.status != 0)
        #expect(garbage.errors.contains("--from must be a real day written YYYY-MM-DD"))
        let backwards = try await fixture.stats(["--from", "2025-06-05", "--to", "2025-06-01"])
        #expect(backwards.status != 0)
        #expect(backwards.errors.contains("--to (2025-06-01) is before --from (2025-06-05)"))
        let format = try await fixture.stats(["--format", "xml"])
        #expect(format.status != 0)
        let missing = try await ServerProcess.run(["stats", "--config", fixture.config, "--database", fixture.directory.path + "/nope.sqlite"])
        #expect(missing.status != 0)
        #expect(missing.errors.contains("no database at"))
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.path + "/nope.sqlite"))
    }

    @Test func perDayCountsFollowEveryChangeAndAreBackfilledOnUpgrade() async throws {
        // A database from before the statistics migration, with downloads in it.
        let path = temporaryDirectory().path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let pool = try DatabasePool(path: path + "/old.sqlite")
        try KioskSchema.migrator.migrate(pool, upTo: "v1: catalogue, issues, readers, demos, downloads")
        try await pool.write { db in
            for (edition, time) in [(1, StatsTests.at("2025-06-01", hour: 1)), (1, StatsTests.at("2025-06-01", hour: 2)),
                                    (2, StatsTests.at("2025-06-02", hour: 1))] {
                try db.execute(sql: """
                    INSERT INTO downloads (edition_id, date, app_key, identity_key, user_id, claimed_user_id, device_key, os, time)
                    VALUES (?, '2025-06-01', 'quiosc', '', 0, '', 'd', 'iOS', ?)
                    """, arguments: [edition, time])
            }
        }
        try pool.close()
        let store = try SQLiteKioskStore(path: path + "/old.sqlite")   // migrates: v3 fills the counts
        func counts() async throws -> [[Int]] {
            try await store.pool.read { db in
                try Row.fetchAll(db, sql: "SELECT day, edition_id, count FROM download_counts ORDER BY day, edition_id").map { [$0[0], $0[1], $0[2]] }
            }
        }
        let june1 = IssueDate("2025-06-01")!.daysSinceEpoch
        #expect(try await counts() == [[june1, 1, 2], [june1 + 1, 2, 1]])
        #expect(try await store.statistics(StatisticsQuery()).totalDownloads == 3)

        // Inserts, deletes (a retention purge) and updates keep the counts exact; empty groups disappear.
        try await store.recordDownload(DownloadRecord(editionID: 2, date: IssueDate("2025-06-01")!, appKey: "quiosc", identityKey: "",
                                                      userID: 0, claimedUserID: "", deviceKey: "d", os: "iOS",
                                                      time: StatsTests.at("2025-06-02", hour: 5)))
        #expect(try await counts() == [[june1, 1, 2], [june1 + 1, 2, 2]])
        try await store.pool.write { db in
            try db.execute(sql: "DELETE FROM downloads WHERE edition_id = 1 AND time = ?", arguments: [StatsTests.at("2025-06-01", hour: 1)])
            try db.execute(sql: "UPDATE downloads SET edition_id = 8 WHERE edition_id = 1")
        }
        #expect(try await counts() == [[june1, 8, 1], [june1 + 1, 2, 2]])
        try await store.pool.write { db in try db.execute(sql: "DELETE FROM downloads") }
        #expect(try await counts() == [])
    }
}
