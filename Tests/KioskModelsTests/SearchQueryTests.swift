import KioskModels
import Testing

/// The reader's query language: only words ever reach an engine.
@Suite struct SearchQueryTests {
    typealias Term = SearchQuery.Term

    func terms(_ text: String) throws -> [Term] { try SearchQuery(parsing: text).terms }

    @Test func plainWordsAreLowercasedAndAndEd() throws {
        #expect(try terms("Pressupost  MUNICIPAL") == [Term(words: ["pressupost"]), Term(words: ["municipal"])])
        #expect(try terms("Presència") == [Term(words: ["presència"])], "accents are kept; the engines fold them")
    }

    @Test func quotesMakePhrasesAndAStarMakesAPrefix() throws {
        #expect(try terms("\"Ple municipal\" girona") == [Term(words: ["ple", "municipal"]), Term(words: ["girona"])])
        #expect(try terms("pressu*") == [Term(words: ["pressu"], isPrefix: true)])
        #expect(try terms("\"ple muni*\"") == [Term(words: ["ple", "muni"], isPrefix: true)])
        #expect(try terms("\"ple muni\"*") == [Term(words: ["ple", "muni"], isPrefix: true)])
        #expect(try terms("p*") == [Term(words: ["p"])], "a one-letter stem is a whole word")
        #expect(try terms("a*b") == [Term(words: ["a", "b"])], "a star inside a word separates")
        #expect(try terms("word**") == [Term(words: ["word"])])
    }

    @Test func wordsJoinedByPunctuationArePhrases() throws {
        #expect(try terms("l'alcalde") == [Term(words: ["l", "alcalde"])])
        #expect(try terms("col·legi Sant-Joan") == [Term(words: ["col", "legi"]), Term(words: ["sant", "joan"])])
    }

    @Test func operatorsAndSyntaxAreText() throws {
        #expect(try terms("NOT girona OR NEAR(a b)") == [
            Term(words: ["not"]), Term(words: ["girona"]), Term(words: ["or"]), Term(words: ["near", "a"]), Term(words: ["b"]),
        ])
        #expect(try terms("text:girona -salt ^ara +avui") == [
            Term(words: ["text", "girona"]), Term(words: ["salt"]), Term(words: ["ara"]), Term(words: ["avui"]),
        ])
        #expect(try terms("a & b | !c <-> d:*") == [
            Term(words: ["a"]), Term(words: ["b"]), Term(words: ["c"]), Term(words: ["d"]),
        ])
        #expect(try terms("'); DROP TABLE pages; --") == [Term(words: ["drop"]), Term(words: ["table"]), Term(words: ["pages"])])
    }

    @Test func strayQuotesSeparate() throws {
        #expect(try terms("\"ple municipal") == [Term(words: ["ple"]), Term(words: ["municipal"])])
        #expect(try terms("\"a b\" \"c") == [Term(words: ["a", "b"]), Term(words: ["c"])])
        #expect(try terms("\"\"girona") == [Term(words: ["girona"])])
    }

    @Test func controlCharactersSeparate() throws {
        #expect(try terms("ple\u{0}municipal\u{7}\tavui\u{2}x") == [
            Term(words: ["ple"]), Term(words: ["municipal"]), Term(words: ["avui"]), Term(words: ["x"]),
        ])
    }

    @Test func hostileTextsAreRefusedByName() {
        #expect(throws: SearchQueryError.noWords) { try SearchQuery(parsing: "") }
        #expect(throws: SearchQueryError.noWords) { try SearchQuery(parsing: "  \" ( ) * : ^ - \"\" ") }
        #expect(throws: SearchQueryError.tooLong(maximum: SearchQuery.maxCharacters)) {
            try SearchQuery(parsing: String(repeating: "a", count: 10_000))
        }
        #expect(throws: SearchQueryError.tooManyTerms(maximum: SearchQuery.maxTerms)) {
            try SearchQuery(parsing: Array(repeating: "a", count: 17).joined(separator: " "))
        }
        #expect(throws: SearchQueryError.tooManyWords(maximum: SearchQuery.maxWords)) {
            try SearchQuery(parsing: "\"" + Array(repeating: "a", count: 33).joined(separator: " ") + "\"")
        }
        #expect((try? SearchQuery(parsing: String(repeating: "a ", count: 16))) != nil)
    }

    @Test func fragmentsAreHTMLWithMarkedMatches() {
        #expect(PageText.fragment(fromMarked: "  El \u{2}Ple\u{3}\n\n de <Girona> & Salt… ") == "El <b>Ple</b> de &lt;Girona&gt; &amp; Salt…")
        #expect(PageText.fragment(fromMarked: "\u{2}obert") == "<b>obert</b>", "an open mark is closed")
        #expect(PageText.cleaned("a\u{0}b\u{2}c\u{7F}d\ne") == "a b c d\ne")
    }
}
