import GRDB

/// A record whose `Columns` list every column of its table, in the table's order.
protocol ListedColumns {
    associatedtype Columns: ColumnExpression & CaseIterable & RawRepresentable<String>
}

extension ListedColumns {
    /// The record's columns qualified by a table alias, for a SELECT list: `t.app_key, t.edition_id, …`.
    static func columnList(as alias: String) -> String {
        Columns.allCases.map { "\(alias).\($0.rawValue)" }.joined(separator: ", ")
    }
}
