import ServiceLifecycle
import Foundation
import KioskModels
@testable import KioskPostgres
import KioskTestPostgres
import KioskTestSupport
import Logging
import Testing

/// The state machine of what an instance knows of the catalogue version (no database).
@Suite struct CatalogueVersionWatchTests {
    @Test func unknownUntilListeningAndRead() {
        var watch = CatalogueVersionWatch()
        #expect(watch.versionAtOnce == nil)
        watch.notified(5)
        watch.read(5)
        #expect(watch.versionAtOnce == nil, "neither a notification nor a read counts before LISTEN is acknowledged")
        watch.listening()
        #expect(watch.versionAtOnce == nil, "listening, but the version is not read yet")
        watch.notified(9)
        watch.read(8)
        #expect(watch.versionAtOnce == 9, "a change notified while the version was read is newer than the read")
    }

    @Test func theHighestVersionWins() {
        var watch = CatalogueVersionWatch()
        watch.listening()
        watch.read(3)
        watch.notified(7)
        watch.notified(6)
        watch.read(5)
        #expect(watch.versionAtOnce == 7, "versions only grow: an older read or a late notification never goes back")
        watch.committedHere(10)
        #expect(watch.versionAtOnce == 10)
    }

    @Test func lostMeansUnknownUntilReadAgain() {
        var watch = CatalogueVersionWatch()
        watch.listening()
        watch.read(3)
        watch.lost()
        #expect(watch.versionAtOnce == nil)
        watch.committedHere(4)
        watch.notified(4)
        #expect(watch.versionAtOnce == nil, "nothing is known again before the listener reads the version after LISTEN")
        watch.listening()
        watch.committedHere(4)
        #expect(watch.versionAtOnce == nil, "a read after a local commit proves nothing until the listener's own read")
        watch.read(4)
        #expect(watch.versionAtOnce == 4)
    }
}

/// On a real server: a store running its services knows the version at once, and learns of a change
/// committed by another store (another instance, the CLI) from its notification, without reading it.
@Suite(.enabled(if: TestPostgres.configured, TestPostgres.skipReason))
struct CatalogueVersionListenerTests {
    @Test func anotherStoresChangeIsNotified() async throws {
        try await TestPostgres.withDatabase { configuration in
            let listening = PostgresKioskStore(configuration, logger: Logger(label: "test"))
            let services = listening.services
            try await withThrowingTaskGroup(of: Void.self) { group in
                for service in services { group.addTask { try await service.run() } }
                defer { group.cancelAll() }
                #expect(listening.catalogueVersionAtOnce() == nil, "unknown before the schema is there")
                try await listening.migrate()
                let known = try await Self.eventually { listening.catalogueVersionAtOnce() }
                #expect(known == (try await listening.catalogueVersion()))

                let other = try await PostgresKioskStore.connect(configuration, logger: Logger(label: "test"))
                #expect(other.catalogueVersionAtOnce() == nil, "a store without the listener reads the version per call")
                try await other.syncCatalogue(SampleCatalogue.catalogue, dryRun: false)
                let changed = try await other.catalogueVersion()
                #expect(changed > known)
                let seen = try await Self.eventually { listening.catalogueVersionAtOnce().flatMap { $0 == changed ? $0 : nil } }
                #expect(seen == changed)
                await other.close()

                var fewer = SampleCatalogue.catalogue
                fewer.tariffLines.removeLast()
                _ = try await listening.syncCatalogue(fewer, dryRun: false)
                #expect(listening.catalogueVersionAtOnce() == (try await listening.catalogueVersion()),
                        "this store's own change is known at once when its call returns, before its notification")
            }
        }
    }

    /// `value()` once it is not nil, polled for up to 10 s.
    static func eventually<Value: Sendable>(_ value: () -> Value?) async throws -> Value {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let value = value() { return value }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try #require(value(), "not within 10 s")
    }
}
