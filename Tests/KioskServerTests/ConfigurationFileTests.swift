import Foundation
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
