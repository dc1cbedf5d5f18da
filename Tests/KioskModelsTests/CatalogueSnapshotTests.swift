import KioskModels
import KioskSQLite
import KioskTestSupport
import Testing

/// One request works under one catalogue version: read once, at first use, whatever changes meanwhile.
@Suite struct CatalogueSnapshotTests {
    @Test func oneRequestSeesOneVersionAndOutsideARequestTheStoresNow() async throws {
        let store = try TestStores.sqlite()
        try await store.syncCatalogue(SampleCatalogue.catalogue, dryRun: false)
        let snapshot = CatalogueSnapshot(store: store)
        let first = try await CatalogueSnapshot.$current.withValue(snapshot) { try await CatalogueSnapshot.version(of: store) }
        var changed = SampleCatalogue.catalogue
        changed.apps[0].demoQuota += 1
        try await store.syncCatalogue(changed, dryRun: false)
        let again = try await CatalogueSnapshot.$current.withValue(snapshot) { try await CatalogueSnapshot.version(of: store) }
        #expect(again == first, "the request's version does not move under it")
        let now = try await CatalogueSnapshot.version(of: store)
        #expect(now > first, "outside a request, the store's version now")
        let next = try await CatalogueSnapshot.$current.withValue(CatalogueSnapshot(store: store)) {
            try await CatalogueSnapshot.version(of: store)
        }
        #expect(next == now, "the next request reads it afresh")
    }
}
