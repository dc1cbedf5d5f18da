import KioskModels
import KioskSQLite
import Testing

extension StoreConformance {
    typealias S = KioskStatistics

    static func editionDays(_ rows: [(String, Int, Int)]) -> [S.EditionDay] {
        let names = [1: "Nacional", 2: "Comarques Gironines", 8: "Presència"]
        return rows.map { S.EditionDay(editionID: $0.1, editionName: names[$0.1]!, day: IssueDate($0.0)!, downloads: $0.2) }
    }

    /// Statistics of `KnownStatistics`: per-day counts exact at the day's edges, by app, OS and issue,
    /// demo use and conversion, for ranges, an app and an edition.
    func statistics() async throws {
        let store = try await store()
        try await KnownStatistics.fill(store)
        let all = try await store.statistics(StatisticsQuery(topIssues: 3))
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
        let june = try await store.statistics(StatisticsQuery(from: IssueDate("2025-06-02"), to: IssueDate("2025-06-05")))
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
        #expect(try await store.statistics(StatisticsQuery(to: IssueDate("2025-06-05"))).totalDownloads == 31)

        let presencia = try await store.statistics(StatisticsQuery(appKey: "presencia"))
        #expect(presencia.totalDownloads == 5)
        #expect(Set(presencia.byEditionAndDay.map(\.editionID)) == [8])
        #expect(presencia.demos.map(\.appKey) == ["presencia"])

        // An edition: its downloads; demos spent on it, converted by a subscription to it.
        let nacional = try await store.statistics(StatisticsQuery(editionID: 1))
        #expect(nacional.totalDownloads == 17)
        #expect(nacional.byOS == [S.OSDownloads(os: "iOS", downloads: 17)])
        #expect(nacional.demos == [S.DemoUse(appKey: "quiosc", appName: "El Quiosc", devices: 1, grants: 1, used: 1, converted: 1)])
        let comarques = try await store.statistics(StatisticsQuery(editionID: 2))
        #expect(comarques.totalDownloads == 10)
        #expect(comarques.demos == [S.DemoUse(appKey: "quiosc", appName: "El Quiosc", devices: 1, grants: 1, used: 1, converted: 0)])

        let empty = try await store.statistics(StatisticsQuery(from: IssueDate("2024-01-01"), to: IssueDate("2024-12-31")))
        #expect(empty.totalDownloads == 0 && empty.byEditionAndDay.isEmpty && empty.byApp.isEmpty && empty.demos.isEmpty)
        #expect(empty.storePurchases.byDayAndKind.isEmpty && empty.storePurchases.revenue.isEmpty && empty.storePurchases.refunds == 0)

        try await storePurchaseStatistics(store)
    }

    typealias P = KioskStatistics.StorePurchases

    static func kindDays(_ rows: [(String, ProductKind, Int)]) -> [P.KindDay] {
        rows.map { P.KindDay(day: IssueDate($0.0)!, kind: $0.1, purchases: $0.2) }
    }

    /// The store purchases of `KnownStatistics` (filled already): per day and kind at the days' edges, the
    /// subscriptions active at a given now, refunds, revenue per currency, and the demo-to-purchase
    /// conversion by each of its three ways, for all time, a range, an app and an edition.
    func storePurchaseStatistics(_ store: any KioskDatabase) async throws {
        let now = KnownStatistics.purchasesNow
        let all = try await store.statistics(StatisticsQuery(now: now)).storePurchases
        #expect(all.byDayAndKind == Self.kindDays([
            ("2025-05-15", .subscription, 1), ("2025-06-01", .subscription, 1), ("2025-06-02", .issue, 2),
            ("2025-06-03", .subscription, 1), ("2025-06-04", .credits, 1), ("2025-06-05", .subscription, 1),
            ("2025-06-06", .subscription, 1), ("2025-06-10", .credits, 1),
        ]))
        #expect(all.totalsByKind == [.issue: 2, .credits: 2, .subscription: 5])
        #expect(all.activeSubscriptions == 3, "P1, P6, P7; not P3 (refunded) nor P5 (revoked by an operator)")
        #expect(all.refunds == 3, "P3's second payment, P5's (by an operator), P8's")
        #expect(all.revenue == [P.Revenue(currency: "EUR", payments: 5, thousandths: 15_970),
                                P.Revenue(currency: "USD", payments: 1, thousandths: 2_495)])
        #expect(all.revenue.map(\.amount) == ["15.97", "2.50"])
        #expect(all.demoConversion == [
            P.DemoConversion(appKey: "presencia", appName: "Presència", devices: 1, purchased: 1),
            P.DemoConversion(appKey: "quiosc", appName: "El Quiosc", devices: 4, purchased: 3),
        ])
        #expect(all.demoConversion[1].conversionRate == 0.75)

        // A range (UTC days, both ends in): 06-05 23:59:59 in, 06-06 00:00:00 out, 06-01 out.
        let june = try await store.statistics(StatisticsQuery(from: IssueDate("2025-06-02"), to: IssueDate("2025-06-05"), now: now))
            .storePurchases
        #expect(june.byDayAndKind == Self.kindDays([("2025-06-02", .issue, 2), ("2025-06-03", .subscription, 1),
                                                   ("2025-06-04", .credits, 1), ("2025-06-05", .subscription, 1)]))
        #expect(june.activeSubscriptions == 3, "active now, whenever bought")
        #expect(june.refunds == 2)
        #expect(june.revenue == [P.Revenue(currency: "EUR", payments: 2, thousandths: 5_980),
                                 P.Revenue(currency: "USD", payments: 1, thousandths: 2_495)])
        #expect(june.demoConversion == [
            P.DemoConversion(appKey: "presencia", appName: "Presència", devices: 1, purchased: 1),
            P.DemoConversion(appKey: "quiosc", appName: "El Quiosc", devices: 3, purchased: 2),
        ], "A and B bought; C's reader bought before C's demo, and in another app after it")

        // An app.
        let quiosc = try await store.statistics(StatisticsQuery(appKey: "quiosc", now: now)).storePurchases
        #expect(quiosc.byDayAndKind.map(\.day) == ["2025-06-01", "2025-06-02", "2025-06-03", "2025-06-05", "2025-06-06"].map { IssueDate($0)! })
        #expect(quiosc.activeSubscriptions == 2 && quiosc.refunds == 3)
        #expect(quiosc.revenue == [P.Revenue(currency: "EUR", payments: 3, thousandths: 10_970)])
        #expect(quiosc.demoConversion.map(\.appKey) == ["quiosc"])
        let presencia = try await store.statistics(StatisticsQuery(appKey: "presencia", now: now)).storePurchases
        #expect(presencia.activeSubscriptions == 1 && presencia.refunds == 0)
        #expect(presencia.revenue == [P.Revenue(currency: "EUR", payments: 2, thousandths: 5_000),
                                      P.Revenue(currency: "USD", payments: 1, thousandths: 2_495)])

        // Another now: P1's access ended on 07-03 at noon; P6 (07-06) and P7 (07-15) still run.
        #expect(try await store.statistics(StatisticsQuery(now: KnownStatistics.at("2025-07-03", hour: 12))).storePurchases
                    .activeSubscriptions == 2)
        #expect(try await store.statistics(StatisticsQuery(now: KnownStatistics.at("2025-07-03", hour: 11, minute: 59, second: 59)))
                    .storePurchases.activeSubscriptions == 3)

        // An edition narrows the demo devices (those that spent a demo on it), not the purchases.
        let nacional = try await store.statistics(StatisticsQuery(editionID: 1, now: now)).storePurchases
        #expect(nacional.demoConversion == [P.DemoConversion(appKey: "quiosc", appName: "El Quiosc", devices: 1, purchased: 1)])
        #expect(nacional.byDayAndKind == all.byDayAndKind && nacional.revenue == all.revenue)
        let comarques = try await store.statistics(StatisticsQuery(editionID: 2, now: now)).storePurchases
        #expect(comarques.demoConversion == [P.DemoConversion(appKey: "quiosc", appName: "El Quiosc", devices: 1, purchased: 0)])

        // A refund and a hand revocation move the numbers at once; a restore moves them back.
        _ = try await store.changePurchase(appKey: "quiosc", store: .apple, originalID: "P1", recording: nil) { held in
            held?.setRevokedByOperator(true, at: now)
        }
        let revoked = try await store.statistics(StatisticsQuery(now: now)).storePurchases
        #expect(revoked.activeSubscriptions == 2 && revoked.refunds == 4)
        #expect(revoked.revenue.first == P.Revenue(currency: "EUR", payments: 4, thousandths: 10_980))
        #expect(revoked.demoConversion == all.demoConversion, "a purchase bought counts, whatever became of it")
        _ = try await store.changePurchase(appKey: "quiosc", store: .apple, originalID: "P1", recording: nil) { held in
            held?.setRevokedByOperator(false, at: now)
        }
        #expect(try await store.statistics(StatisticsQuery(now: now)).storePurchases == all)
    }
}
