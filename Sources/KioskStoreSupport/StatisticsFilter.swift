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

    /// The store purchase statistics' queries (`KioskStatistics.StorePurchases`), in SQL both engines read
    /// alike (`revoked` is an integer in SQLite and a boolean in PostgreSQL: only ever tested as a truth
    /// value). Each takes its filter's clause; `now` is the placeholder of `StatisticsQuery.now`.
    package enum StorePurchaseSQL {
        /// Rows (day in days since 1970-01-01, kind, purchases), by day then kind; `filter` is a `WHERE` clause.
        package static func byDayAndKind(_ filter: String) -> String {
            """
            SELECT p.created_at / 86400 AS day, p.kind AS kind, COUNT(*) AS purchases
            FROM store_purchases p
            \(filter)
            GROUP BY p.created_at / 86400, p.kind ORDER BY day, kind
            """
        }

        /// One value: subscriptions not revoked whose access ends after `now` (bound first); `filter` is an `AND` clause.
        package static func activeSubscriptions(now: String, _ filter: String) -> String {
            """
            SELECT COUNT(*) FROM store_purchases p
            WHERE p.kind = 'subscription' AND NOT p.revoked AND p.access_end > \(now) \(filter)
            """
        }

        /// One value: payments of the range revoked since; `filter` is an `AND` clause.
        package static func refunds(_ filter: String) -> String {
            "SELECT COUNT(*) FROM store_payments y WHERE y.revoked \(filter)"
        }

        /// Rows (currency, payments, sum of prices in thousandths), in no order (sorted by the caller, the
        /// same on both engines whatever their collations); `filter` is an `AND` clause.
        package static func revenue(_ filter: String) -> String {
            """
            SELECT y.currency, COUNT(*), CAST(SUM(y.price) AS bigint)
            FROM store_payments y
            WHERE NOT y.revoked AND y.price IS NOT NULL AND y.currency IS NOT NULL \(filter)
            GROUP BY y.currency
            """
        }

        /// Revenue rows by currency, by their bytes (the same order on both engines).
        package static func sorted(_ revenue: [KioskStatistics.StorePurchases.Revenue]) -> [KioskStatistics.StorePurchases.Revenue] {
            revenue.sorted { $0.currency.utf8.lexicographicallyPrecedes($1.currency.utf8) }
        }

        /// Rows (app key, app name, demo devices, of them those that bought), by app key; after
        /// `demoDevices(filter)`.
        package static let demoConversion = """
            SELECT d.app_key, COALESCE(a.name, '') AS app_name, COUNT(*) AS devices,
                   SUM(CASE WHEN EXISTS (
                       SELECT 1 FROM store_purchases p
                       WHERE p.app_key = d.app_key AND p.created_at >= d.first_grant
                         AND (p.device_key = d.device_key
                              OR p.id IN (SELECT v.purchase_id FROM store_purchase_devices v
                                          WHERE v.app_key = d.app_key AND v.device_key = d.device_key)
                              OR p.user_id IN (SELECT i.user_id FROM identities i
                                               WHERE i.app_key = d.app_key AND i.device_key = d.device_key AND i.user_id <> 0)))
                       THEN 1 ELSE 0 END) AS purchased
            FROM demo d LEFT JOIN apps a ON a.key = d.app_key
            GROUP BY d.app_key, a.name ORDER BY d.app_key
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

    /// On `store_purchases` (aliased `p`): purchases first heard of within the days (UTC), of the app.
    package var storePurchasesFilter: StatisticsFilter { filter(seconds("p.created_at"), app: "p.app_key", edition: nil) }

    /// On `store_purchases` (aliased `p`), for the subscriptions active now: the app only.
    package var activeSubscriptionsFilter: StatisticsFilter { filter([], app: "p.app_key", edition: nil) }

    /// On `store_payments` (aliased `y`): payments made within the days (UTC), of the app.
    package var storePaymentsFilter: StatisticsFilter { filter(seconds("y.paid_at"), app: "y.app_key", edition: nil) }

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

    /// `column` (Unix seconds) within the days `from`...`to` (UTC).
    private func seconds(_ column: String) -> [Condition?] {
        [from.map { Condition(column: column, comparison: ">=", value: .integer(Int64(widening: $0.daysSinceEpoch) * 86_400)) },
         to.map { Condition(column: column, comparison: "<", value: .integer(Int64(widening: $0.daysSinceEpoch + 1) * 86_400)) }]
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
