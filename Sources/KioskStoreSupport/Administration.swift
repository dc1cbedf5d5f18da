import Foundation
import KioskModels

/// Reports an import's progress about twenty times as (rows written, rows), the last once every row is
/// written.
package struct ImportProgress: Sendable {
    private let rows: Int
    private let step: Int
    private let report: @Sendable (Int, Int) -> Void

    package init(rows: Int, report: @escaping @Sendable (Int, Int) -> Void) {
        self.rows = rows; self.step = max(1, rows / 20); self.report = report
    }

    /// Before row `index` is written.
    package func writing(row index: Int) {
        if index > 0 && index % step == 0 { report(index, rows) }
    }

    /// Once every row is written.
    package func finished() { report(rows, rows) }
}

/// `LIKE` patterns (escape character `\`).
package enum LikePattern {
    /// Matches any text that contains `text`, whose `%`, `_` and `\` stand for themselves.
    package static func containing(_ text: String) -> String {
        "%" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_") + "%"
    }
}
