import Foundation
import KioskModels
import Testing
@testable import KioskConfig

/// Every configuration key is declared once, in `KioskConfiguration`: a missing key keeps the default
/// written there, and a key the type does not know is refused, at any depth.
@Suite struct ConfigurationFileTests {
    func load(_ yaml: String) throws -> KioskConfiguration {
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("kiosk.yaml").path
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return try KioskConfiguration.load(from: path)
    }

    func refusal(_ yaml: String) -> String? {
        do { _ = try load(yaml); return nil } catch { return "\(error)" }
    }

    @Test func missingKeysKeepTheTypesDefaults() throws {
        let empty = try load("{}")
        #expect(empty == KioskConfiguration())
        let some = try load("""
            server: { port: 9000 }
            publications: [{ id: 1, name: P }]
            apps: [{ key: a, name: A, web_kiosk: { base_url: "https://a.example" } }]
            """)
        #expect(some.server.port == 9000 && some.server.host == KioskConfiguration().server.host)
        #expect(some.server.rpcPaths == KioskConfiguration().server.rpcPaths)
        #expect(some.publications[0].editions.isEmpty)
        #expect(some.apps[0].demoQuota == 0 && some.apps[0].lines.isEmpty)
        #expect(some.apps[0].webKiosk?.sections.entries.isEmpty == true && some.apps[0].webKiosk?.aliases.isEmpty == true)
    }

    @Test func unknownKeysAreRefusedWithTheirPath() {
        #expect(refusal("server: { prot: 1 }")?.hasSuffix("server.prot: is not a known key (misspelt?)") == true)
        #expect(refusal("limts: { max_body_bytes: 2048 }")?.hasSuffix("limts: is not a known key (misspelt?)") == true)
        #expect(refusal("""
            publications: [{ id: 1, name: P, editions: [{ id: 1, name: E, created: 2010-01-01, colour: red }] }]
            """)?.hasSuffix("publications[0].editions[0].colour: is not a known key (misspelt?)") == true)
        #expect(refusal("""
            publications: [{ id: 1, name: P, editions: [{ id: 1, name: E, created: 2010-01-01 }] }]
            apps: [{ key: a, name: A, lines: [{ edition: 1, order: 1, access: free, acces: free }] }]
            """)?.hasSuffix("apps[0].lines[0].acces: is not a known key (misspelt?)") == true)
        #expect(refusal("apps: [{ key: a, name: A, web_kiosk: { base_url: \"https://a\", bogus: 1 } }]")?
            .hasSuffix("apps[0].web_kiosk.bogus: is not a known key (misspelt?)") == true)
    }

    /// The catalogue's own rules (`Catalogue.validate`) reach the file with the key path of what broke them.
    @Test func catalogueRulesNameTheFilesKeyPath() {
        let publications = """
            publications:
              - { id: 1, name: P, editions: [{ id: 1, name: E, created: 2010-01-01 }] }
              - { id: 2, name: Q, editions: [{ id: 2, name: F, created: 2010-01-01 }, { id: 3, name: " ", created: 2010-01-01 }] }
            """
        #expect(refusal(publications)?.hasSuffix("publications[1].editions[1].name: must be 1 to 200 characters on one line") == true)
        let fixed = publications.replacingOccurrences(of: "name: \" \"", with: "name: G")
        #expect(refusal(fixed + """

            apps:
              - { key: a, name: A, lines: [{ edition: 1, order: 1, access: free }] }
              - { key: b, name: B, lines: [{ edition: 2, order: 1, access: free }, { edition: 2, order: 2, access: free }] }
            """)?.hasSuffix("apps[1].lines[1].edition: edition 2 has two lines in app b") == true)
        #expect(refusal(fixed + """

            apps: [{ key: a, name: A }, { key: b, name: B, web_kiosk: { base_url: "b.example" } }]
            """)?.hasSuffix("apps[1].web_kiosk.base_url: must start with http:// or https://") == true)
        #expect(refusal(fixed + """

            publishers:
              - { username: ana, password_hash: "$2b$04$\(String(repeating: "a", count: 53))", editions: [1] }
              - { username: pere, password_hash: "$2b$04$\(String(repeating: "a", count: 53))", editions: [9] }
            """)?.hasSuffix("publishers[1].editions: edition 9 is not defined under publications") == true)
        #expect(refusal(fixed + """

            apps: [{ key: a, name: A, web_kiosk: { base_url: "https://a", sections: { portada: "/" }, aliases: { compte: [c] } } }]
            """)?.hasSuffix("apps[0].web_kiosk.aliases.compte: \"compte\" is not one of the sections") == true)
    }

    /// `stores` and each app's `store` and `products`: read into domain products, refused with their key path.
    @Test func storeProductsAreReadAndChecked() throws {
        let base = """
            publications: [{ id: 1, name: P, editions: [{ id: 1, name: E, created: 2010-01-01 }, { id: 2, name: F, created: 2010-01-01 }] }]
            stores:
              apple: { root_certificates: [/etc/kiosk/AppleRootCA-G3.cer] }
              google: { service_account_file: /etc/kiosk/play.json, push_audience: "https://kiosk.example/store/google" }
            """
        func app(_ store: String, _ products: String) -> String {
            base + """

                apps:
                  - key: quiosc
                    name: Quiosc
                    lines: [{ edition: 1, order: 1, access: subscribers }]
                    store: \(store)
                    products: \(products)
                """
        }
        let stores = "{ apple: { bundle_id: cat.quiosc, app_apple_id: 1234, environments: [Production, Sandbox] }, google: { package_name: cat.quiosc } }"
        let configuration = try load(app(stores, """
            [{ id: cat.quiosc.exemplar, kind: issue, google_id: exemplar }, { id: cat.quiosc.pack5, kind: credits, credits: 5 },
             { id: cat.quiosc.mensual, kind: subscription, scope: all, editions: [1] }]
            """))
        #expect(configuration.storeProducts == [
            StoreProduct(appKey: "quiosc", id: "cat.quiosc.exemplar", storeIDs: [.google: "exemplar"], kind: .issue),
            StoreProduct(appKey: "quiosc", id: "cat.quiosc.pack5", kind: .credits, credits: 5),
            StoreProduct(appKey: "quiosc", id: "cat.quiosc.mensual", kind: .subscription, editions: [1], scope: .all),
        ])
        #expect(configuration.apps[0].store?.apple?.acceptedEnvironments == ["Production", "Sandbox"])
        #expect(configuration.stores.anonymousDeviceLimit == 5 && configuration.stores.google.apiBaseURL.hasPrefix("https://"))

        let refusals: [(String, String)] = [
            (app(stores, "[{ id: cat.quiosc.pack, kind: credits }]"), "apps[0].products[0].credits: a pack must hold 1 to 1000 issues"),
            (app(stores, "[{ id: a, kind: issue }, { id: b, kind: issue, apple_id: a }]"),
             "apps[0].products[1].apple_id: \"a\" is sold twice by app quiosc in the apple store"),
            (app(stores, "[{ id: \"un producte\", kind: issue }]"), "apps[0].products[0].id: must be 1-150 characters"),
            (app(stores, "[{ id: s, kind: subscription, editions: [2] }]"), "apps[0].products[0].editions: edition 2 is not one of app quiosc's lines"),
            (app(stores, "[{ id: s, kind: issue, scope: all }]"), "apps[0].products[0].scope: only a subscription has a scope"),
            (app(stores, "[{ id: s, kind: bundle }]"), "apps[0].products[0].kind"),
            (app("{ apple: { bundle_id: cat.quiosc } }", "[]"), "apps[0].store.apple.app_apple_id: is required for Production"),
            (app("{ apple: { bundle_id: cat.quiosc, environments: [Sandbox, Xcode] } }", "[]"),
             "apps[0].store.apple.environments: must list Production and/or Sandbox, got \"Xcode\""),
            (app("{ google: { package_name: quiosc } }", "[]"), "apps[0].store.google.package_name: must be the app's package name"),
            (app("{}", "[{ id: s, kind: issue }]"), "apps[0].products: app quiosc sells products but names no store"),
            (app(stores, "[]").replacingOccurrences(of: "apple: { root_certificates: [/etc/kiosk/AppleRootCA-G3.cer] }", with: "apple: {}"),
             "stores.apple.root_certificates: must list Apple's root certificate"),
            (app(stores, "[]").replacingOccurrences(of: "https://kiosk.example/store/google", with: "file:///etc/passwd"),
             "stores.google.push_audience: must be an http(s) URL without spaces or control characters"),
        ]
        for (yaml, message) in refusals {
            let refused = refusal(yaml)
            #expect(refused?.contains(message) == true, "\(message): \(refused ?? "accepted")")
        }
    }

    /// A few kilobytes of nested aliases would stand for millions of nodes: refused before YAML expands them.
    @Test func aliasBombsAndControlCharactersAreRefused() {
        let lines = "lines: &L [ &l {edition: 1, order: 1, access: free}" + String(repeating: ", *l", count: 100) + " ]"
        let apps = (0..<100).map { "  - {key: k\($0), name: n, lines: *L}" }.joined(separator: "\n")
        let bomb = "publications: [{ id: 1, name: P, editions: [{ id: 1, name: E, created: 2010-01-01 }] }]\napps:\n  - {key: a, name: A, \(lines)}\n\(apps)\n"
        let started = ContinuousClock.now
        #expect(refusal(bomb)?.contains("YAML aliases (*name); at most 64") == true)
        #expect(started.duration(to: .now) < .seconds(2), "refused before the aliases expand")
        #expect(refusal("""
            publications: [{ id: 1, name: P }]
            apps: [{ key: a, name: A, web_kiosk: { base_url: "https://a.example/\\r\\nX: y" } }]
            """)?.contains("apps[0].web_kiosk.base_url: must not contain spaces or control characters") == true)
        #expect(refusal("publications: [{ id: 1, name: \"El\\u2028Punt\" }]")?.contains("publications[0].name") == true)
        #expect(refusal("publications: [{ id: 9223372036854775807, name: P }]")?.contains("publications[0].id") == true)
    }

    @Test func pdfKeysAreReadAndChecked() throws {
        let configuration = try load("pdf: { small_image: 200x300, large_image: 1000X1500, cpu_seconds: 5, memory_bytes: 268435456 }")
        #expect(KioskConfiguration.PDF.pixels(configuration.pdf.smallImage)! == (200, 300))
        #expect(KioskConfiguration.PDF.pixels(configuration.pdf.largeImage)! == (1000, 1500))
        #expect(configuration.pdf.cpuSeconds == 5 && configuration.pdf.wallSeconds == KioskConfiguration().pdf.wallSeconds)
        #expect(refusal("pdf: { small_image: 300 }")?.contains("pdf.small_image: must be WIDTHxHEIGHT") == true)
        #expect(refusal("pdf: { large_image: 0x1600 }")?.contains("pdf.large_image") == true)
        #expect(refusal("pdf: { memory_bytes: 1000 }")?.contains("pdf.memory_bytes") == true)
        #expect(refusal("pdf: { wall_secs: 3 }")?.hasSuffix("pdf.wall_secs: is not a known key (misspelt?)") == true)
    }

    @Test func optionalKeysMayBeLeftEmptyAndRequiredOnesAreNamed() throws {
        let configuration = try load("server:\n  public_url:\n  port: 9001\nsecret_file:\n")
        #expect(configuration.server.publicURL == nil && configuration.server.port == 9001)
        #expect(refusal("apps: [{ kye: a, name: A }]")?.hasSuffix("apps[0].key: is required") == true)
        #expect(refusal("links: { lifetime_seconds: soon }")?.contains("links.lifetime_seconds: expected Int") == true)
    }
}
