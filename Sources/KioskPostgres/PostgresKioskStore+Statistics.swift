import KioskModels
import KioskStoreSupport
import PostgresNIO

extension PostgresKioskStore {
    /// Statistics from `download_counts` and the demo tables, read in one snapshot (a repeatable-read,
    /// read-only transaction): the same queries as the SQLite store's, in PostgreSQL's dialect.
    public func statistics(_ query: StatisticsQuery) async throws -> KioskStatistics {
        try await withTransaction(bounded: false) { [self] c in
            try await c.run("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)

            var counts = DynamicQuery()
            let filter = query.downloadCountsFilter.clause("WHERE") { counts.bind($0) }

            let total = try await c.value(counts.query("SELECT COALESCE(SUM(c.count), 0)::bigint FROM download_counts c \(filter)"),
                                          Int.self, logger: logger) ?? 0
            let byEditionAndDay = try await c.rows(counts.query("""
                SELECT c.edition_id, COALESCE(e.name, ''), c.day, SUM(c.count)::bigint
                FROM download_counts c LEFT JOIN editions e ON e.id = c.edition_id
                \(filter)
                GROUP BY c.day, c.edition_id, e.name ORDER BY c.day, c.edition_id
                """), (Int, String, Int, Int).self, logger: logger).map {
                KioskStatistics.EditionDay(editionID: $0.0, editionName: $0.1, day: IssueDate(daysSinceEpoch: $0.2), downloads: $0.3)
            }
            let byApp = try await c.rows(counts.query("""
                SELECT c.app_key, COALESCE(a.name, ''), SUM(c.count)::bigint AS downloads
                FROM download_counts c LEFT JOIN apps a ON a.key = c.app_key
                \(filter)
                GROUP BY c.app_key, a.name ORDER BY downloads DESC, c.app_key
                """), (String, String, Int).self, logger: logger).map {
                KioskStatistics.AppDownloads(appKey: $0.0, appName: $0.1, downloads: $0.2)
            }
            let byOS = try await c.rows(counts.query("""
                SELECT c.os, SUM(c.count)::bigint AS downloads FROM download_counts c
                \(filter)
                GROUP BY c.os ORDER BY downloads DESC, c.os
                """), (String, Int).self, logger: logger).map { KioskStatistics.OSDownloads(os: $0.0, downloads: $0.1) }
            var top = counts
            let limit = top.bind(query.topIssuesLimit)
            let topIssues = try await c.rows(top.query("""
                SELECT c.edition_id, COALESCE(e.name, ''), c.date, SUM(c.count)::bigint AS downloads
                FROM download_counts c LEFT JOIN editions e ON e.id = c.edition_id
                \(filter)
                GROUP BY c.edition_id, e.name, c.date ORDER BY downloads DESC, c.edition_id, c.date LIMIT \(limit)
                """), (Int, String, String, Int).self, logger: logger).compactMap { row in
                IssueDate(row.2).map { KioskStatistics.IssueDownloads(editionID: row.0, editionName: row.1, date: $0, downloads: row.3) }
            }

            var demo = DynamicQuery()
            let demoFilter = query.demoGrantsFilter.clause("WHERE") { demo.bind($0) }
            let subscriptionFilter = query.conversionSubscriptionsFilter.clause("AND") { demo.bind($0) }
            let demos = try await c.rows(demo.query("""
                \(StatisticsQuery.demoDevices(demoFilter))
                SELECT d.app_key, COALESCE(a.name, ''), COUNT(*), SUM(d.grants)::bigint, SUM(d.used)::bigint,
                       COUNT(*) FILTER (WHERE EXISTS (
                           SELECT 1 FROM identities i
                           WHERE i.app_key = d.app_key AND i.device_key = d.device_key AND i.user_id <> 0
                             AND i.last_seen >= d.first_grant
                             AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.user_id = i.user_id \(subscriptionFilter))))
                FROM demo d LEFT JOIN apps a ON a.key = d.app_key
                GROUP BY d.app_key, a.name ORDER BY d.app_key
                """), (String, String, Int, Int, Int, Int).self, logger: logger).map {
                KioskStatistics.DemoUse(appKey: $0.0, appName: $0.1, devices: $0.2, grants: $0.3, used: $0.4, converted: $0.5)
            }

            var active = DynamicQuery()
            let activeFilter = query.activeIdentitiesFilter.clause("WHERE") { active.bind($0) }
            let activeDevices = try await c.rows(active.query("""
                SELECT x.day, x.app_key, COALESCE(a.name, ''), COUNT(*)
                FROM active_identities x LEFT JOIN apps a ON a.key = x.app_key
                \(activeFilter)
                GROUP BY x.day, x.app_key, a.name ORDER BY x.day, x.app_key
                """), (Int, String, String, Int).self, logger: logger).map {
                KioskStatistics.ActiveDevices(day: IssueDate(daysSinceEpoch: $0.0), appKey: $0.1, appName: $0.2, devices: $0.3)
            }
            let legacy = try await c.value("""
                SELECT COUNT(*) FROM users
                WHERE NOT (password_hash ~ '^\\$2[aby]\\$[0-9][0-9]\\$' AND length(password_hash) = 60)
                """, Int.self, logger: logger) ?? 0

            return KioskStatistics(query: query, totalDownloads: total, byEditionAndDay: byEditionAndDay,
                                   byApp: byApp, byOS: byOS, demos: demos, topIssues: topIssues,
                                   activeDevices: activeDevices, legacyPasswordHashes: legacy,
                                   storePurchases: try await storePurchases(query, c))
        }
    }

    /// `KioskStatistics.StorePurchases`, with the queries the SQLite store runs too (`StorePurchaseSQL`).
    private func storePurchases(_ query: StatisticsQuery, _ c: PostgresConnection) async throws -> KioskStatistics.StorePurchases {
        typealias SQL = StatisticsQuery.StorePurchaseSQL
        typealias P = KioskStatistics.StorePurchases
        var purchases = DynamicQuery()
        let purchaseFilter = query.storePurchasesFilter.clause("WHERE") { purchases.bind($0) }
        let byDayAndKind = try await c.rows(purchases.query(SQL.byDayAndKind(purchaseFilter)), (Int, String, Int).self,
                                            logger: logger).compactMap { row in
            ProductKind(rawValue: row.1).map { P.KindDay(day: IssueDate(daysSinceEpoch: row.0), kind: $0, purchases: row.2) }
        }

        var active = DynamicQuery()
        let now = active.bind(query.now)
        let activeFilter = query.activeSubscriptionsFilter.clause("AND") { active.bind($0) }
        let activeSubscriptions = try await c.value(active.query(SQL.activeSubscriptions(now: now, activeFilter)), Int.self,
                                                    logger: logger) ?? 0

        var payments = DynamicQuery()
        let paymentFilter = query.storePaymentsFilter.clause("AND") { payments.bind($0) }
        let refunds = try await c.value(payments.query(SQL.refunds(paymentFilter)), Int.self, logger: logger) ?? 0
        let revenue = try await c.rows(payments.query(SQL.revenue(paymentFilter)), (String, Int, Int64).self, logger: logger).map {
            P.Revenue(currency: $0.0, payments: $0.1, thousandths: $0.2)
        }

        var demo = DynamicQuery()
        let demoFilter = query.demoGrantsFilter.clause("WHERE") { demo.bind($0) }
        let conversion = try await c.rows(demo.query(StatisticsQuery.demoDevices(demoFilter) + "\n" + SQL.demoConversion),
                                          (String, String, Int, Int).self, logger: logger).map {
            P.DemoConversion(appKey: $0.0, appName: $0.1, devices: $0.2, purchased: $0.3)
        }
        return P(byDayAndKind: byDayAndKind, activeSubscriptions: activeSubscriptions, refunds: refunds, revenue: SQL.sorted(revenue),
                 demoConversion: conversion)
    }
}
