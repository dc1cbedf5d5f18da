import Yams
import KioskModels

extension KioskConfiguration {
    /// This configuration with `catalogue` in place of its publications, editions, apps, tariff lines,
    /// web kiosks (`web_kiosk`) and accounts (`api_clients`, `publishers`, `operators`): what `config export`
    /// writes. An app keeps the file's `store` (the app's identities in the stores, which the catalogue does not hold).
    package func replacingCatalogue(with catalogue: Catalogue) -> KioskConfiguration {
        var copy = self
        copy.publications = catalogue.publications.map { publication in
            PublicationEntry(id: publication.id, name: publication.name, editions: catalogue.editions
                .filter { $0.publicationID == publication.id }
                .map { EditionEntry(id: $0.id, name: $0.name, created: $0.createdOn) })
        }
        let selling = Dictionary(apps.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        copy.apps = catalogue.apps.map { app in
            AppEntry(key: app.key, name: app.name, demoQuota: app.demoQuota, webKiosk: catalogue.webKiosk(of: app.key).map(WebKioskEntry.init),
                     lines: catalogue.tariffLines.filter { $0.appKey == app.key }.sorted { $0.order < $1.order }
                        .map { LineEntry(edition: $0.editionID, order: $0.order, access: $0.access) },
                     store: selling[app.key]?.store, products: catalogue.products(of: app.key).map(ProductEntry.init))
        }
        copy.apiClients = catalogue.accounts.filter { $0.kind == .apiClient }
            .map { Credential(username: $0.username, passwordHash: $0.passwordHash) }
        copy.publishers = catalogue.accounts.filter { $0.kind == .publisher }
            .map { Credential(username: $0.username, passwordHash: $0.passwordHash, scope: $0.scope) }
        copy.operators = catalogue.accounts.filter { $0.kind == .operator }
            .map { OperatorEntry(username: $0.username, passwordHash: $0.passwordHash, role: $0.role ?? .editor) }
        return copy
    }
}

/// What bringing the file's catalogue to the database did, by `catalogue_source`.
package struct CatalogueSyncOutcome: Sendable, Equatable {
    /// Changes made to the database.
    package var applied: [String] = []
    /// Differences left alone because the database (the console) owns the catalogue: each one is what
    /// `config apply` would change.
    package var keptFromConsole: [String] = []
    package init(applied: [String] = [], keptFromConsole: [String] = []) {
        self.applied = applied; self.keptFromConsole = keptFromConsole
    }
}

extension KioskConfiguration {
    /// Brings the file's catalogue to the database as `catalogue_source` says: with `file`, always; with
    /// `console`, only into a database with no app (the file seeds a new install), and the file's accounts
    /// only into a database with none, its web kiosks only into a database with none (an install from
    /// before they were stored), those of apps the database has; otherwise nothing changes and the
    /// differences are reported so the caller can say so. `force` applies the file whatever the source
    /// (`config apply`).
    package func syncCatalogue(into store: any KioskDatabase, force: Bool = false) async throws -> CatalogueSyncOutcome {
        if force || catalogueSource == .file {
            return CatalogueSyncOutcome(applied: try await store.syncCatalogue(catalogue, dryRun: false))
        }
        var stored = try await store.catalogue()
        if stored.apps.isEmpty {
            return CatalogueSyncOutcome(applied: try await store.syncCatalogue(catalogue, dryRun: false))
        }
        var applied: [String] = []
        var seeded = false
        if stored.accounts.isEmpty && !catalogue.accounts.isEmpty {
            stored.accounts = catalogue.accounts
            seeded = true
        }
        let storedApps = Set(stored.apps.map(\.key))
        let fileKiosks = catalogue.webKiosks.filter { storedApps.contains($0.appKey) }
        if stored.webKiosks.isEmpty && !fileKiosks.isEmpty {
            stored.webKiosks = fileKiosks
            seeded = true
        }
        if seeded { applied = try await store.syncCatalogue(stored, dryRun: false) }
        return CatalogueSyncOutcome(applied: applied, keptFromConsole: try await store.syncCatalogue(catalogue, dryRun: true))
    }
}

extension KioskConfiguration {
    /// The `publications:`, `apps:`, `api_clients:`, `publishers:` and `operators:` sections of the file,
    /// as YAML: `config export` writes the database's catalogue this way, to paste over the file's (or to
    /// keep beside it).
    package func catalogueYAML() throws -> String {
        struct CatalogueSections: Encodable {
            enum CodingKeys: String, CodingKey { case publications, apps, apiClients = "api_clients", publishers, operators }
            var publications: [PublicationEntry]
            var apps: [AppEntry]
            var apiClients: [Credential]
            var publishers: [Credential]
            var operators: [OperatorEntry]
        }
        return try YAMLEncoder().encode(CatalogueSections(publications: publications, apps: apps, apiClients: apiClients,
                                                          publishers: publishers, operators: operators))
    }
}
