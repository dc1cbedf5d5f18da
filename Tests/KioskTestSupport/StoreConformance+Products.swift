import KioskModels
import Testing

extension StoreConformance {
    /// The products the apps sell are part of the catalogue: a sync stores each app's in its order (ids per
    /// store, kind, editions, credits, scope), reports the change in the same words on every engine, removes
    /// them with their app, and every change, and only a change, bumps the catalogue version.
    func storeProducts() async throws {
        let store = try await store()
        #expect(try await store.catalogue().products.isEmpty)
        var version = try await store.catalogueVersion()
        func bumped(_ what: String, _ expected: Bool = true) async throws {
            let now = try await store.catalogueVersion()
            #expect((now != version) == expected, "\(what): version \(version) -> \(now)")
            version = now
        }

        var catalogue = try await store.catalogue()
        let products = [
            StoreProduct(appKey: "quiosc", id: "cat.quiosc.mensual", kind: .subscription, editions: [2, 1], scope: .all),
            StoreProduct(appKey: "quiosc", id: "cat.quiosc.exemplar", storeIDs: [.google: "exemplar", .apple: "cat.quiosc.ex"], kind: .issue),
            StoreProduct(appKey: "presencia", id: "cat.presencia.pack", kind: .credits, credits: 5),
        ]
        catalogue.products = products
        #expect(try await store.syncCatalogue(catalogue, dryRun: true) == [
            "set products of app presencia: cat.presencia.pack (credits 5)",
            "set products of app quiosc: cat.quiosc.mensual (subscription all editions 2 1), "
                + "cat.quiosc.exemplar (issue apple cat.quiosc.ex google exemplar)",
        ])
        try await bumped("a dry run", false)
        #expect(try await store.catalogue().products.isEmpty, "a dry run changes nothing")
        #expect(try await store.syncCatalogue(catalogue, dryRun: false).count == 2)
        try await bumped("products set")
        let stored = try await store.catalogue()
        #expect(stored.products(of: "quiosc") == Array(products.prefix(2)), "in their order, every field kept")
        #expect(stored.products(of: "presencia") == [products[2]])
        #expect(try await store.syncCatalogue(stored, dryRun: false).isEmpty)
        try await bumped("the same again", false)

        catalogue.products = [products[1], products[2]]
        #expect(try await store.syncCatalogue(catalogue, dryRun: false) == [
            "set products of app quiosc: cat.quiosc.exemplar (issue apple cat.quiosc.ex google exemplar)",
        ])
        try await bumped("a product removed")
        catalogue.apps.removeAll { $0.key == "presencia" }
        catalogue.tariffLines.removeAll { $0.appKey == "presencia" }
        catalogue.webKiosks.removeAll { $0.appKey == "presencia" }
        catalogue.products.removeAll { $0.appKey == "presencia" }
        _ = try await store.syncCatalogue(catalogue, dryRun: false)
        #expect(try await store.catalogue().products == [products[1]], "an app's products go with it")
    }
}
