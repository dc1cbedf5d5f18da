import Foundation
import KioskModels
import KioskRPC
import KioskTestSupport
import Testing
import XMLRPC

/// Catalogue answers kept between calls are the answers a fresh call would give: the same bytes until
/// the catalogue or the link bucket changes, never after.
@Suite struct AnswerCacheTests {
    @Test func aKeptAnswerIsTheFreshAnswerUntilTheCatalogueChanges() async throws {
        let wire = try await Wire()
        let uncached = try await Wire(answerCacheBytes: 0)
        let editions = ["quiosc", "device-1"]
        let issues = ["quiosc", "device-1", "<int>1</int>", "2025-05-31", "<int>7</int>", "DESC"]
        let first = try await wire.value("epquiosc.getEdicions", editions)
        let again = try await wire.value("epquiosc.getEdicions", editions)
        #expect(first == again)
        let fresh = try await uncached.value("epquiosc.getEdicions", editions)
        #expect(first == fresh, "kept or not, the same answer")
        _ = try await wire.value("epquiosc.getDarrersEdicio", issues)
        let dates = try await wire.value("epquiosc.getDarrersEdicio", issues)
        let freshDates = try await uncached.value("epquiosc.getDarrersEdicio", issues)
        #expect(dates == freshDates)
        #expect(wire.sections.cacheLookups == ["getEdicions:miss", "getEdicions:hit", "getDarrersEdicio:miss", "getDarrersEdicio:hit"])

        // A publish by anyone (here straight into the store, as the CLI or another instance would) retires them.
        try await wire.fixture.store.publishTestIssue(edition: 1, date: "2025-06-01")
        let newer = try await wire.value("epquiosc.getEdicions", editions)
        #expect(newer[0]?["data"]?.stringValue == "2025-06-01")
        let newerIssues = try await wire.value("epquiosc.getDarrersEdicio", ["quiosc", "d", "<int>1</int>", "", "<int>7</int>", "DESC"])
        #expect(newerIssues[0]?["data"]?.stringValue == "2025-06-01")

        // Withdrawn: gone at once.
        #expect(try await wire.fixture.store.withdrawIssue(editionID: 1, date: IssueDate("2025-06-01")!, at: SampleCatalogue.startTime))
        #expect(try await wire.value("epquiosc.getEdicions", editions)[0]?["data"]?.stringValue == "2025-05-31")

        // A new link bucket: links signed anew.
        let before = try await wire.value("epquiosc.getEdicions", editions)
        wire.fixture.clock.advance(1)
        uncached.fixture.clock.advance(1)
        let after = try await wire.value("epquiosc.getEdicions", editions)
        let freshAfter = try await uncached.value("epquiosc.getEdicions", editions)
        #expect(before != after && after == freshAfter)
    }

    @Test func callersOfAKeptAnswerAreStillCountedAsSeen() async throws {
        let wire = try await Wire()
        for device in ["seen-1", "seen-2", "seen-3"] { _ = try await wire.value("epquiosc.getEdicions", ["quiosc", device]) }
        #expect(wire.sections.cacheLookups.filter { $0.hasSuffix(":hit") }.count == 2)
        var devices = 0
        for _ in 0..<100 {   // the activity log writes in the background
            devices = try await wire.fixture.store.statistics(StatisticsQuery()).activeDevices
                .filter { $0.appKey == "quiosc" }.reduce(0) { $0 + $1.devices }
            if devices == 3 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(devices == 3, "every caller counted, kept answer or not")
    }

    @Test func pageListsAreKeptBesideVersionedAnswers() async throws {
        let wire = try await Wire()
        let call = ["quiosc", "", "<int>8</int>", "2025-05-25", "", "iOS"]
        _ = try await wire.value("epquiosc.getEdicions", ["quiosc", ""])
        let first = try await wire.value("epquiosc.getEdicio", call)
        _ = try await wire.value("epquiosc.getEdicions", ["quiosc", ""])
        let second = try await wire.value("epquiosc.getEdicio", call)
        #expect(first == second)
        #expect(wire.sections.cacheLookups == ["getEdicions:miss", "getEdicio.pagines:miss", "getEdicions:hit", "getEdicio.pagines:hit"])
    }

    @Test func manyDistinctCallsStayWithinTheCapAndKeepTheirAnswers() async throws {
        let cap = 6_000
        let wire = try await Wire(answerCacheBytes: cap)
        let uncached = try await Wire(answerCacheBytes: 0)
        for day in 20...31 {
            for count in 1...10 {
                let call = ["quiosc", "d", "<int>1</int>", "2025-05-\(day)", "<int>\(count)</int>", count % 2 == 0 ? "DESC" : "ASC"]
                let kept = try await wire.value("epquiosc.getDarrersEdicio", call)
                #expect(wire.context.environment.answers.usage.bytes <= cap)
                if count % 5 == 0 { #expect(try await wire.value("epquiosc.getDarrersEdicio", call) == kept) }
                if day % 4 == 0 { #expect(try await uncached.value("epquiosc.getDarrersEdicio", call) == kept) }
            }
        }
        let lookups = wire.sections.cacheLookups
        #expect(lookups.filter { $0.hasSuffix(":hit") }.count >= 24, "repeated calls were answered from memory")
        #expect(wire.context.environment.answers.usage.entries > 0)
    }
}
