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
    }
}
