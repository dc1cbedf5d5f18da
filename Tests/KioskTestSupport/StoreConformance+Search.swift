import KioskModels
import Testing

/// Full-text search over page texts (`KioskStore.searchPages`), the same on every engine.
extension StoreConformance {
    /// Publishes (edition, date) with the given page texts (nil: a page without text).
    static func publish(_ store: any KioskDatabase, edition: Int, date: String, texts: [String?]) async throws {
        let day = Self.date(date)
        let revision = try await store.nextRevision(editionID: edition, date: day)
        var pages = TestIssues.pages(edition: edition, date: day, revision: revision, count: texts.count)
        for index in pages.indices { pages[index].text = texts[index] }
        _ = try await store.publishIssue(editionID: edition, date: day, revision: revision, pages: pages,
                                         bundle: nil, at: t0)
    }

    /// Hits as "edition date page", in the store's order.
    static func search(_ store: any KioskDatabase, _ text: String, editions: [Int] = [1, 2, 8], from: String? = nil,
                       through: String? = nil, limit: Int = 20) async throws -> [String] {
        try await hits(store, text, editions: editions, from: from, through: through, limit: limit)
            .map { "\($0.editionID) \($0.date) \($0.pageNumber)" }
    }

    static func hits(_ store: any KioskDatabase, _ text: String, editions: [Int] = [1, 2, 8], from: String? = nil,
                     through: String? = nil, limit: Int = 20) async throws -> [PageSearchHit] {
        try await store.searchPages(PageSearch(query: try SearchQuery(parsing: text), editionIDs: editions,
                                               from: from.map(date), through: through.map(date), limit: limit))
    }

    /// Accents and case folded both ways, phrases, prefixes, the editions and date filters, newest first
    /// (then edition, then page), the limit; withdraw removes an issue's text, republish replaces it;
    /// excerpts are HTML with matches in `<b>`.
    func search() async throws {
        let store = try await store()
        try await Self.publish(store, edition: 1, date: "2025-05-01", texts: [
            "La Presència de l'alcalde al Ple municipal",
            "El pressupost municipal de Girona & Salt <Figueres>",
            nil,
        ])
        try await Self.publish(store, edition: 2, date: "2025-05-01", texts: ["presencia sense accent", "Girona"])
        try await Self.publish(store, edition: 8, date: "2025-05-03", texts: ["Cròniques de Girona", "res"])
        try await Self.publish(store, edition: 1, date: "2025-04-20", texts: ["Girona, girona, GIRONA"])

        #expect(try await Self.search(store, "presencia") == ["1 2025-05-01 1", "2 2025-05-01 1"], "accent folded in the text")
        #expect(try await Self.search(store, "PRESÈNCIA") == ["1 2025-05-01 1", "2 2025-05-01 1"], "and in the query")
        #expect(try await Self.search(store, "girona") == [
            "8 2025-05-03 1", "1 2025-05-01 2", "2 2025-05-01 2", "1 2025-04-20 1",
        ], "newest first, then edition, then page")
        #expect(try await Self.search(store, "girona", limit: 2) == ["8 2025-05-03 1", "1 2025-05-01 2"])
        #expect(try await Self.search(store, "girona", editions: [1]) == ["1 2025-05-01 2", "1 2025-04-20 1"])
        #expect(try await Self.search(store, "girona", from: "2025-04-21", through: "2025-05-01") == [
            "1 2025-05-01 2", "2 2025-05-01 2"])
        #expect(try await Self.search(store, "girona", through: "2025-04-20") == ["1 2025-04-20 1"])
        #expect(try await Self.search(store, "girona", from: "2025-05-02") == ["8 2025-05-03 1"])
        #expect(try await Self.search(store, "\"pressupost municipal\"") == ["1 2025-05-01 2"], "phrase")
        #expect(try await Self.search(store, "\"municipal pressupost\"") == [], "a phrase is in order")
        #expect(try await Self.search(store, "pressupost girona") == ["1 2025-05-01 2"], "words are AND-ed")
        #expect(try await Self.search(store, "pressupost cròniques") == [])
        #expect(try await Self.search(store, "pressu*") == ["1 2025-05-01 2"], "prefix")
        #expect(try await Self.search(store, "croniq*") == ["8 2025-05-03 1"], "prefix, accents folded")
        #expect(try await Self.search(store, "l'alcalde") == ["1 2025-05-01 1"], "words joined by an apostrophe")
        #expect(try await Self.search(store, "gir") == [], "a word is whole unless starred")
        #expect(try await Self.search(store, "NOT OR AND girona", editions: [8]) == [], "operators are words")
        #expect(try await Self.search(store, "girona)(* NEAR: ^", editions: [8]) == [], "NEAR is a word too")
        #expect(try await Self.search(store, "girona)(*:^-", editions: [8]) == ["8 2025-05-03 1"], "punctuation separates")

        let hit = try #require(try await Self.hits(store, "pressupost").first)
        #expect(hit.fragment.contains("<b>pressupost</b>"), "\(hit.fragment)")
        #expect(hit.fragment.contains("&amp; Salt &lt;") && !hit.fragment.contains("<F"), "the text is escaped: \(hit.fragment)")
        #expect(try await Self.search(store, "figueres") == ["1 2025-05-01 2"], "a word in angle brackets is a word")
        let folded = try #require(try await Self.hits(store, "presencia", editions: [1]).first)
        #expect(folded.fragment.contains("<b>Presència</b>"), "the text as printed is marked: \(folded.fragment)")

        try await phrases(store)

        // Republish replaces the text; withdraw removes it; publishing again brings it back.
        try await Self.publish(store, edition: 1, date: "2025-05-01", texts: ["nou text de Girona"])
        #expect(try await Self.search(store, "pressupost") == [], "the old revision's text is gone")
        #expect(try await Self.search(store, "nou") == ["1 2025-05-01 1"])
        #expect(try await store.withdrawIssue(editionID: 1, date: Self.date("2025-05-01"), at: Self.t0))
        #expect(try await Self.search(store, "nou") == [], "withdrawn: not found")
        #expect(try await Self.search(store, "girona", editions: [1]) == ["1 2025-04-20 1"])
        try await Self.publish(store, edition: 1, date: "2025-05-01", texts: ["nou text"])
        #expect(try await Self.search(store, "nou") == ["1 2025-05-01 1"])
        // A page without text and an issue without texts publish as before.
        try await store.publishTestIssue(edition: 2, date: "2025-05-10")
        #expect(try await store.issueContents(editionID: 2, date: Self.date("2025-05-10"))?.pages.count == 3)
    }
}

extension StoreConformance {
    /// Phrases whose words are each on many pages but next to each other on few (what PostgreSQL finds
    /// through its index of adjacent words), of three words, with accents and across punctuation.
    func phrases(_ store: any KioskDatabase) async throws {
        try await Self.publish(store, edition: 8, date: "2025-03-01", texts: [
            "Girona té sequera. La sequera de Girona",
            "sequera i Girona",
            "La Girona sequera del ple",
            "Ple municipal, el municipal extraordinari",
            "el ple municipal extraordinari",
            "Girona, Sequera: PRESÈNCIA",
            "Girona sequer",
        ])
        let day = "2025-03-01"
        #expect(try await Self.search(store, "\"girona sequera\"", editions: [8], through: day) == [
            "8 \(day) 3", "8 \(day) 6"], "two words on most pages, together on two (one across punctuation)")
        #expect(try await Self.search(store, "girona sequera", editions: [8], through: day) == [
            "8 \(day) 1", "8 \(day) 2", "8 \(day) 3", "8 \(day) 6"], "without quotes: both words anywhere")
        #expect(try await Self.search(store, "\"sequera girona\"", editions: [8], through: day) == [], "in order")
        #expect(try await Self.search(store, "\"ple municipal extraordinari\"", editions: [8], through: day) == [
            "8 \(day) 5"], "three words: page 4 holds both pairs of them, not the phrase")
        #expect(try await Self.search(store, "\"el ple municipal extraordinari\"", editions: [8], through: day) == ["8 \(day) 5"])
        #expect(try await Self.search(store, "\"ple municipal el municipal\"", editions: [8], through: day) == [
            "8 \(day) 4"], "four words across a comma")
        #expect(try await Self.search(store, "\"Sequera presència\"", editions: [8], through: day) == [
            "8 \(day) 6"], "accents folded in the phrase")
        #expect(try await Self.search(store, "\"GIRONA SEQUERA PRESENCIA\"", editions: [8], through: day) == [
            "8 \(day) 6"], "and in the text, across punctuation")
        #expect(try await Self.search(store, "\"girona sequer*\"", editions: [8], through: day) == [
            "8 \(day) 3", "8 \(day) 6", "8 \(day) 7"], "a phrase ending in a prefix")
        #expect(try await Self.search(store, "\"girona sequera\" \"ple municipal\"", editions: [8], through: day) == [],
                "two phrases, each on other pages")
        #expect(try await Self.search(store, "\"girona sequera\" ple", editions: [8], through: day) == ["8 \(day) 3"])
        #expect(try await Self.search(store, "\"la girona sequera del ple\"", editions: [8], through: day) == ["8 \(day) 3"])
    }

    /// A withdrawn issue is neither listed nor found; restored, it is both again, with the same pages found;
    /// restoring needs the withdrawn revision; a republish drops the text kept at the withdrawal.
    func restoring() async throws {
        let store = try await store()
        try await Self.publish(store, edition: 1, date: "2025-05-01", texts: ["El ple de Girona", nil, "Girona i Salt"])
        try await Self.publish(store, edition: 1, date: "2025-04-30", texts: ["Figueres"])
        let may1 = Self.date("2025-05-01")
        func listed() async throws -> [String] {
            try await store.issues(editionID: 1, from: nil, direction: .descending, limit: 5).map(\.date.description)
        }
        #expect(try await store.issueStanding(editionID: 1, date: may1) == IssueStanding(revision: 1, withdrawn: false))
        #expect(try await store.issueStanding(editionID: 1, date: Self.date("2020-01-01")) == nil)
        #expect(try await store.restoreIssue(editionID: 1, date: may1, revision: 1) == false, "not withdrawn")

        #expect(try await store.withdrawIssue(editionID: 1, date: may1, at: Self.t0))
        #expect(try await Self.search(store, "girona") == [])
        #expect(try await listed() == ["2025-04-30"])
        #expect(try await store.issueStanding(editionID: 1, date: may1) == IssueStanding(revision: 1, withdrawn: true))
        #expect(try await store.restoreIssue(editionID: 1, date: may1, revision: 2) == false, "another revision")

        let version = try await store.catalogueVersion()
        #expect(try await store.restoreIssue(editionID: 1, date: may1, revision: 1))
        #expect(try await store.catalogueVersion() > version)
        #expect(try await Self.search(store, "girona") == ["1 2025-05-01 1", "1 2025-05-01 3"])
        #expect(try await listed() == ["2025-05-01", "2025-04-30"])
        #expect(try await store.restoreIssue(editionID: 1, date: may1, revision: 1) == false, "already visible")

        // Withdrawn, then published again with other text: the kept text is gone for good.
        #expect(try await store.withdrawIssue(editionID: 1, date: may1, at: Self.t0))
        try await Self.publish(store, edition: 1, date: "2025-05-01", texts: ["Banyoles"])
        #expect(try await store.withdrawIssue(editionID: 1, date: may1, at: Self.t0))
        #expect(try await store.restoreIssue(editionID: 1, date: may1, revision: 2))
        #expect(try await Self.search(store, "girona") == [])
        #expect(try await Self.search(store, "banyoles") == ["1 2025-05-01 1"])
    }
}
