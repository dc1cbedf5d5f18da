import Crypto

/// A database's tables read as rows of text, for copying them to another engine (`db copy`).
/// Integers are written in decimal and booleans as `0` or `1`, the same on every engine.
package protocol TableExport: Sendable {
    /// Hands `body` the rows of `table` (the given columns, in that order) in batches of at most
    /// `batchSize`, reading the next batch while `body` works on one.
    func exportRows(table: String, columns: [String], batchSize: Int,
                    into body: ([[String?]]) async throws -> Void) async throws
}

/// A table's row count and a checksum of its rows that does not depend on their order, computed the
/// same way on both sides of a copy.
package struct TableChecksum: Sendable, Hashable, CustomStringConvertible {
    package private(set) var rows = 0
    private var sum: UInt64 = 0

    package init() {}

    package mutating func add(_ row: [String?]) {
        var text = ""
        for value in row { text += (value ?? "\u{0}") + "\u{1F}" }
        let digest = SHA256.hash(data: Array(text.utf8))
        sum &+= digest.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        rows += 1
    }

    package var description: String { "\(rows) rows, checksum \(String(sum, radix: 16))" }
}

/// What `db copy` did to one table.
package struct TableCopyReport: Sendable, Hashable {
    package var table: String
    package var source: TableChecksum
    package var target: TableChecksum
    package init(table: String, source: TableChecksum, target: TableChecksum) {
        self.table = table; self.source = source; self.target = target
    }
}

/// Why `db copy` refused or failed; nothing was changed in the target.
package enum TableCopyError: Error, Hashable, CustomStringConvertible {
    /// The target holds other data than the source's; `--replace` overwrites it.
    case targetHoldsOtherData(table: String, rows: Int)
    /// After copying, a table's rows differ (nothing was committed).
    case mismatch(table: String, source: String, target: String)

    package var description: String {
        switch self {
        case .targetHoldsOtherData(let table, let rows):
            "the target database already holds other data (\(table): \(rows) rows); give --replace to overwrite it with the source"
        case .mismatch(let table, let source, let target):
            "\(table) differs after copying (source \(source), target \(target)); nothing was committed"
        }
    }
}
