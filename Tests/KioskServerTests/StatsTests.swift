import Foundation
import KioskModels
import KioskSQLite
import KioskTestSupport
import Testing
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles

/// `KioskServer stats` on data whose every number is known (`KnownStatistics`, and one subscription active
/// until 2099; the store queries behind it are checked by `StoreConformance`).
@Suite struct StatsTests {
    /// A database (with its configuration file, for the binary) filled with `KnownStatistics`.
    struct Fixture {
        let directory: URL
        let config: String
        let store: SQLiteKioskStore

        init() async throws {
            directory = temporaryDirectory()
            config = try writeTestConfiguration(in: directory)
            let configuration = try KioskConfiguration.load(from: config)
            store = try SQLiteKioskStore(path: configuration.server.database)
            try await store.syncCatalogue(configuration.catalogue, dryRun: false)
            try await KnownStatistics.fill(store)
            // One subscription that runs until 2099, so that the system's clock (the command's "now") finds it active.
            let product = StoreProduct(appKey: "quiosc", id: "cat.quiosc.llarga", kind: .subscription)
            let start = KnownStatistics.day("2025-05-01"), end = KnownStatistics.day("2099-01-01")
            let long = HeldPurchase(appKey: "quiosc", purchase: StorePurchase(store: .google, originalID: "P10", product: product),
                                    environment: "Production",
                                    payments: [StorePayment(id: "GPA.10", paidAt: start, period: PaidPeriod(start: start, end: end), signedAt: 1)],
                                    createdAt: start, updatedAt: start)
            _ = try await store.changePurchase(appKey: "quiosc", store: .google, originalID: "P10", recording: nil) { $0 = long }
        }

        func stats(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
            try await ServerProcess.run(["stats", "--config", config] + arguments)
        }
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
        let purchases = try #require(object["store_purchases"] as? [String: Any])
        let purchaseDays = try #require(purchases["by_day_and_kind"] as? [[String: Any]])
        #expect(purchaseDays.map { "\($0["day"]!) \($0["kind"]!) \($0["purchases"]!)" }
                == ["2025-06-02 issue 2", "2025-06-03 subscription 1", "2025-06-04 credits 1", "2025-06-05 subscription 1"])
        #expect(purchases["active_subscriptions"] as? Int == 1, "active now, by the system's clock: the one until 2099")
        #expect(purchases["refunds"] as? Int == 2)
        let revenue = try #require(purchases["revenue"] as? [[String: Any]])
        #expect(revenue.map { "\($0["currency"]!) \($0["payments"]!) \($0["amount"]!) \($0["thousandths"]!)" } == ["EUR 2 5.98 5980", "USD 1 2.50 2495"])
        let conversion = try #require(purchases["demo_conversion"] as? [[String: Any]])
        #expect(conversion.map { "\($0["app"]!) \($0["devices"]!) \($0["purchased"]!) \($0["conversion_rate"]!)" }
                == ["presencia 1 1 1", "quiosc 3 2 0.6667"])

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
        #expect(lines.contains("section,day,kind,purchases"))
        #expect(lines.filter { $0.hasPrefix("store_purchases,") } == [
            "store_purchases,2025-05-01,subscription,1", "store_purchases,2025-05-15,subscription,1",
            "store_purchases,2025-06-01,subscription,1", "store_purchases,2025-06-02,issue,2", "store_purchases,2025-06-03,subscription,1",
            "store_purchases,2025-06-04,credits,1", "store_purchases,2025-06-05,subscription,1", "store_purchases,2025-06-06,subscription,1",
            "store_purchases,2025-06-10,credits,1",
        ])
        #expect(lines.filter { $0.hasPrefix("active_store_subscriptions,") } == ["active_store_subscriptions,1"])
        #expect(lines.filter { $0.hasPrefix("store_refunds,") } == ["store_refunds,3"])
        #expect(lines.filter { $0.hasPrefix("store_revenue,") } == ["store_revenue,EUR,5,15.97", "store_revenue,USD,1,2.50"])
        #expect(lines.filter { $0.hasPrefix("demo_purchases,") } == ["demo_purchases,presencia,Presència,1,1,1.0000",
                                                                     "demo_purchases,quiosc,El Quiosc,4,3,0.7500"])

        let table = try await fixture.stats(["--app", "quiosc"])
        #expect(table.status == 0, "\(table.errors)")
        let text = table.output
        #expect(text.contains("Kiosk statistics, beginning to today (UTC days), app quiosc\nDownloads: 27\n"))
        #expect(text.contains("  day         1 Nacional  2 Comarques Gironines  total\n  2025-06-01           1                      2      3\n"))
        #expect(text.contains("  2025-06-05           6                      2      8\n  2025-06-06           1                      0      1\n"))
        #expect(text.contains("  quiosc  El Quiosc         27  100.0%"))
        #expect(text.contains("  quiosc  El Quiosc        4       5     2          2       50.0%"))
        #expect(!text.contains("presencia"))
        #expect(text.contains("\nStore purchases per day and kind (first heard of that day; every edition)\n"
                              + "  day         issue  credits  subscription  total\n  2025-05-01      0        0             1      1\n"))
        #expect(text.contains("  2025-06-02      2        0             0      2\n"))
        #expect(text.contains("\nStore subscriptions active now: 1\nStore payments of the period refunded or revoked since: 3\n"))
        #expect(text.contains("  currency  payments  amount\n  EUR              3   10.97\n"), "quiosc's payments only")
        #expect(text.contains("  app     name       devices  purchased  conversion\n  quiosc  El Quiosc        4          3       75.0%\n"))
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
}
