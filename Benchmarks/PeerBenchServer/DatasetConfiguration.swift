import Foundation
import Yams

/// The configuration the benchmark server runs: a base configuration file (the repository's, as `serve`
/// runs it) with the data set's catalogue instead of its own, the data set's directory as the editions
/// directory, a SQLite database of its own inside it, and no sample issues. Written to a file, so the
/// product loads and validates it as any configuration (and reloads it on SIGHUP).
///
/// Every line is free: the benchmark's `getEdicio` calls carry a device id, not an identity key. Each app
/// has a web kiosk at `https://<app>.example.cat` with a `portada` section, so `hashQuiosc` has something to sign.
struct DatasetConfiguration {
    let dataset: ReferenceDataset
    let directory: String

    var file: String { directory + "/kiosk-swift/kiosk.yaml" }
    var database: String { directory + "/kiosk-swift/kiosk.sqlite" }

    /// Writes the configuration next to its database and returns its path.
    func write(basedOn base: String) throws -> String {
        guard case .mapping(var settings)? = try Yams.compose(yaml: String(contentsOfFile: base, encoding: .utf8)),
              case .mapping(var server)? = settings["server"]
        else { throw NotAConfiguration(path: base) }
        server["database"] = Node(database)
        server["editions"] = Node(directory)
        server["samples"] = nil
        settings["server"] = .mapping(server)
        guard case .mapping(let catalogue)? = try Yams.compose(yaml: YAMLEncoder().encode(catalogue)) else {
            throw NotAConfiguration(path: base)
        }
        for (key, value) in catalogue { settings[key] = value }
        try FileManager.default.createDirectory(atPath: directory + "/kiosk-swift", withIntermediateDirectories: true)
        try Yams.serialize(node: .mapping(settings), allowUnicode: true).write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    struct NotAConfiguration: Error, CustomStringConvertible {
        let path: String
        var description: String { "\(path): not a configuration file (no server section)" }
    }

    private var catalogue: Catalogue {
        Catalogue(
            publications: dataset.publications.map { publication in
                Publication(id: publication.id, name: publication.name,
                            editions: dataset.editions.filter { $0.publication_id == publication.id }.map {
                                Publication.Edition(id: $0.id, name: $0.name, created: $0.created_at)
                            })
            },
            apps: dataset.apps.map { app in
                App(key: app.app_key, name: app.name, demoQuota: app.demo_quota,
                    webKiosk: .init(baseURL: "https://\(app.app_key).example.cat", sections: ["portada": "/?hash="]),
                    lines: dataset.tariff_lines.filter { $0.app_key == app.app_key }.map {
                        App.Line(edition: $0.edition_id, order: $0.sort_order, access: "free")
                    })
            })
    }

    /// The catalogue keys of the configuration file (docs/configuration.md, "catalogue").
    private struct Catalogue: Encodable {
        var publications: [Publication]
        var apps: [App]
    }

    private struct Publication: Encodable {
        struct Edition: Encodable { var id: Int; var name: String; var created: String }
        var id: Int
        var name: String
        var editions: [Edition]
    }

    private struct App: Encodable {
        struct WebKiosk: Encodable {
            var baseURL: String
            var sections: [String: String]
            enum CodingKeys: String, CodingKey { case baseURL = "base_url", sections }
        }
        struct Line: Encodable { var edition: Int; var order: Int; var access: String }
        var key: String
        var name: String
        var demoQuota: Int
        var webKiosk: WebKiosk
        var lines: [Line]
        enum CodingKeys: String, CodingKey { case key, name, demoQuota = "demo_quota", webKiosk = "web_kiosk", lines }
    }
}
