import KioskIntegers
import KioskModels

/// The conditions a `StatisticsQuery` puts on one table the statistics read: each store writes them in
/// its SQL, every value through its own placeholder.
package struct StatisticsFilter: Sendable, Hashable {
    /// A value a column is compared with.
    package enum Value: Sendable, Hashable {
        case integer(Int64)
        case text(String)
    }

    /// `column comparison value`, e.g. `c.day >= $1`.
    package struct Condition: Sendable, Hashable {
        package var column: String
        package var comparison: String
        package var value: Value
    }

    package var conditions: [Condition]

    /// The conditions joined by `AND` after `keyword` (`WHERE`, or `AND` to extend a clause), each value
    /// written by `placeholder`, which binds it; empty when there is none.
    package func clause(_ keyword: String, _ placeholder: (Value) -> String) -> String {
        guard !conditions.isEmpty else { return "" }
        return keyword + " " + conditions.map { "\($0.column) \($0.comparison) \(placeholder($0.value))" }
            .joined(separator: " AND ")
    }
}

extension StatisticsQuery {
    /// The common table expression `demo`, in SQL both engines read alike: per app and device, the first
    /// demo grant made within `demoGrantsFilter` (its clause given as `filter`), how many, and how many used.
    package static func demoDevices(_ filter: String) -> String {
        """
        WITH demo AS (
            SELECT g.app_key, g.device_key, MIN(g.granted_at) AS first_grant,
                   COUNT(*) AS grants, COUNT(g.used_at) AS used
            FROM demo_grants g
            \(filter)
            GROUP BY g.app_key, g.device_key
        )
        """
    }

    /// On `download_counts` (aliased `c`): the days, the app and the edition.
    package var downloadCountsFilter: StatisticsFilter {
        filter(days("c.day"), app: "c.app_key", edition: "c.edition_id")
    }

    /// On `demo_grants` (aliased `g`): grants made within the days (UTC), on the app, spent on the edition.
    package var demoGrantsFilter: StatisticsFilter {
        let from = from.map { Condition(column: "g.granted_at", comparison: ">=", value: .integer(Int64(widening: $0.daysSinceEpoch) * 86_400)) }
        let to = to.map { Condition(column: "g.granted_at", comparison: "<", value: .integer(Int64(widening: $0.daysSinceEpoch + 1) * 86_400)) }
        return filter([from, to], app: "g.app_key", edition: "g.edition_id")
    }

    /// On `subscriptions` (aliased `s`), for a conversion: with an edition, a subscription to it.
    package var conversionSubscriptionsFilter: StatisticsFilter { filter([], app: nil, edition: "s.edition_id") }

    /// On `active_identities` (aliased `x`): the days and the app (a sighting names no edition).
    package var activeIdentitiesFilter: StatisticsFilter { filter(days("x.day"), app: "x.app_key", edition: nil) }

    /// How many issues `topIssues` lists, never fewer than none.
    package var topIssuesLimit: Int { max(0, topIssues) }

    private typealias Condition = StatisticsFilter.Condition

    /// `column` (days since 1970-01-01) within `from`...`to`.
    private func days(_ column: String) -> [Condition?] {
        [from.map { Condition(column: column, comparison: ">=", value: .integer(Int64(widening: $0.daysSinceEpoch))) },
         to.map { Condition(column: column, comparison: "<=", value: .integer(Int64(widening: $0.daysSinceEpoch))) }]
    }

    /// `conditions`, then the app's and the edition's where the query names them and the table has them.
    private func filter(_ conditions: [Condition?], app: String?, edition: String?) -> StatisticsFilter {
        let app = app.flatMap { column in appKey.map { Condition(column: column, comparison: "=", value: .text($0)) } }
        let edition = edition.flatMap { column in
            editionID.map { Condition(column: column, comparison: "=", value: .integer(Int64(widening: $0))) }
        }
        return StatisticsFilter(conditions: (conditions + [app, edition]).compactMap { $0 })
    }
}
