import GRDB
import KioskModels

/// A match of `page_text_index`: its rowid (`key`, the page's `PageSearchKey`) and the excerpt FTS5
/// marked the match in (`snippet`).
struct PageTextMatchRow: FetchableRecord {
    var key: PageSearchKey
    var snippet: String

    init(row: Row) { key = PageSearchKey(value: row["key"]); snippet = row["snippet"] }

    var hit: PageSearchHit {
        PageSearchHit(editionID: key.editionID, date: key.date, pageNumber: key.page, fragment: PageText.fragment(fromMarked: snippet))
    }
}
