import GRDB
import KioskModels
import KioskStoreSupport

extension SQLiteKioskStore {
    /// Statistics from the per-day download counts (kept by triggers, see the `v3` migration) and the
    /// demo tables, read in one snapshot.
    ///
    /// With `editionID`, demo use counts only grants spent on that edition, and a conversion needs a
    /// subscription to it.
    public func statistics(_ query: StatisticsQuery) async throws -> KioskStatistics {
        try await longRead { db in
            var arguments: StatementArguments = []
            let filter = query.downloadCountsFilter.clause("WHERE") { arguments.bind($0) }

            let total = try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(c.count), 0) FROM download_counts c \(filter)",
                                         arguments: arguments) ?? 0

            let byEditionAndDay = try Row.fetchAll(db, sql: """
                SELECT c.edition_id, COALESCE(e.name, '') AS edition_name, c.day, SUM(c.count) AS downloads
                FROM download_counts c LEFT JOIN editions e ON e.id = c.edition_id
                \(filter)
                GROUP BY c.day, c.edition_id ORDER BY c.day, c.edition_id
                """, arguments: arguments).map(KioskStatistics.EditionDay.init(row:))

            let byApp = try Row.fetchAll(db, sql: """
                SELECT c.app_key, COALESCE(a.name, '') AS app_name, SUM(c.count) AS downloads
                FROM download_counts c LEFT JOIN apps a ON a.key = c.app_key
                \(filter)
                GROUP BY c.app_key ORDER BY downloads DESC, c.app_key
                """, arguments: arguments).map(KioskStatistics.AppDownloads.init(row:))

            let byOS = try Row.fetchAll(db, sql: """
                SELECT c.os, SUM(c.count) AS downloads FROM download_counts c
                \(filter)
                GROUP BY c.os ORDER BY downloads DESC, c.os
                """, arguments: arguments).map(KioskStatistics.OSDownloads.init(row:))

            let topIssues = try Row.fetchAll(db, sql: """
                SELECT c.edition_id, COALESCE(e.name, '') AS edition_name, c.date, SUM(c.count) AS downloads
                FROM download_counts c LEFT JOIN editions e ON e.id = c.edition_id
                \(filter)
                GROUP BY c.edition_id, c.date ORDER BY downloads DESC, c.edition_id, c.date LIMIT ?
                """, arguments: arguments + [query.topIssuesLimit]).compactMap(KioskStatistics.IssueDownloads.init(row:))

            var demoArguments: StatementArguments = []
            let demoFilter = query.demoGrantsFilter.clause("WHERE") { demoArguments.bind($0) }
            let subscriptionFilter = query.conversionSubscriptionsFilter.clause("AND") { demoArguments.bind($0) }
            let demos = try Row.fetchAll(db, sql: """
                \(StatisticsQuery.demoDevices(demoFilter))
                SELECT d.app_key, COALESCE(a.name, '') AS app_name, COUNT(*) AS devices, SUM(d.grants) AS grants,
                       SUM(d.used) AS used,
                       SUM(EXISTS (
                           SELECT 1 FROM identities i
                           WHERE i.app_key = d.app_key AND i.device_key = d.device_key AND i.user_id != 0
                             AND i.last_seen >= d.first_grant
                             AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.user_id = i.user_id \(subscriptionFilter))))
                           AS converted
                FROM demo d LEFT JOIN apps a ON a.key = d.app_key
                GROUP BY d.app_key ORDER BY d.app_key
                """, arguments: demoArguments).map(KioskStatistics.DemoUse.init(row:))

            var activeArguments: StatementArguments = []
            let activeFilter = query.activeIdentitiesFilter.clause("WHERE") { activeArguments.bind($0) }
            let activeDevices = try Row.fetchAll(db, sql: """
                SELECT x.day, x.app_key, COALESCE(a.name, '') AS app_name, COUNT(*) AS devices
                FROM active_identities x LEFT JOIN apps a ON a.key = x.app_key
                \(activeFilter)
                GROUP BY x.day, x.app_key ORDER BY x.day, x.app_key
                """, arguments: activeArguments).map(KioskStatistics.ActiveDevices.init(row:))
            let legacy = try Int.fetchOne(db, sql: Self.legacyPasswordHashCountSQL) ?? 0

            return KioskStatistics(query: query, totalDownloads: total, byEditionAndDay: byEditionAndDay,
                                   byApp: byApp, byOS: byOS, demos: demos, topIssues: topIssues,
                                   activeDevices: activeDevices, legacyPasswordHashes: legacy,
                                   storePurchases: try Self.storePurchases(query, db))
        }
    }

    /// `KioskStatistics.StorePurchases`, with the queries the PostgreSQL store runs too (`StorePurchaseSQL`).
    static func storePurchases(_ query: StatisticsQuery, _ db: Database) throws -> KioskStatistics.StorePurchases {
        typealias SQL = StatisticsQuery.StorePurchaseSQL
        typealias P = KioskStatistics.StorePurchases
        var purchaseArguments: StatementArguments = []
        let purchaseFilter = query.storePurchasesFilter.clause("WHERE") { purchaseArguments.bind($0) }
        let byDayAndKind = try Row.fetchAll(db, sql: SQL.byDayAndKind(purchaseFilter), arguments: purchaseArguments).compactMap { row in
            ProductKind(rawValue: row[1]).map { P.KindDay(day: IssueDate(daysSinceEpoch: row[0]), kind: $0, purchases: row[2]) }
        }

        var activeArguments: StatementArguments = [query.now]
        let activeFilter = query.activeSubscriptionsFilter.clause("AND") { activeArguments.bind($0) }
        let active = try Int.fetchOne(db, sql: SQL.activeSubscriptions(now: "?", activeFilter), arguments: activeArguments) ?? 0

        var paymentArguments: StatementArguments = []
        let paymentFilter = query.storePaymentsFilter.clause("AND") { paymentArguments.bind($0) }
        let refunds = try Int.fetchOne(db, sql: SQL.refunds(paymentFilter), arguments: paymentArguments) ?? 0
        let revenue = try Row.fetchAll(db, sql: SQL.revenue(paymentFilter), arguments: paymentArguments).map {
            P.Revenue(currency: $0[0], payments: $0[1], thousandths: $0[2])
        }

        var demoArguments: StatementArguments = []
        let demoFilter = query.demoGrantsFilter.clause("WHERE") { demoArguments.bind($0) }
        let conversion = try Row.fetchAll(db, sql: StatisticsQuery.demoDevices(demoFilter) + "\n" + SQL.demoConversion,
                                          arguments: demoArguments).map {
            P.DemoConversion(appKey: $0[0], appName: $0[1], devices: $0[2], purchased: $0[3])
        }
        return P(byDayAndKind: byDayAndKind, activeSubscriptions: active, refunds: refunds, revenue: SQL.sorted(revenue),
                 demoConversion: conversion)
    }

    /// Proves the database answers: reads the catalogue (`GET /readyz`).
    public func ping() async throws {
        _ = try await longRead { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM apps") }
    }
}

extension StatementArguments {
    /// Appends a filter's value; returns its placeholder.
    fileprivate mutating func bind(_ value: StatisticsFilter.Value) -> String {
        switch value {
        case .integer(let number): self += [number]
        case .text(let text): self += [text]
        }
        return "?"
    }
}

// Each line of the statistics is read from its query's columns by name.

extension KioskStatistics.EditionDay {
    init(row: Row) {
        self.init(editionID: row["edition_id"], editionName: row["edition_name"],
                  day: IssueDate(daysSinceEpoch: row["day"]), downloads: row["downloads"])
    }
}

extension KioskStatistics.AppDownloads {
    init(row: Row) {
        self.init(appKey: row["app_key"], appName: row["app_name"], downloads: row["downloads"])
    }
}

extension KioskStatistics.OSDownloads {
    init(row: Row) { self.init(os: row["os"], downloads: row["downloads"]) }
}

extension KioskStatistics.IssueDownloads {
    /// Nil when the issue's date is unreadable.
    init?(row: Row) {
        guard let date = IssueDate(row["date"] as String) else { return nil }
        self.init(editionID: row["edition_id"], editionName: row["edition_name"], date: date, downloads: row["downloads"])
    }
}

extension KioskStatistics.DemoUse {
    init(row: Row) {
        self.init(appKey: row["app_key"], appName: row["app_name"], devices: row["devices"], grants: row["grants"],
                  used: row["used"], converted: row["converted"])
    }
}

extension KioskStatistics.ActiveDevices {
    init(row: Row) {
        self.init(day: IssueDate(daysSinceEpoch: row["day"]), appKey: row["app_key"], appName: row["app_name"],
                  devices: row["devices"])
    }
}
