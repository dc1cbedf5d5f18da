import KioskModels
import KioskStoreSupport
import PostgresNIO

extension SearchQuery {
    /// The query in `to_tsquery`'s syntax: each word a quoted lexeme (letters, marks and digits only, so
    /// nothing in it is tsquery syntax), a phrase's words joined by `<->`, `:*` after a prefix, AND-ed.
    /// `to_tsquery('kiosk_search', …)` then folds accents and case as the index did.
    var tsqueryText: String {
        terms.map { term in
            let words = term.words.map { "'" + $0.escapingTSQuery + "'" }
            return "(" + words.joined(separator: " <-> ") + (term.isPrefix ? ":*" : "") + ")"
        }.joined(separator: " & ")
    }

    /// Each two adjacent words of every phrase, `"first second"`, for `kiosk_phrase_pairs` (migration 6);
    /// empty when no term is a phrase. A prefix (a phrase's last word) makes no pair.
    ///
    /// The pairs are made from each two words apart, not from the phrase whole: a word the text search
    /// parser reads no lexeme in (a lone combining mark) makes `to_tsquery` skip a position (`'a' <2> 'c'`),
    /// which the pairs of the phrase's text (`"a c"`) would not allow.
    var adjacentWords: [String] {
        terms.flatMap { term in
            let words = term.isPrefix ? term.words.dropLast() : term.words[...]
            return zip(words, words.dropFirst()).map { $0 + " " + $1 }
        }
    }
}

extension String {
    /// Escapes a quoted tsquery lexeme's `'` and `\`; words never hold one, this is a second line of defence.
    fileprivate var escapingTSQuery: String {
        var escaped = ""
        for character in self {
            if character == "'" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}

extension PostgresKioskStore {
    /// `ts_headline`'s options: one fragment of about 12-24 words, matches between the markers the
    /// excerpt is made from (`PageText.fragment(fromMarked:)`).
    static let headlineOptions = "StartSel=\"\(PageText.matchStart)\", StopSel=\"\(PageText.matchEnd)\", "
        + "MaxWords=24, MinWords=12, ShortWord=1, MaxFragments=1, FragmentDelimiter=\" … \""

    /// Characters of text on each side of the first match that `ts_headline` is given for an excerpt.
    static let excerptMargin = 200

    public func searchPages(_ search: PageSearch) async throws -> [PageSearchHit] {
        var sql = DynamicQuery()
        let query = sql.bind(search.query.tsqueryText)
        let editions = sql.bind(search.editionIDs)
        let from = sql.bind(search.from?.description ?? "0001-01-01")
        let through = sql.bind(search.through?.description ?? "9999-12-31")
        let limit = sql.bind(search.limit)
        // Where the excerpt is looked for: the first term's words as the text would show them.
        let key = sql.bind(search.query.terms.first.map { $0.words.joined(separator: " ") } ?? "")
        let margin = String(Self.excerptMargin)
        let options = sql.bind(Self.headlineOptions)
        let window = "edition_id = ANY(\(editions)) AND date BETWEEN \(from) AND \(through)"
        let adjacent = search.query.adjacentWords
        // The hits, newest first: pages found through the words' GIN index or walked newest first by date,
        // as the planner estimates cheaper. With a phrase of two words or more, through the pairs' index
        // (migration 6) instead: the pages holding every two adjacent words of each phrase, in order, then
        // the query itself on those, only until `limit` pass (for a rare phrase of two words, every page
        // holding the pair does). `OFFSET 0` keeps the check out of the scan, so that it is made only on
        // the rows kept, in order, until `limit` pass (the scan under it keeps its order); `ts_match_vq` is
        // `@@` as a function, which the planner takes to keep a third of the rows instead of estimating
        // the phrase from its words as if they were independent (a rare phrase's words are often each on
        // most pages).
        let hits = adjacent.isEmpty ? """
            SELECT edition_id, date, number, text FROM page_texts
            WHERE search @@ to_tsquery('kiosk_search', \(query)) AND \(window)
            ORDER BY date DESC, edition_id, number LIMIT \(limit)
            """ : """
            SELECT edition_id, date, number, text FROM (
                SELECT edition_id, date, number, text, search FROM page_texts
                WHERE pairs @> kiosk_phrase_pairs(\(sql.bind(adjacent))) AND \(window)
                ORDER BY date DESC, edition_id, number OFFSET 0) c
            WHERE ts_match_vq(search, to_tsquery('kiosk_search', \(query))) LIMIT \(limit)
            """
        // The excerpts are made only for the hits kept (the inner query's limit), from the text as indexed
        // (`<` followed by a space: see the migration). `ts_headline` parses all the text it is given
        // (~0.2 ms for a page of 300 words), so it is given a window of `margin` characters either side of
        // the first place the key appears (case folded, then accents too), cut at white space; when the key
        // is not found there (a phrase across punctuation) or the window's excerpt marks no match, the
        // whole page. `OFFSET 0` keeps each step computed once a row.
        let statement = sql.query("""
            SELECT h.edition_id, h.date, h.number,
                   CASE WHEN strpos(x.part, chr(2)) > 0 THEN x.part
                        ELSE ts_headline('kiosk_search', replace(h.text, '<', '< '), q, \(options)) END
            FROM (\(hits)) h,
                 to_tsquery('kiosk_search', \(query)) q,
                 lower(unaccent(\(key))) k(w),
                 LATERAL (SELECT CASE WHEN k.w = '' THEN 0
                                      ELSE coalesce(nullif(strpos(lower(h.text), k.w), 0), strpos(lower(unaccent(h.text)), k.w))
                                 END AS pos OFFSET 0) p,
                 LATERAL (SELECT CASE WHEN p.pos = 0 OR length(h.text) <= 2 * \(margin) THEN h.text
                                      ELSE regexp_replace(regexp_replace(
                                               substr(h.text, greatest(1, p.pos - \(margin)), 2 * \(margin) + length(k.w)),
                                               CASE WHEN p.pos > \(margin) + 1 THEN '^\\S*' ELSE '^' END, ''),
                                               CASE WHEN greatest(1, p.pos - \(margin)) + 2 * \(margin) + length(k.w) <= length(h.text)
                                                    THEN '\\S*$' ELSE '$' END, '')
                                 END AS t OFFSET 0) y,
                 LATERAL (SELECT ts_headline('kiosk_search', replace(y.t, '<', '< '), q, \(options)) AS part OFFSET 0) x
            ORDER BY h.date DESC, h.edition_id, h.number
            """)
        let rows = try await withConnection { [self] c in try await c.rows(statement, (Int, String, Int, String).self, logger: logger) }
        return rows.compactMap { row in
            IssueDate(row.1).map { PageSearchHit(editionID: row.0, date: $0, pageNumber: row.2,
                                                 fragment: PageText.fragment(fromMarked: row.3)) }
        }
    }

    /// Replaces the issue's page texts with those of `pages` (in the caller's transaction).
    func replacePageTexts(_ c: PostgresConnection, editionID: Int, date: IssueDate, pages: [PublishedPage]) async throws {
        let day = date.description
        try await c.run("DELETE FROM page_texts WHERE edition_id = \(editionID) AND date = \(day)", logger: logger)
        let texts = pages.searchTexts
        guard !texts.isEmpty else { return }
        try await c.run("""
            INSERT INTO page_texts (edition_id, date, number, text)
            SELECT \(editionID), \(day), * FROM unnest(\(texts.map(\.number)), \(texts.map(\.text)))
            """, logger: logger)
    }
}
