import Foundation
import KioskModels
import Yams

/// The operator's configuration (`Config/kiosk.yaml`), as written in the file.
///
/// Keys are snake_case in YAML. Relative paths are relative to the working directory.
struct KioskConfiguration: Codable, Sendable, Equatable {
    enum CodingKeys: String, CodingKey {
        case server, limits, links, publishers, publications, apps, metrics
        case signIn = "sign_in", webKioskTokenLifetimeSeconds = "web_kiosk_token_lifetime_seconds"
        case secretFile = "secret_file", apiClients = "api_clients"
    }

    var server = Server()
    var limits = Limits()
    var signIn = SignIn()
    var links = Links()
    var metrics = Metrics()
    var webKioskTokenLifetimeSeconds = 300
    var secretFile: String?
    var apiClients: [Credential] = []
    var publishers: [Credential] = []
    var publications: [PublicationEntry] = []
    var apps: [AppEntry] = []

    struct Server: Codable, Sendable, Equatable {
        enum CodingKeys: String, CodingKey {
            case host, port, database, editions, samples, tls
            case publicURL = "public_url", idleTimeoutSeconds = "idle_timeout_seconds", jsonLogs = "json_logs"
        }

        var host = "127.0.0.1"
        var port = 8080
        /// Base of the links handed out, e.g. `https://kiosk.example.cat`; default `http://host:port`.
        var publicURL: String?
        var database = "data/kiosk.sqlite"
        var editions = "Editions"
        /// Sample issue folders published on first start into an empty database.
        var samples: String?
        var tls: TLS?
        /// Seconds an idle keep-alive connection stays open.
        var idleTimeoutSeconds = 60
        /// Emit logs as JSON lines.
        var jsonLogs = false
    }

    struct TLS: Codable, Sendable, Equatable {
        var certificate: String
        var key: String
    }

    struct Limits: Codable, Sendable, Equatable {
        enum CodingKeys: String, CodingKey {
            case maxBodyBytes = "max_body_bytes", maxUploadBytes = "max_upload_bytes"
            case databaseBusyTimeoutSeconds = "database_busy_timeout_seconds"
        }

        var maxBodyBytes = 1 << 20
        var maxUploadBytes = 2 << 30
        var databaseBusyTimeoutSeconds = 5.0
    }

    struct SignIn: Codable, Sendable, Equatable {
        enum CodingKeys: String, CodingKey {
            case maxFailures = "max_failures", windowSeconds = "window_seconds"
        }

        var maxFailures = 5
        var windowSeconds = 900
    }

    struct Links: Codable, Sendable, Equatable {
        enum CodingKeys: String, CodingKey {
            case format, prefix
            case lifetimeSeconds = "lifetime_seconds"
            case expiryBucketSeconds = "expiry_bucket_seconds"
        }

        /// `kiosk` (lighttpd mod_secdownload hmac-sha256 form) or `nginx` (secure_link md5 form).
        var format = "kiosk"
        var prefix = "/files"
        var lifetimeSeconds = 3600
        /// Expiries are rounded up to this many seconds, so links signed within one bucket are the same
        /// (`SignedLinks.stamp`); 0: off. At most `lifetimeSeconds`.
        var expiryBucketSeconds = 300
    }

    /// Who may scrape `GET /metrics`.
    struct Metrics: Codable, Sendable, Equatable {
        enum CodingKeys: String, CodingKey {
            case credentials
            case loopbackOnly = "loopback_only"
        }

        /// Only loopback clients (not forwarded by a proxy); nil: true unless credentials are given.
        var loopbackOnly: Bool?
        /// HTTP Basic accounts of scrapers; when given, a scrape must present one of them.
        var credentials: [Credential] = []

        var effectiveLoopbackOnly: Bool { loopbackOnly ?? credentials.isEmpty }
    }

    /// An HTTP Basic account: API client or publisher. Only a bcrypt hash of the password is kept.
    struct Credential: Codable, Sendable, Equatable {
        enum CodingKeys: String, CodingKey {
            case username
            case passwordHash = "password_hash"
        }

        var username: String
        var passwordHash: String
    }

    struct PublicationEntry: Codable, Sendable, Equatable {
        var id: Int
        var name: String
        var editions: [EditionEntry] = []
    }

    struct EditionEntry: Codable, Sendable, Equatable {
        var id: Int
        var name: String
        var created: IssueDate
    }

    struct AppEntry: Codable, Sendable, Equatable {
        enum CodingKeys: String, CodingKey {
            case key, name, lines
            case demoQuota = "demo_quota", webKiosk = "web_kiosk"
        }

        var key: String
        var name: String
        var demoQuota = 0
        var webKiosk: WebKioskEntry?
        var lines: [LineEntry] = []
    }

    struct WebKioskEntry: Codable, Sendable, Equatable {
        var baseURL: String
        var sections: [String: String] = [:]
        enum CodingKeys: String, CodingKey { case baseURL = "base_url", sections }
    }

    struct LineEntry: Codable, Sendable, Equatable {
        var edition: Int
        var order: Int
        var access: LineAccess
    }
}

// Every key is optional in the file: a missing one keeps its default.
extension KioskConfiguration {
    init(from decoder: any Decoder) throws {
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

extension KioskConfiguration.Server {
    init(from decoder: any Decoder) throws {
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
    }
}

extension KioskConfiguration.Limits {
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Self()
        maxBodyBytes = try c.decodeIfPresent(Int.self, forKey: .maxBodyBytes) ?? d.maxBodyBytes
        maxUploadBytes = try c.decodeIfPresent(Int.self, forKey: .maxUploadBytes) ?? d.maxUploadBytes
        databaseBusyTimeoutSeconds = try c.decodeIfPresent(Double.self, forKey: .databaseBusyTimeoutSeconds)
            ?? d.databaseBusyTimeoutSeconds
    }
}

extension KioskConfiguration.SignIn {
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Self()
        maxFailures = try c.decodeIfPresent(Int.self, forKey: .maxFailures) ?? d.maxFailures
        windowSeconds = try c.decodeIfPresent(Int.self, forKey: .windowSeconds) ?? d.windowSeconds
    }
}

extension KioskConfiguration.Links {
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Self()
        format = try c.decodeIfPresent(String.self, forKey: .format) ?? d.format
        prefix = try c.decodeIfPresent(String.self, forKey: .prefix) ?? d.prefix
        lifetimeSeconds = try c.decodeIfPresent(Int.self, forKey: .lifetimeSeconds) ?? d.lifetimeSeconds
        expiryBucketSeconds = try c.decodeIfPresent(Int.self, forKey: .expiryBucketSeconds) ?? d.expiryBucketSeconds
    }
}

extension KioskConfiguration.Metrics {
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        loopbackOnly = try c.decodeIfPresent(Bool.self, forKey: .loopbackOnly)
        credentials = try c.decodeIfPresent([KioskConfiguration.Credential].self, forKey: .credentials) ?? []
    }
}

/// A configuration problem, naming the file, the key and what is wrong.
struct ConfigurationError: Error, CustomStringConvertible {
    var file: String
    var key: String
    var problem: String
    var description: String { "\(file): \(key.isEmpty ? "" : "\(key): ")\(problem)" }
}

extension KioskConfiguration {
    /// The repository's configuration, used when no `--config` is given.
    static let defaultPath = "Config/kiosk.yaml"

    /// Reads and validates a configuration file; every problem names the file and the key.
    static func load(from path: String) throws -> KioskConfiguration {
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

    func validate(file: String) throws {
        func fail(_ key: String, _ problem: String) -> ConfigurationError {
            ConfigurationError(file: file, key: key, problem: problem)
        }
        guard (0...65535).contains(server.port) else { throw fail("server.port", "must be 0-65535, got \(server.port)") }
        if let url = server.publicURL, !(url.hasPrefix("http://") || url.hasPrefix("https://")) {
            throw fail("server.public_url", "must start with http:// or https://")
        }
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
                guard PasswordHashing.isBcryptHash(credential.passwordHash) else {
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
            if let kiosk = app.webKiosk, !(kiosk.baseURL.hasPrefix("http://") || kiosk.baseURL.hasPrefix("https://")) {
                throw fail("apps[\(a)].web_kiosk.base_url", "must start with http:// or https://")
            }
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

    /// The catalogue part, in domain terms.
    var catalogue: Catalogue {
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

    var webKiosks: [String: WebKiosk] {
        Dictionary(uniqueKeysWithValues: apps.compactMap { app in
            app.webKiosk.map { (app.key, WebKiosk(baseURL: $0.baseURL, sections: $0.sections)) }
        })
    }

    var publicURL: String {
        let url = server.publicURL ?? "http://\(server.host.contains(":") ? "[\(server.host)]" : server.host):\(server.port)"
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }
}

extension ConfigurationError {
    init(decoding error: DecodingError, file: String) {
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
