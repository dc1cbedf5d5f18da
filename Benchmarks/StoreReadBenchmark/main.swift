// How long the SQLite store's one-statement reads hold the calling thread (docs/architecture.md,
// "Concurrency: the rule and its two exceptions"): they run on the caller's thread instead of hopping
// to GRDB's reader threads. Measured on a store with 8 editions × 60 days × 48 pages, while a writer
// commits downloads (as getEdicio's group commit does) so that readers meet a busy WAL.
//
// For each read: inline through the store, as the server does it, and the same statement through GRDB's
// async `pool.read` (the two thread hops the exception avoids). Prints p50, p99 and max in microseconds.
//
//   swift run --package-path Benchmarks -c release StoreReadBenchmark [--runs N] [--file PATH]
import Foundation
import GRDB
import KioskModels
import KioskSQLite

let arguments = CommandLine.arguments
func option(_ name: String) -> String? { arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil } }
let runs = option("--runs").flatMap(Int.init) ?? 20_000
let path = option("--file") ?? FileManager.default.temporaryDirectory.appendingPathComponent("store-read-\(getpid()).sqlite").path

let editions = (1...8).map { Edition(id: $0, publicationID: 1, name: "Edició \($0)", createdOn: IssueDate("2010-01-01")!) }
let store = try SQLiteKioskStore(path: path)
try await store.syncCatalogue(Catalogue(
    publications: [Publication(id: 1, name: "El Diari")], editions: editions,
    apps: [App(key: "bench", name: "Bench", demoQuota: 3)],
    tariffLines: editions.map { TariffLine(appKey: "bench", editionID: $0.id, order: $0.id, access: .free) }), dryRun: false)
let firstDay = IssueDate("2025-01-01")!
for day in 0..<60 {
    let date = firstDay.adding(days: day)
    for edition in editions {
        let pages = (1...48).map { number in
            PublishedPage(number: number, section: Section(id: 1 + number % 4, name: "Secció \(number % 4)"),
                          files: PageFiles(pdf: "\(edition.id)/\(date)/r1/pdf/\(number).pdf", jpg: "\(edition.id)/\(date)/r1/jpg/\(number).jpg",
                                           jpgA: "\(edition.id)/\(date)/r1/jpgA/\(number).jpg"))
        }
        _ = try await store.publishIssue(editionID: edition.id, date: date, revision: 1, pages: pages, bundle: nil, at: 0)
    }
}
let lastDay = firstDay.adding(days: 59)

/// A writer committing downloads for as long as the measures run.
let writing = Task {
    var n: Int64 = 0
    while !Task.isCancelled {
        n += 1
        try await store.recordDownload(DownloadRecord(editionID: 1 + Int(n % 8), date: lastDay, appKey: "bench", identityKey: "k\(n % 100)",
                                                      userID: 0, claimedUserID: "", deviceKey: "", os: "ios", time: n))
        if n % 64 == 0 { try await Task.sleep(for: .milliseconds(1)) }
    }
    return n
}

func measure(_ name: String, _ body: () async throws -> Void) async throws {
    for _ in 0..<500 { try await body() }
    var samples: [Double] = []
    samples.reserveCapacity(runs)
    for _ in 0..<runs {
        let start = ContinuousClock.now
        try await body()
        let elapsed = start.duration(to: .now)
        samples.append(Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
    }
    samples.sort()
    func at(_ q: Double) -> Double { samples[min(samples.count - 1, Int((Double(samples.count) * q).rounded(.down)))] }
    print(name.padding(toLength: 44, withPad: " ", startingAt: 0)
          + String(format: " p50 %7.1f µs   p99 %7.1f µs   max %8.1f µs", at(0.5), at(0.99), samples.last ?? 0))
}

let appSQL = "SELECT key, name, demo_quota FROM apps WHERE key = ?"
let pagesSQL = "SELECT * FROM pages WHERE edition_id = ? AND date = ? ORDER BY number"
print("SQLite store reads, \(runs) each, while a writer commits downloads")
try await measure("catalogueVersion (inline)") { _ = try await store.catalogueVersion() }
try await measure("app (inline)") { _ = try await store.app(key: "bench") }
try await measure("app, same statement via pool.read (hops)") {
    _ = try await store.pool.read { db in try Row.fetchOne(db, sql: appSQL, arguments: ["bench"]) }
}
try await measure("offeredEdition (inline)") { _ = try await store.offeredEdition(appKey: "bench", editionID: 3) }
try await measure("issueContents, 48 pages (inline)") { _ = try await store.issueContents(editionID: 3, date: lastDay) }
try await measure("48 pages via pool.read (hops)") {
    _ = try await store.pool.read { db in try Row.fetchAll(db, sql: pagesSQL, arguments: [3, lastDay.description]) }
}
try await measure("editionListings (inline)") { _ = try await store.editionListings(appKey: "bench") }
writing.cancel()
let written = (try? await writing.value) ?? 0
print("downloads committed meanwhile: \(written)")
try? FileManager.default.removeItem(atPath: path)
