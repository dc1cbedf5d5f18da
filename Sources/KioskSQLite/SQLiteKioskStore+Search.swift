import GRDB
import KioskIntegers
import KioskModels
import KioskStoreSupport

/// A page's place in search order, as the `page_texts` key (and the FTS5 rowid): newer days have
/// larger keys; on one day lower edition ids, then lower page numbers, have larger keys. So walking the
/// index by descending rowid gives hits newest first, and a date range is a rowid range.
///
/// Bits, high to low: 22 for the day (days since 0001-01-01), 31 for `Int32.max - edition`, 10 for
/// `1023 - page`. Pages above 1023 have no key (the publish limit is 1000 pages).
struct PageSearchKey: Hashable {
    static let maxPage = 1023
    static let maxEdition = Int(widening: Int32.max)
    /// Days from 0001-01-01 to 1970-01-01.
    static let dayOffset = 719_162

    let value: Int64

    init?(editionID: Int, date: IssueDate, page: Int) {
        guard (1...Self.maxEdition).contains(editionID), (1...Self.maxPage).contains(page) else { return nil }
        value = Self.dayBits(date) | Int64(widening: Self.editionSlot(editionID)) << 10 | Int64(widening: Self.maxPage - page)
    }

    init(value: Int64) { self.value = value }

    var date: IssueDate { IssueDate(daysSinceEpoch: Int(widening: value >> 41) - Self.dayOffset) }
    var editionID: Int { Self.maxEdition - Int(widening: (value >> 10) & Int64(widening: Self.maxEdition)) }
    var page: Int { Self.maxPage - Int(widening: value & Int64(widening: Self.maxPage)) }

    /// The edition's bits, as `(key >> 10) & 0x7FFFFFFF` reads them in SQL.
    static func editionSlot(_ editionID: Int) -> Int { maxEdition - editionID }

    private static func dayBits(_ date: IssueDate) -> Int64 { Int64(widening: date.daysSinceEpoch + dayOffset) << 41 }

    /// The smallest and largest keys of the pages of days `from`...`through` (either open).
    static func range(from: IssueDate?, through: IssueDate?) -> ClosedRange<Int64> {
        let low = from.map(dayBits) ?? 0
        let high = through.map { dayBits($0) | ((1 << 41) - 1) } ?? Int64.max
        return low...high
    }
}

/// Why a page cannot be indexed.
public struct PageSearchKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    public var editionID: Int
    public var page: Int
    public var description: String {
        "page \(page) of edition \(editionID) cannot be indexed for search (pages 1-\(PageSearchKey.maxPage), editions 1-\(PageSearchKey.maxEdition))"
    }
}

extension SearchQuery {
    /// The query in FTS5's syntax: each term a double-quoted string (a phrase; its words are letters,
    /// marks and digits only, so nothing in them is FTS5 syntax), `*` after a prefix, AND-ed.
    var fts5Expression: String {
        terms.map { term in
            "\"" + term.words.joined(separator: " ").replacingQuotes + "\"" + (term.isPrefix ? "*" : "")
        }.joined(separator: " AND ")
    }
}

extension String {
    /// Doubles `"` (FTS5's string escape); words never hold one, this is a second line of defence.
    fileprivate var replacingQuotes: String { split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") }
}

extension SQLiteKioskStore {
    public func searchPages(_ search: PageSearch) async throws -> [PageSearchHit] {
        let range = PageSearchKey.range(from: search.from, through: search.through)
        let slots = "[" + search.editionIDs.map { String(PageSearchKey.editionSlot($0)) }.joined(separator: ",") + "]"
        let expression = search.query.fts5Expression
        return try await longRead { db in
            try PageTextMatchRow.fetchAll(db.cachedStatement(sql: """
                SELECT rowid AS key, snippet(page_text_index, 0, char(2), char(3), '…', 24) AS snippet
                FROM page_text_index
                WHERE page_text_index MATCH ? AND rowid BETWEEN ? AND ?
                  AND (rowid >> 10) & 2147483647 IN (SELECT value FROM json_each(?))
                ORDER BY rowid DESC LIMIT ?
                """), arguments: [expression, range.lowerBound, range.upperBound, slots, search.limit]).map(\.hit)
        }
    }

    /// Replaces the issue's page texts with those of `pages` (in the caller's transaction).
    func replacePageTexts(_ db: Database, editionID: Int, date: IssueDate, pages: [PublishedPage]) throws {
        try deletePageTexts(db, editionID: editionID, date: date)
        let insert = try db.cachedStatement(sql: """
            INSERT INTO page_texts (key, edition_id, date, number, text) VALUES (?, ?, ?, ?, ?)
            """)
        for (number, text) in pages.searchTexts {
            guard let key = PageSearchKey(editionID: editionID, date: date, page: number) else {
                throw PageSearchKeyError(editionID: editionID, page: number)
            }
            try insert.execute(arguments: [key.value, editionID, date.description, number, text])
        }
    }

    /// Removes the issue's page texts (in the caller's transaction).
    func deletePageTexts(_ db: Database, editionID: Int, date: IssueDate) throws {
        try db.cachedStatement(sql: "DELETE FROM page_texts WHERE edition_id = ? AND date = ?")
            .execute(arguments: [editionID, date.description])
    }
}
