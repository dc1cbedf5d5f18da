import PostgresNIO
import Foundation
import KioskModels
@testable import KioskPostgres
import KioskTestPostgres
import KioskTestSupport
import Logging
import Testing

/// The index of adjacent word pairs (migration 6) only narrows what phrase queries read: on pages made to
/// trip a tokenizer (accents, case, punctuation, apostrophes, hyphens, `<`, lone combining marks, digits,
/// a page longer than a `tsvector` keeps positions for), every phrase finds exactly the pages that the
/// query alone (`search @@ to_tsquery(…)`, as before the migration) finds.
@Suite(.enabled(if: TestPostgres.configured, TestPostgres.skipReason))
struct PostgresPhraseSearchTests {
    static let words = ["girona", "Girona", "sequera", "SEQUERA", "presència", "presencia", "l", "alcalde", "sant",
                        "joan", "sant-joan", "de", "2025", "a\u{301}", "\u{301}", "ple"]
    static let separators = [" ", " ", " ", ", ", ". ", "'", "-", " <", "> ", " \u{301} ", "·", ": "]

    /// Pages of `count` words drawn from `words`, joined by `separators`.
    static func pages(_ count: Int, words: Int, seed: UInt64) -> [String] {
        var noise = Noise(seed: seed)
        return (0..<count).map { _ in
            var text = ""
            for index in 0..<words {
                if index > 0 { text += separators[Int(noise.next() % UInt64(separators.count))] }
                text += Self.words[Int(noise.next() % UInt64(Self.words.count))]
            }
            return text
        }
    }

    @Test func pairsNeverDropAMatch() async throws {
        try await TestPostgres.withDatabase { configuration in
            let store = try await PostgresKioskStore.connect(configuration, logger: Logger(label: "test"))
            try await store.syncCatalogue(SampleCatalogue.catalogue, dryRun: false)
            // 17 000 words: past the last position a tsvector keeps (16 383) and past 256 of one word.
            let long = String(repeating: "de sant ", count: 8_300) + "girona sequera de presència"
            var texts = Self.pages(60, words: 30, seed: 7) + [long, "Girona < sequera", "girona\u{301} sequera"]
            texts.append("l'alcalde de Sant-Joan, 2025: sequera")
            var pages = TestIssues.pages(edition: 1, date: IssueDate("2025-05-01")!, revision: 1, count: texts.count)
            for index in pages.indices { pages[index].text = texts[index] }
            _ = try await store.publishIssue(editionID: 1, date: IssueDate("2025-05-01")!, revision: 1, pages: pages,
                                             bundle: nil, at: 1_000)

            let base = ["girona", "sequera", "presencia", "PRESÈNCIA", "l", "alcalde", "sant", "joan", "de", "2025", "ple"]
            var queries = base.flatMap { first in base.map { "\"\(first) \($0)\"" } }
            var noise = Noise(seed: 11)
            for _ in 0..<60 {
                let phrase = (0..<3).map { _ in base[Int(noise.next() % UInt64(base.count))] }
                queries.append("\"" + phrase.joined(separator: " ") + "\"")
            }
            queries += ["\"girona \u{301} sequera\"", "\"a\u{301} sequera\"", "l'alcalde", "sant-joan", "\"de sant-joan\"",
                        "\"sant joan\"", "\"girona seq*\"", "\"de sant de sant\"", "\"sequera de presència\"",
                        "\"de girona\" \"sequera de\"", "\"girona sequera\" alcalde", "\"girona < sequera\""]
            var checked = 0
            for text in queries {
                let query = try SearchQuery(parsing: text)
                let found = try await store.searchPages(PageSearch(query: query, editionIDs: [1], limit: 100)).map(\.pageNumber)
                let tsquery = query.tsqueryText
                let expected = try await store.withConnection { c in
                    try await c.values("""
                        SELECT number FROM page_texts WHERE search @@ to_tsquery('kiosk_search', \(tsquery)) ORDER BY number
                        """, Int.self, logger: store.logger)
                }
                #expect(found == Array(expected.prefix(100)), "\(text)")
                checked += expected.isEmpty ? 0 : 1
            }
            #expect(checked > queries.count / 4, "most queries find something: \(checked) of \(queries.count)")
            await store.close()
        }
    }
}
