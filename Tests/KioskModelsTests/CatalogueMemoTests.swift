import KioskModels
import Testing

/// `CatalogueMemo` answers from memory only under the version its reads were kept under.
@Suite struct CatalogueMemoTests {
    /// How many times the store was asked.
    actor Reads {
        var count = 0
        func add() { count += 1 }
    }

    static let day = IssueDate("2025-06-02")!

    static func issue(revision: Int) -> IssueContents {
        let section = Section(id: 1, name: "Portada")
        let files = PageFiles(pdf: "1/p.pdf", jpg: "1/p.jpg", jpgA: "1/pA.jpg")
        return IssueContents(editionID: 1, date: day, revision: revision,
                             pages: [Page(id: 1, number: 1, section: section, files: files)], bundle: nil)
    }

    /// Reads the memo once under `version`, counting store reads.
    static func read(_ memo: CatalogueMemo, version: Int64, date: IssueDate = day, revision: Int,
                     reads: Reads) async throws -> Int? {
        try await memo.issueContents(editionID: 1, date: date, version: version) {
            await reads.add()
            return revision == 0 ? nil : Self.issue(revision: revision)
        }?.revision
    }

    @Test func keptUnderItsVersionOnlyAndAbsencesToo() async throws {
        let memo = CatalogueMemo(byteLimit: 1 << 20)
        let reads = Reads()
        #expect(try await Self.read(memo, version: 7, revision: 1, reads: reads) == 1)
        #expect(try await Self.read(memo, version: 7, revision: 99, reads: reads) == 1, "kept under version 7")
        #expect(await reads.count == 1)
        #expect(try await Self.read(memo, version: 8, revision: 2, reads: reads) == 2, "a newer version reads again")
        #expect(try await Self.read(memo, version: 7, revision: 1, reads: reads) == 1, "an older version is never answered from memory")
        #expect(try await Self.read(memo, version: 8, revision: 99, reads: reads) == 2)
        #expect(await reads.count == 3)
        let absent = IssueDate("2025-06-03")!
        #expect(try await Self.read(memo, version: 8, date: absent, revision: 0, reads: reads) == nil)
        #expect(try await Self.read(memo, version: 8, date: absent, revision: 5, reads: reads) == nil, "an absence is kept")
        #expect(try await Self.read(memo, version: 9, date: absent, revision: 5, reads: reads) == 5)
        #expect(await reads.count == 5)

        let offers = Reads()
        let line = TariffLine(appKey: "quiosc", editionID: 1, order: 10, access: .free)
        for _ in 0..<3 {
            let offered = try await memo.offeredEdition(appKey: "quiosc", editionID: 1, version: 9) {
                await offers.add()
                return OfferedEdition(line: line, edition: Edition(id: 1, publicationID: 1, name: "Nacional", createdOn: Self.day),
                                      publicationName: "El Punt Avui")
            }
            #expect(offered?.edition.name == "Nacional")
        }
        #expect(await offers.count == 1)
    }

    @Test func boundedAndOff() async throws {
        let off = CatalogueMemo(byteLimit: 0)
        let reads = Reads()
        for _ in 0..<3 { _ = try await Self.read(off, version: 1, revision: 1, reads: reads) }
        #expect(await reads.count == 3, "0 keeps nothing")
        #expect(off.usage.entries == 0)

        let small = CatalogueMemo(byteLimit: 2_000)
        for day in 0..<50 {
            _ = try await Self.read(small, version: 1, date: Self.day.adding(days: day), revision: 1, reads: reads)
            #expect(small.usage.bytes <= 2_000)
        }
        #expect(small.usage.entries > 0)
    }
}
