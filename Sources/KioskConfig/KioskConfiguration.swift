import Foundation
import KioskModels
import Yams

/// The operator's configuration (`Config/kiosk.yaml`), as written in the file.
///
/// Keys are snake_case in YAML. Relative paths are relative to the working directory.
package struct KioskConfiguration: Codable, Sendable, Equatable {
    package enum CodingKeys: String, CodingKey {
        case server, limits, links, publishers, publications, apps, metrics
        case signIn = "sign_in", webKioskTokenLifetimeSeconds = "web_kiosk_token_lifetime_seconds"
        case secretFile = "secret_file", apiClients = "api_clients"
    }

    package var server = Server()
    package var limits = Limits()
    package var signIn = SignIn()
    package var links = Links()
    package var metrics = Metrics()
    package var webKioskTokenLifetimeSeconds = 300
    package var secretFile: String?
    package var apiClients: [Credential] = []
    package var publishers: [Credential] = []
    package var publications: [PublicationEntry] = []
    package var apps: [AppEntry] = []

    package init() {}

    package struct Server: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case host, port, database, editions, samples, tls
            case publicURL = "public_url", idleTimeoutSeconds = "idle_timeout_seconds", jsonLogs = "json_logs"
            case rpcPaths = "rpc_paths"
        }

        package var host = "127.0.0.1"
        package var port = 8080
        /// Base of the links handed out, e.g. `https://kiosk.example.cat`; default `http://host:port`.
        package var publicURL: String?
        package var database = "data/kiosk.sqlite"
        package var editions = "Editions"
        /// Sample issue folders published on first start into an empty database.
        package var samples: String?
        package var tls: TLS?
        /// Seconds an idle keep-alive connection stays open.
        package var idleTimeoutSeconds = 60
        /// Emit logs as JSON lines.
        package var jsonLogs = false
        /// Where XML-RPC is answered: `/RPC2` and the Joomla XML-RPC server's path the 2012 apps have compiled in.
        package var rpcPaths = ["/RPC2", "/xmlrpc/index.php", "/xmlrpc/", "/xmlrpc"]
    }

    package struct TLS: Codable, Sendable, Equatable {
        package var certificate: String
        package var key: String
    }

    package struct Limits: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case maxBodyBytes = "max_body_bytes", maxUploadBytes = "max_upload_bytes"
            case databaseBusyTimeoutSeconds = "database_busy_timeout_seconds"
        }

        package var maxBodyBytes = 1 << 20
        package var maxUploadBytes = 2 << 30
        package var databaseBusyTimeoutSeconds = 5.0
    }

    package struct SignIn: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case maxFailures = "max_failures", windowSeconds = "window_seconds"
        }

        package var maxFailures = 5
        package var windowSeconds = 900
    }

    package struct Links: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case format, prefix
            case lifetimeSeconds = "lifetime_seconds"
            case expiryBucketSeconds = "expiry_bucket_seconds"
        }

        /// `kiosk` (lighttpd mod_secdownload hmac-sha256 form) or `nginx` (secure_link md5 form).
        package var format = "kiosk"
        package var prefix = "/files"
        package var lifetimeSeconds = 3600
        /// Expiries are rounded up to this many seconds, so links signed within one bucket are the same
        /// (`SignedLinks.stamp`); 0: off. At most `lifetimeSeconds`.
        package var expiryBucketSeconds = 300
    }

    /// Who may scrape `GET /metrics`.
    package struct Metrics: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case credentials
            case loopbackOnly = "loopback_only"
        }

        /// Only loopback clients (not forwarded by a proxy); nil: true unless credentials are given.
        package var loopbackOnly: Bool?
        /// HTTP Basic accounts of scrapers; when given, a scrape must present one of them.
        package var credentials: [Credential] = []

        package var effectiveLoopbackOnly: Bool { loopbackOnly ?? credentials.isEmpty }
    }

    /// An HTTP Basic account: API client or publisher. Only a bcrypt hash of the password is kept.
    package struct Credential: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case username
            case passwordHash = "password_hash"
        }

        package var username: String
        package var passwordHash: String
        package init(username: String, passwordHash: String) { self.username = username; self.passwordHash = passwordHash }
    }

    package struct PublicationEntry: Codable, Sendable, Equatable {
        package var id: Int
        package var name: String
        package var editions: [EditionEntry] = []
        package init(id: Int, name: String, editions: [EditionEntry] = []) { self.id = id; self.name = name; self.editions = editions }
    }

    package struct EditionEntry: Codable, Sendable, Equatable {
        package var id: Int
        package var name: String
        package var created: IssueDate
        package init(id: Int, name: String, created: IssueDate) { self.id = id; self.name = name; self.created = created }
    }

    package struct AppEntry: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case key, name, lines
            case demoQuota = "demo_quota", webKiosk = "web_kiosk"
        }

        package var key: String
        package var name: String
        package var demoQuota = 0
        package var webKiosk: WebKioskEntry?
        package var lines: [LineEntry] = []

        package init(key: String, name: String, demoQuota: Int = 0, webKiosk: WebKioskEntry? = nil, lines: [LineEntry] = []) {
            self.key = key; self.name = name; self.demoQuota = demoQuota; self.webKiosk = webKiosk; self.lines = lines
        }
    }

    package struct WebKioskEntry: Codable, Sendable, Equatable {
        package var baseURL: String
        /// Section name -> path, in the file's order (the first is the default unless `default_section` says).
        package var sections = OrderedPaths()
        /// Opened for an unknown or empty `seccioQ`.
        package var defaultSection: String?
        /// Section name -> other names the apps send for it.
        package var aliases: [String: [String]] = [:]
        package enum CodingKeys: String, CodingKey {
            case baseURL = "base_url", sections, aliases
            case defaultSection = "default_section"
        }

        package init(baseURL: String, sections: OrderedPaths = OrderedPaths(), defaultSection: String? = nil,
                     aliases: [String: [String]] = [:]) {
            self.baseURL = baseURL; self.sections = sections; self.defaultSection = defaultSection; self.aliases = aliases
        }
    }

    /// A YAML map of names to paths that keeps the file's order.
    package struct OrderedPaths: Codable, Sendable, Equatable {
        package struct Entry: Sendable, Equatable {
            package var name: String
            package var path: String
            package init(name: String, path: String) { self.name = name; self.path = path }
        }
        package var entries: [Entry] = []

        private struct Name: CodingKey {
            package var stringValue: String
            package var intValue: Int? { nil }
            package init(stringValue: String) { self.stringValue = stringValue }
            package init?(intValue: Int) { nil }
        }

        package init(_ entries: [Entry] = []) { self.entries = entries }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Name.self)
            entries = try container.allKeys.map { Entry(name: $0.stringValue, path: try container.decode(String.self, forKey: $0)) }
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Name.self)
            for entry in entries { try container.encode(entry.path, forKey: Name(stringValue: entry.name)) }
        }
    }

    package struct LineEntry: Codable, Sendable, Equatable {
        package var edition: Int
        package var order: Int
        package var access: LineAccess
        package init(edition: Int, order: Int, access: LineAccess) { self.edition = edition; self.order = order; self.access = access }
    }
}

// Every key is optional in the file: a missing one keeps its default.
package extension KioskConfiguration {
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = KioskConfiguration()
        server = try c.decodeIfPresent(Server.self, forKey: .server) ?? defaults.server
        limits = try c.decodeIfPresent(Limits.self, forKey: .limits) ?? defaults.limits
        signIn = try c.decodeIfPresent(SignIn.self, forKey: .signIn) ?? defaults.signIn
        links = try c.decodeIfPresent(Links.self, forKey: .links) ?? defaults.links
        metrics = try c.decodeIfPresent(Metrics.self, forKey: .metrics) ?? defaults.metrics
        webKioskTokenLifetimeSeconds = try c.decodeIfPresent(Int.self, forKey: .webKioskTokenLifetimeSeconds)
            ?? defaults.webKioskTokenLifetimeSeconds
        secretFile = try c.decodeIfPresent(String.self, forKey: .secretFile)
        apiClients = try c.decodeIfPresent([Credential].self, forKey: .apiClients) ?? []
        publishers = try c.decodeIfPresent([Credential].self, forKey: .publishers) ?? []
        publications = try c.decodeIfPresent([PublicationEntry].self, forKey: .publications) ?? []
        apps = try c.decodeIfPresent([AppEntry].self, forKey: .apps) ?? []
    }
}

package extension KioskConfiguration.Server {
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Self()
        host = try c.decodeIfPresent(String.self, forKey: .host) ?? d.host
        port = try c.decodeIfPresent(Int.self, forKey: .port) ?? d.port
        publicURL = try c.decodeIfPresent(String.self, forKey: .publicURL)
        database = try c.decodeIfPresent(String.self, forKey: .database) ?? d.database
        editions = try c.decodeIfPresent(String.self, forKey: .editions) ?? d.editions
        samples = try c.decodeIfPresent(String.self, forKey: .samples)
        tls = try c.decodeIfPresent(KioskConfiguration.TLS.self, forKey: .tls)
        idleTimeoutSeconds = try c.decodeIfPresent(Int.self, forKey: .idleTimeoutSeconds) ?? d.idleTimeoutSeconds
        jsonLogs = try c.decodeIfPresent(Bool.self, forKey: .jsonLogs) ?? d.jsonLogs
        rpcPaths = try c.decodeIfPresent([String].self, forKey: .rpcPaths) ?? d.rpcPaths
    }
}

package extension KioskConfiguration.Limits {
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Self()
        maxBodyBytes = try c.decodeIfPresent(Int.self, forKey: .maxBodyBytes) ?? d.maxBodyBytes
        maxUploadBytes = try c.decodeIfPresent(Int.self, forKey: .maxUploadBytes) ?? d.maxUploadBytes
        databaseBusyTimeoutSeconds = try c.decodeIfPresent(Double.self, forKey: .databaseBusyTimeoutSeconds)
            ?? d.databaseBusyTimeoutSeconds
    }
}

package extension KioskConfiguration.SignIn {
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Self()
        maxFailures = try c.decodeIfPresent(Int.self, forKey: .maxFailures) ?? d.maxFailures
        windowSeconds = try c.decodeIfPresent(Int.self, forKey: .windowSeconds) ?? d.windowSeconds
    }
}

package extension KioskConfiguration.Links {
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Self()
        format = try c.decodeIfPresent(String.self, forKey: .format) ?? d.format
        prefix = try c.decodeIfPresent(String.self, forKey: .prefix) ?? d.prefix
        lifetimeSeconds = try c.decodeIfPresent(Int.self, forKey: .lifetimeSeconds) ?? d.lifetimeSeconds
        expiryBucketSeconds = try c.decodeIfPresent(Int.self, forKey: .expiryBucketSeconds) ?? d.expiryBucketSeconds
    }
}

package extension KioskConfiguration.WebKioskEntry {
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        baseURL = try c.decode(String.self, forKey: .baseURL)
        sections = try c.decodeIfPresent(KioskConfiguration.OrderedPaths.self, forKey: .sections) ?? .init()
        defaultSection = try c.decodeIfPresent(String.self, forKey: .defaultSection)
        aliases = try c.decodeIfPresent([String: [String]].self, forKey: .aliases) ?? [:]
    }
}

package extension KioskConfiguration.Metrics {
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        loopbackOnly = try c.decodeIfPresent(Bool.self, forKey: .loopbackOnly)
        credentials = try c.decodeIfPresent([KioskConfiguration.Credential].self, forKey: .credentials) ?? []
    }
}

/// A configuration problem, naming the file, the key and what is wrong.
package struct ConfigurationError: Error, CustomStringConvertible {
    package var file: String
    package var key: String
    package var problem: String
    package var description: String { "\(file): \(key.isEmpty ? "" : "\(key): ")\(problem)" }
    package init(file: String, key: String, problem: String) { self.file = file; self.key = key; self.problem = problem }
}

package extension KioskConfiguration {
    /// The repository's configuration, used when no `--config` is given.
    package static let defaultPath = "Config/kiosk.yaml"

    /// Reads and validates a configuration file; every problem names the file and the key.
    package static func load(from path: String) throws -> KioskConfiguration {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(file: path, key: "", problem: "cannot be read (\(error.localizedDescription))")
        }
        if let node = try? Yams.compose(yaml: text), let unknown = ConfigurationKeys.file.unknownKey(in: node) {
            throw ConfigurationError(file: path, key: unknown, problem: "is not a known key (misspelt?)")
        }
        let configuration: KioskConfiguration
        do {
            let decoder = YAMLDecoder()
            configuration = try decoder.decode(KioskConfiguration.self, from: text,
                                               userInfo: [:])
        } catch let error as DecodingError {
            throw ConfigurationError(decoding: error, file: path)
        } catch {
            throw ConfigurationError(file: path, key: "", problem: "is not valid YAML: \(error)")
        }
        try configuration.validate(file: path)
        return configuration
    }

    package func validate(file: String) throws {
        func fail(_ key: String, _ problem: String) -> ConfigurationError {
            ConfigurationError(file: file, key: key, problem: problem)
        }
        guard (0...65535).contains(server.port) else { throw fail("server.port", "must be 0-65535, got \(server.port)") }
        if let url = server.publicURL, !(url.hasPrefix("http://") || url.hasPrefix("https://")) {
            throw fail("server.public_url", "must start with http:// or https://")
        }
        try validateRPCPaths(fail)
        guard limits.maxBodyBytes >= 1024 else { throw fail("limits.max_body_bytes", "must be at least 1024") }
        guard signIn.maxFailures >= 1 else { throw fail("sign_in.max_failures", "must be at least 1") }
        guard signIn.windowSeconds >= 1 else { throw fail("sign_in.window_seconds", "must be at least 1") }
        guard ["kiosk", "nginx"].contains(links.format) else {
            throw fail("links.format", "must be kiosk or nginx, got \"\(links.format)\"")
        }
        guard links.prefix.hasPrefix("/"), !links.prefix.hasSuffix("/"), links.prefix.count > 1 else {
            throw fail("links.prefix", "must start with / and not end with /, e.g. /files")
        }
        guard links.lifetimeSeconds >= 10 else { throw fail("links.lifetime_seconds", "must be at least 10") }
        guard (0...links.lifetimeSeconds).contains(links.expiryBucketSeconds) else {
            throw fail("links.expiry_bucket_seconds",
                       "must be 0 (off) to links.lifetime_seconds (\(links.lifetimeSeconds)), got \(links.expiryBucketSeconds)")
        }
        if metrics.loopbackOnly == false && metrics.credentials.isEmpty {
            throw fail("metrics.loopback_only", "false without metrics.credentials would let anyone scrape /metrics; add credentials or keep it true")
        }
        for (label, list) in [("api_clients", apiClients), ("publishers", publishers), ("metrics.credentials", metrics.credentials)] {
            var seen = Set<String>()
            for (index, credential) in list.enumerated() {
                let key = "\(label)[\(index)]"
                guard !credential.username.isEmpty, !credential.username.contains(":") else {
                    throw fail("\(key).username", "must be non-empty and contain no ':'")
                }
                guard seen.insert(credential.username).inserted else {
                    throw fail("\(key).username", "\"\(credential.username)\" is listed twice")
                }
                guard case .bcrypt? = StoredPasswordHash(credential.passwordHash) else {
                    throw fail("\(key).password_hash", "must be a bcrypt hash ($2a$/$2b$/$2y$); make one with `KioskServer hash-password`")
                }
            }
        }
        var editionIDs = Set<Int>()
        var publicationIDs = Set<Int>()
        for (p, publication) in publications.enumerated() {
            guard publication.id > 0, publicationIDs.insert(publication.id).inserted else {
                throw fail("publications[\(p)].id", "must be a positive id used once, got \(publication.id)")
            }
            for (e, edition) in publication.editions.enumerated() {
                guard edition.id > 0, edition.id <= Int(Int32.max), editionIDs.insert(edition.id).inserted else {
                    throw fail("publications[\(p)].editions[\(e)].id", "must be a positive id used once, got \(edition.id)")
                }
            }
        }
        var appKeys = Set<String>()
        for (a, app) in apps.enumerated() {
            guard !app.key.isEmpty, appKeys.insert(app.key).inserted else {
                throw fail("apps[\(a)].key", "must be non-empty and used once")
            }
            guard app.demoQuota >= 0 else { throw fail("apps[\(a)].demo_quota", "must be 0 or more") }
            if let kiosk = app.webKiosk { try kiosk.validate(key: "apps[\(a)].web_kiosk", fail) }
            var lineEditions = Set<Int>()
            for (l, line) in app.lines.enumerated() {
                guard editionIDs.contains(line.edition) else {
                    throw fail("apps[\(a)].lines[\(l)].edition", "edition \(line.edition) is not defined under publications")
                }
                guard lineEditions.insert(line.edition).inserted else {
                    throw fail("apps[\(a)].lines[\(l)].edition", "edition \(line.edition) has two lines in app \(app.key)")
                }
            }
        }
    }

    /// The XML-RPC paths, each unique once a trailing `/` is dropped (the router does not tell them apart),
    /// none under another route.
    private func validateRPCPaths(_ fail: (String, String) -> ConfigurationError) throws {
        guard !server.rpcPaths.isEmpty else { throw fail("server.rpc_paths", "must list at least one path, e.g. /RPC2") }
        let reserved = ["/healthz", "/readyz", "/metrics", "/sso", "/publish", links.prefix]
        for (index, path) in server.rpcPaths.enumerated() {
            let key = "server.rpc_paths[\(index)]"
            guard path.hasPrefix("/"), path.count > 1, !path.contains(where: { $0 == "?" || $0 == "#" || $0 == " " || $0 == ":" }) else {
                throw fail(key, "must be a path starting with / (no query, spaces or parameters), got \"\(path)\"")
            }
            if let route = reserved.first(where: { path == $0 || path.hasPrefix($0 + "/") }) {
                throw fail(key, "\(path) is under \(route), which Kiosk already answers")
            }
        }
    }

    /// The configured XML-RPC paths as the router matches them: without a trailing `/`, each once.
    package var rpcRoutes: [String] {
        var seen = Set<String>()
        return server.rpcPaths.compactMap { path in
            let route = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
            return seen.insert(route).inserted ? route : nil
        }
    }

    /// The catalogue part, in domain terms.
    package var catalogue: Catalogue {
        Catalogue(
            publications: publications.map { Publication(id: $0.id, name: $0.name) },
            editions: publications.flatMap { publication in
                publication.editions.map {
                    Edition(id: $0.id, publicationID: publication.id, name: $0.name, createdOn: $0.created)
                }
            },
            apps: apps.map { App(key: $0.key, name: $0.name, demoQuota: $0.demoQuota) },
            tariffLines: apps.flatMap { app in
                app.lines.map { TariffLine(appKey: app.key, editionID: $0.edition, order: $0.order, access: $0.access) }
            })
    }

    package var webKiosks: [String: WebKiosk] {
        Dictionary(uniqueKeysWithValues: apps.compactMap { app in
            app.webKiosk.map { entry in
                (app.key, WebKiosk(
                    baseURL: entry.baseURL,
                    sections: entry.sections.entries.map {
                        WebKiosk.Section(name: $0.name, path: $0.path, aliases: entry.aliases[$0.name] ?? [])
                    },
                    defaultSection: entry.defaultSection))
            }
        })
    }

    package var publicURL: String {
        let url = server.publicURL ?? "http://\(server.host.contains(":") ? "[\(server.host)]" : server.host):\(server.port)"
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }
}

package extension KioskConfiguration.WebKioskEntry {
    package func validate(key: String, _ fail: (String, String) -> ConfigurationError) throws {
        guard baseURL.hasPrefix("http://") || baseURL.hasPrefix("https://") else {
            throw fail("\(key).base_url", "must start with http:// or https://")
        }
        var owner: [String: String] = [:]   // folded name -> section
        for entry in sections.entries {
            guard owner.updateValue(entry.name, forKey: entry.name.lowercased()) == nil else {
                throw fail("\(key).sections.\(entry.name)", "is listed twice (names match whatever their case)")
            }
        }
        if let name = defaultSection, !sections.entries.contains(where: { $0.name == name }) {
            throw fail("\(key).default_section", "\"\(name)\" is not one of the sections")
        }
        for (section, names) in aliases.sorted(by: { $0.key < $1.key }) {
            guard sections.entries.contains(where: { $0.name == section }) else {
                throw fail("\(key).aliases.\(section)", "\"\(section)\" is not one of the sections")
            }
            for name in names {
                if let other = owner.updateValue(section, forKey: name.lowercased()), other != section {
                    throw fail("\(key).aliases.\(section)", "\"\(name)\" already names section \"\(other)\"")
                }
            }
        }
    }
}

package extension ConfigurationError {
    package init(decoding error: DecodingError, file: String) {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.reduce(into: "") { text, key in
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
        }
        switch error {
        case .typeMismatch(let type, let context):
            self.init(file: file, key: path(context.codingPath), problem: "expected \(type): \(context.debugDescription)")
        case .valueNotFound(let type, let context):
            self.init(file: file, key: path(context.codingPath), problem: "missing \(type) value")
        case .keyNotFound(let key, let context):
            self.init(file: file, key: path(context.codingPath + [key]), problem: "is required")
        case .dataCorrupted(let context):
            self.init(file: file, key: path(context.codingPath), problem: context.debugDescription)
        @unknown default:
            self.init(file: file, key: "", problem: "\(error)")
        }
    }
}
