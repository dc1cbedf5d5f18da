import ArgumentParser
import Foundation
import KioskModels
import KioskSQLite
import KioskConfig
import KioskHTTP

/// `KioskServer stats`: downloads per edition and day, per app and per OS, demo use and conversion,
/// the most downloaded issues, and store purchases (per day and kind, subscriptions active now, refunds,
/// revenue per currency, demo-to-purchase conversion), from the database. Days are UTC.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Download, demo and store purchase statistics (days are UTC; --from and --to are included).")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, csv, json
    }

    @OptionGroup var options: StoreOptions

    @Option(help: ArgumentHelp("First day (YYYY-MM-DD).", valueName: "D"))
    var from: String?

    @Option(help: ArgumentHelp("Last day (YYYY-MM-DD).", valueName: "D"))
    var to: String?

    @Option(help: ArgumentHelp("Only this app (APP_KEY).", valueName: "K"))
    var app: String?

    @Option(help: ArgumentHelp("Only this edition (EDICIO_ID).", valueName: "ID"))
    var edition: Int?

    @Option(help: "How many issues the top list shows.")
    var top: Int = 10

    @Option(help: "Output: table, csv or json.")
    var format: Format = .table

    func validate() throws {
        for (name, value) in [("--from", from), ("--to", to)] {
            if let value, IssueDate(value) == nil { throw ValidationError("\(name) must be a real day written YYYY-MM-DD, got \"\(value)\"") }
        }
        if let from = from.flatMap({ IssueDate($0) }), let to = to.flatMap({ IssueDate($0) }), to < from {
            throw ValidationError("--to (\(to)) is before --from (\(from))")
        }
        guard top >= 0 else { throw ValidationError("--top must be 0 or more") }
    }

    func run() async throws {
        let configuration = try options.loadConfiguration()
        if case .sqlite(let path) = try DatabaseLocation(configuration.server.database), !FileManager.default.fileExists(atPath: path) {
            throw ValidationError("no database at \(path)")
        }
        let store = try await StoreOptions.openStore(configuration)
        let query = StatisticsQuery(from: from.flatMap { IssueDate($0) }, to: to.flatMap { IssueDate($0) },
                                    appKey: app, editionID: edition, topIssues: top)
        let statistics = try await store.statistics(query)
        let text: String
        switch format {
        case .table: text = StatisticsReport.table(statistics)
        case .csv: text = StatisticsReport.csv(statistics)
        case .json: text = StatisticsReport.json(statistics)
        }
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// The three renderings of `KioskStatistics`.
enum StatisticsReport {
    static func rate(_ value: Double) -> String { String(format: "%.1f%%", value * 100) }
    static func osName(_ os: String) -> String { os.isEmpty ? "(none)" : os }

    static func scope(_ query: StatisticsQuery) -> String {
        "\(query.from?.description ?? "beginning") to \(query.to?.description ?? "today") (UTC days)"
            + (query.appKey.map { ", app \($0)" } ?? "") + (query.editionID.map { ", edition \($0)" } ?? "")
    }

    // MARK: table

    static func table(_ s: KioskStatistics) -> String {
        var out = "Kiosk statistics, \(scope(s.query))\nDownloads: \(s.totalDownloads)\n"

        let editions = Dictionary(s.byEditionAndDay.map { ($0.editionID, $0.editionName) }, uniquingKeysWith: { a, _ in a })
            .sorted { $0.key < $1.key }
        let editionIDs = editions.map(\.key)
        out += "\nDownloads per day and edition\n"
        var rows = [["day"] + editions.map { "\($0.key) \($0.value)" } + ["total"]]
        var byDay: [(IssueDate, [Int: Int])] = []
        for entry in s.byEditionAndDay {
            if byDay.last?.0 != entry.day { byDay.append((entry.day, [:])) }
            byDay[byDay.count - 1].1[entry.editionID, default: 0] += entry.downloads
        }
        for (day, counts) in byDay {
            rows.append([day.description] + editionIDs.map { String(counts[$0] ?? 0) } + [String(counts.values.reduce(0, +))])
        }
        out += grid(rows)

        out += "\nDownloads per app\n"
        out += grid([["app", "name", "downloads", "share"]] + s.byApp.map {
            [$0.appKey, $0.appName, String($0.downloads), rate(share($0.downloads, of: s.totalDownloads))]
        })

        out += "\nDownloads per OS\n"
        out += grid([["os", "downloads", "share"]] + s.byOS.map {
            [osName($0.os), String($0.downloads), rate(share($0.downloads, of: s.totalDownloads))]
        })

        out += "\nDemo use and conversion (devices that used a demo, then signed in as a subscriber)\n"
        out += grid([["app", "name", "devices", "grants", "used", "converted", "conversion"]] + s.demos.map {
            [$0.appKey, $0.appName, String($0.devices), String($0.grants), String($0.used), String($0.converted), rate($0.conversionRate)]
        })

        out += "\nActive devices per day and app (distinct identity keys the app saw)\n"
        out += grid([["day", "app", "name", "devices"]] + s.activeDevices.map {
            [$0.day.description, $0.appKey, $0.appName, String($0.devices)]
        })

        out += "\nUsers with a legacy (2012) password hash, replaced at their next sign-in: \(s.legacyPasswordHashes)\n"

        out += "\nTop issues\n"
        out += grid([["rank", "edition", "name", "date", "downloads"]] + s.topIssues.enumerated().map {
            [String($0.offset + 1), String($0.element.editionID), $0.element.editionName, $0.element.date.description, String($0.element.downloads)]
        })
        out += storeTable(s.storePurchases)
        return out
    }

    /// The store purchase sections of the table (the query's edition does not narrow them).
    static func storeTable(_ p: KioskStatistics.StorePurchases) -> String {
        var out = "\nStore purchases per day and kind (first heard of that day; every edition)\n"
        var byDay: [(IssueDate, [ProductKind: Int])] = []
        for entry in p.byDayAndKind {
            if byDay.last?.0 != entry.day { byDay.append((entry.day, [:])) }
            byDay[byDay.count - 1].1[entry.kind, default: 0] += entry.purchases
        }
        let kinds = ProductKind.allCases
        out += grid([["day"] + kinds.map(\.rawValue) + ["total"]] + byDay.map { day, counts in
            [day.description] + kinds.map { String(counts[$0] ?? 0) } + [String(counts.values.reduce(0, +))]
        })
        out += "\nStore subscriptions active now: \(p.activeSubscriptions)\n"
        out += "Store payments of the period refunded or revoked since: \(p.refunds)\n"
        out += "\nStore revenue per currency (payments of the period not refunded)\n"
        out += grid([["currency", "payments", "amount"]] + p.revenue.map { [$0.currency, String($0.payments), $0.amount] })
        out += "\nDemo to store purchase (devices that took a demo, then bought in the app)\n"
        out += grid([["app", "name", "devices", "purchased", "conversion"]] + p.demoConversion.map {
            [$0.appKey, $0.appName, String($0.devices), String($0.purchased), rate($0.conversionRate)]
        })
        return out
    }

    static func share(_ part: Int, of total: Int) -> Double { total == 0 ? 0 : Double(part) / Double(total) }

    /// Columns padded to their widest cell; numbers right-aligned.
    static func grid(_ rows: [[String]]) -> String {
        guard let header = rows.first else { return "" }
        if rows.count == 1 { return "  (none)\n" }
        var widths = header.map(\.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        func numeric(_ cell: String) -> Bool { !cell.isEmpty && cell.allSatisfy { $0.isNumber || $0 == "." || $0 == "%" } }
        return rows.map { row in
            "  " + row.enumerated().map { i, cell in
                let pad = String(repeating: " ", count: widths[i] - cell.count)
                return numeric(cell) ? pad + cell : cell + pad
            }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }.joined(separator: "\n") + "\n"
    }

    // MARK: csv

    /// One block per section, separated by an empty line; every row starts with its section's name,
    /// so `grep '^by_app,'` gives one table.
    static func csv(_ s: KioskStatistics) -> String {
        func field(_ text: String) -> String {
            text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
                ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
        }
        func block(_ name: String, _ header: [String], _ rows: [[String]]) -> String {
            ([["section"] + header] + rows.map { [name] + $0 }).map { $0.map(field).joined(separator: ",") }.joined(separator: "\n") + "\n"
        }
        return [
            block("total", ["downloads"], [[String(s.totalDownloads)]]),
            block("by_edition_day", ["day", "edition_id", "edition", "downloads"], s.byEditionAndDay.map {
                [$0.day.description, String($0.editionID), $0.editionName, String($0.downloads)]
            }),
            block("by_app", ["app", "name", "downloads"], s.byApp.map { [$0.appKey, $0.appName, String($0.downloads)] }),
            block("by_os", ["os", "downloads"], s.byOS.map { [$0.os, String($0.downloads)] }),
            block("demos", ["app", "name", "devices", "grants", "used", "converted", "conversion_rate"], s.demos.map {
                [$0.appKey, $0.appName, String($0.devices), String($0.grants), String($0.used), String($0.converted),
                 String(format: "%.4f", $0.conversionRate)]
            }),
            block("top_issues", ["rank", "edition_id", "edition", "date", "downloads"], s.topIssues.enumerated().map {
                [String($0.offset + 1), String($0.element.editionID), $0.element.editionName, $0.element.date.description,
                 String($0.element.downloads)]
            }),
            block("active_devices", ["day", "app", "name", "devices"], s.activeDevices.map {
                [$0.day.description, $0.appKey, $0.appName, String($0.devices)]
            }),
            block("legacy_password_hashes", ["users"], [[String(s.legacyPasswordHashes)]]),
            block("store_purchases", ["day", "kind", "purchases"], s.storePurchases.byDayAndKind.map {
                [$0.day.description, $0.kind.rawValue, String($0.purchases)]
            }),
            block("active_store_subscriptions", ["subscriptions"], [[String(s.storePurchases.activeSubscriptions)]]),
            block("store_refunds", ["payments"], [[String(s.storePurchases.refunds)]]),
            block("store_revenue", ["currency", "payments", "amount"], s.storePurchases.revenue.map {
                [$0.currency, String($0.payments), $0.amount]
            }),
            block("demo_purchases", ["app", "name", "devices", "purchased", "conversion_rate"], s.storePurchases.demoConversion.map {
                [$0.appKey, $0.appName, String($0.devices), String($0.purchased), String(format: "%.4f", $0.conversionRate)]
            }),
        ].joined(separator: "\n")
    }

    // MARK: json

    static func json(_ s: KioskStatistics) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let data = (try? encoder.encode(Document(s))) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// The `--format json` document; absent filters are `null`.
    struct Document: Encodable {
        struct Filters: Encodable {
            var from: String?, to: String?, app: String?, edition: Int?
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(from, forKey: .from)
                try container.encode(to, forKey: .to)
                try container.encode(app, forKey: .app)
                try container.encode(edition, forKey: .edition)
            }
            enum CodingKeys: CodingKey { case from, to, app, edition }
        }
        struct EditionDay: Encodable { var day: String, editionID: Int, edition: String, downloads: Int }
        struct App: Encodable { var app: String, name: String, downloads: Int }
        struct OS: Encodable { var os: String, downloads: Int }
        struct Demos: Encodable { var app: String, name: String, devices: Int, grants: Int, used: Int, converted: Int, conversionRate: Double }
        struct ActiveDevices: Encodable { var day: String, app: String, name: String, devices: Int }
        struct Issue: Encodable { var rank: Int, editionID: Int, edition: String, date: String, downloads: Int }

        var filters: Filters
        var totalDownloads: Int
        var byEditionDay: [EditionDay]
        var byApp: [App]
        var byOS: [OS]
        var demos: [Demos]
        var activeDevices: [ActiveDevices]
        var legacyPasswordHashes: Int
        var topIssues: [Issue]
        var storePurchases: StorePurchases

        /// `store_purchases`: amounts as text with two decimals (`"12.35"`), and exactly in thousandths.
        struct StorePurchases: Encodable {
            struct Day: Encodable { var day: String, kind: String, purchases: Int }
            struct Revenue: Encodable { var currency: String, payments: Int, amount: String, thousandths: Int64 }
            struct Conversion: Encodable { var app: String, name: String, devices: Int, purchased: Int, conversionRate: Double }
            var byDayAndKind: [Day]
            var activeSubscriptions: Int
            var refunds: Int
            var revenue: [Revenue]
            var demoConversion: [Conversion]

            init(_ p: KioskStatistics.StorePurchases) {
                byDayAndKind = p.byDayAndKind.map { Day(day: $0.day.description, kind: $0.kind.rawValue, purchases: $0.purchases) }
                activeSubscriptions = p.activeSubscriptions
                refunds = p.refunds
                revenue = p.revenue.map { Revenue(currency: $0.currency, payments: $0.payments, amount: $0.amount, thousandths: $0.thousandths) }
                demoConversion = p.demoConversion.map {
                    Conversion(app: $0.appKey, name: $0.appName, devices: $0.devices, purchased: $0.purchased,
                               conversionRate: ($0.conversionRate * 10_000).rounded() / 10_000)
                }
            }
        }

        init(_ s: KioskStatistics) {
            filters = Filters(from: s.query.from?.description, to: s.query.to?.description, app: s.query.appKey,
                              edition: s.query.editionID)
            totalDownloads = s.totalDownloads
            byEditionDay = s.byEditionAndDay.map {
                EditionDay(day: $0.day.description, editionID: $0.editionID, edition: $0.editionName, downloads: $0.downloads)
            }
            byApp = s.byApp.map { App(app: $0.appKey, name: $0.appName, downloads: $0.downloads) }
            byOS = s.byOS.map { OS(os: $0.os, downloads: $0.downloads) }
            demos = s.demos.map {
                Demos(app: $0.appKey, name: $0.appName, devices: $0.devices, grants: $0.grants, used: $0.used,
                      converted: $0.converted, conversionRate: ($0.conversionRate * 10_000).rounded() / 10_000)
            }
            activeDevices = s.activeDevices.map {
                ActiveDevices(day: $0.day.description, app: $0.appKey, name: $0.appName, devices: $0.devices)
            }
            legacyPasswordHashes = s.legacyPasswordHashes
            topIssues = s.topIssues.enumerated().map {
                Issue(rank: $0.offset + 1, editionID: $0.element.editionID, edition: $0.element.editionName,
                      date: $0.element.date.description, downloads: $0.element.downloads)
            }
            storePurchases = StorePurchases(s.storePurchases)
        }
    }
}
