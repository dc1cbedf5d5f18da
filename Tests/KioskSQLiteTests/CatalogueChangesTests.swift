import Foundation
import GRDBSQLite
import KioskModels
import KioskTestSupport
import Testing
@testable import KioskSQLite

/// The shared count of catalogue changes (`<database>-changes`) behind `catalogueVersionAtOnce`: every
/// catalogue change moves it, whichever store or process makes it; a writer killed midway only stops
/// versions being known at once until the counts are balanced; a change made behind its back is found.
@Suite struct CatalogueChangesTests {
    @Test func everyCatalogueChangeMovesTheCountAndReadersTrafficDoesNot() async throws {
        let store = try TestStores.sqlite()
        let other = try SQLiteKioskStore(path: store.path)   // a second store on the file: another process's view
        let changes = try CatalogueChanges(databasePath: store.path)
        let start = try #require(changes.balancedMark)

        try await store.syncCatalogue(SampleCatalogue.catalogue, dryRun: false)
        let synced = try #require(changes.balancedMark)
        #expect(synced > start, "a sync (its triggers update catalogue_version) is counted")
        #expect(other.catalogueVersionAtOnce() == (try await store.catalogueVersion()), "and the other store knows the new version at once")

        let day = IssueDate("2025-05-30")!
        _ = try await store.publishIssue(editionID: 1, date: day, revision: 1,
                                         pages: TestIssues.pages(edition: 1, date: day, revision: 1, count: 2), bundle: nil,
                                         at: SampleCatalogue.startTime)
        let published = try #require(changes.balancedMark)
        #expect(published > synced)
        #expect(other.catalogueVersionAtOnce() == (try await store.catalogueVersion()))

        try await store.recordDownload(DownloadRecord(editionID: 1, date: day, appKey: "quiosc", identityKey: "k", userID: 0,
                                                      claimedUserID: "", deviceKey: "d", os: "iOS", time: SampleCatalogue.startTime))
        #expect(changes.balancedMark == published, "a download is not a catalogue change")
    }

    @Test func aWriterKilledMidwayStopsVersionsAtOnceUntilBalanced() async throws {
        let store = try TestStores.sqlite()
        try await store.syncCatalogue(SampleCatalogue.catalogue, dryRun: false)
        #expect(store.catalogueVersionAtOnce() != nil)

        var writer: CatalogueChanges? = try CatalogueChanges(databasePath: store.path)
        writer?.writerStarted()
        let changes = try CatalogueChanges(databasePath: store.path)
        #expect(changes.balancedMark == nil, "a change under way")
        #expect(store.catalogueVersionAtOnce() == nil, "no version at once while a change is under way")
        #expect(!changes.balance(), "a live writer holds its lock: nothing to balance")

        writer = nil   // killed: its file is closed, and with it its lock
        #expect(changes.balancedMark == nil)
        let version = try await store.catalogueVersion()   // a read that waits balances the counts
        #expect(changes.balancedMark != nil)
        #expect(store.catalogueVersionAtOnce() == version)
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to give the database to another user"))
    func theCounterFileBelongsToTheDatabasesOwner() throws {
        let store = try TestStores.sqlite()
        #expect(chown(store.path, 65534, 65534) == 0)
        #expect(chmod(store.path, 0o640) == 0)
        try FileManager.default.removeItem(atPath: store.path + "-changes")
        _ = try CatalogueChanges(databasePath: store.path)   // a CLI run as root makes it
        var status = stat()
        #expect(stat(store.path + "-changes", &status) == 0)
        #expect(status.st_uid == 65534 && status.st_gid == 65534, "the server's user can open it")
        #expect(status.st_mode & 0o777 == 0o640)
    }

    @Test func aChangeBehindTheCountsBackIsFoundAtTheNextRecheck() async throws {
        let store = try TestStores.sqlite()
        try await store.syncCatalogue(SampleCatalogue.catalogue, dryRun: false)
        let before = try #require(store.catalogueVersionAtOnce())
        let changes = try CatalogueChanges(databasePath: store.path)
        let mark = try #require(changes.balancedMark)

        // A SQLite shell renames an app: the triggers move the version, nothing counts it.
        var connection: OpaquePointer?
        #expect(sqlite3_open(store.path, &connection) == SQLITE_OK)
        #expect(sqlite3_exec(connection, "UPDATE apps SET name = 'Renamed' WHERE key = 'quiosc'", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(connection)

        try await Task.sleep(for: CatalogueVersionReader.recheckInterval + .milliseconds(100))
        let after = try #require(store.catalogueVersionAtOnce())
        #expect(after != before, "found by the recheck")
        #expect(changes.balancedMark.map { $0 > mark } == true, "and counted, so every process drops the old version")
        #expect(store.catalogueVersionAtOnce() == after)
    }
}
