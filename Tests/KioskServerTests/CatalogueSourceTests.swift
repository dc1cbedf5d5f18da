import Foundation
import KioskModels
import KioskSQLite
import Testing
@testable import KioskConfig

/// `catalogue_source`: with `console` the file seeds an empty database once and never undoes the
/// console's edits after; `config export` writes the database's catalogue back as YAML the file
/// accepts; `config apply` makes the file win.
@Suite struct CatalogueSourceTests {
    static let environment = OperatorCommandTests.secret

    static func quota(_ database: String, _ app: String) async throws -> Int? {
        let store = try SQLiteKioskStore(path: database)
        defer { Task { await store.close() } }
        return try await store.catalogue().apps.first { $0.key == app }?.demoQuota
    }

    @Test func theConsolesEditsHoldUntilTheFileIsAppliedOnPurpose() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory) { $0 + "\ncatalogue_source: console\n" }
        let database = directory.appendingPathComponent("kiosk.sqlite").path

        // The first start seeds the empty database from the file.
        let first = try await ServerProcess(["--config", config], environment: Self.environment)
        first.signal(SIGTERM)
        #expect(try await first.waitForExit() == 0)
        #expect(try await Self.quota(database, "quiosc") == 3)
        #expect(!first.log.contains("differs from the database"))

        // An edit in the database (what the console does) survives every later command and start.
        do {
            let store = try SQLiteKioskStore(path: database)
            var catalogue = try await store.catalogue()
            catalogue.apps = catalogue.apps.map { App(key: $0.key, name: $0.name, demoQuota: $0.key == "quiosc" ? 1 : $0.demoQuota) }
            #expect(try await store.syncCatalogue(catalogue, dryRun: false) == ["update app quiosc (demo quota 1)"])
            await store.close()
        }
        let add = try await ServerProcess.run(["user", "add", "--config", config, "--username", "laia", "--password-stdin"],
                                              stdin: "pw-laia-long\n", environment: Self.environment)
        #expect(add.status == 0, "\(add.errors)")
        let subscribe = try await ServerProcess.run(["user", "subscribe", "--config", config, "--username", "laia", "--edition", "1",
                                                     "--until", "2026-01-31"], environment: Self.environment)
        #expect(subscribe.status == 0, "\(subscribe.errors)")
        #expect(try await Self.quota(database, "quiosc") == 1)
        let server = try await ServerProcess(["--config", config], environment: Self.environment)
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
        #expect(server.log.contains("the configuration file's catalogue differs from the database's"), "\(server.log)")
        #expect(server.log.contains("update app quiosc (demo quota 3)"))
        #expect(try await Self.quota(database, "quiosc") == 1)

        // Export: the database's catalogue, as sections the file accepts.
        let export = try await ServerProcess.run(["config", "export", "--config", config], environment: Self.environment)
        #expect(export.status == 0, "\(export.errors)")
        #expect(export.output.contains("demo_quota: 1"))
        let exported = directory.appendingPathComponent("exported.yaml").path
        try ("catalogue_source: console\nsecret_file: \(directory.path)/secret\n" + export.output)
            .write(toFile: exported, atomically: true, encoding: .utf8)
        let reloaded = try KioskConfiguration.load(from: exported)
        #expect(reloaded.catalogue.apps.first { $0.key == "quiosc" }?.demoQuota == 1)
        #expect(reloaded.catalogue.tariffLines.count == 4 && reloaded.catalogue.editions.count == 3)
        #expect(reloaded.apiClients.map(\.username) == ["kiosk"] && reloaded.publishers.map(\.username) == ["publisher"],
                "the accounts are exported too")

        // Apply: the file wins, on purpose.
        let apply = try await ServerProcess.run(["config", "apply", "--config", config], environment: Self.environment)
        #expect(apply.status == 0, "\(apply.errors)")
        #expect(apply.output.contains("update app quiosc (demo quota 3)"))
        #expect(try await Self.quota(database, "quiosc") == 3)
    }

    /// Accounts follow the catalogue's rule: an install from before they were stored gets the file's once;
    /// after that a different file is reported, not applied, until `config apply` (force).
    @Test func theFilesAccountsSeedAnEmptyTableOnceThenAreReportedLikeTheCatalogue() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = try KioskConfiguration.load(from: try writeTestConfiguration(in: directory))
        configuration.catalogueSource = .console
        let store = try SQLiteKioskStore(path: directory.appendingPathComponent("kiosk.sqlite").path)
        var withoutAccounts = configuration.catalogue
        withoutAccounts.accounts = []
        try await store.syncCatalogue(withoutAccounts, dryRun: false)

        let seeded = try await configuration.syncCatalogue(into: store)
        #expect(seeded.applied == ["add account api_client:kiosk", "add account publisher:publisher"])
        #expect(seeded.keptFromConsole.isEmpty)

        configuration.apiClients[0].passwordHash = configuration.publishers[0].passwordHash
        let kept = try await configuration.syncCatalogue(into: store)
        #expect(kept.applied.isEmpty && kept.keptFromConsole == ["set password of account api_client:kiosk"])
        #expect(try await configuration.syncCatalogue(into: store, force: true).applied == ["set password of account api_client:kiosk"])
        #expect(try await store.accounts().first { $0.kind == .apiClient }?.passwordHash == configuration.publishers[0].passwordHash)
        await store.close()
    }
}
