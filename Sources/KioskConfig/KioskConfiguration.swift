import Foundation
import KioskModels

/// The operator's configuration (`Config/kiosk.yaml`), as written in the file.
///
/// Keys are snake_case in YAML (`CodingKeys`); every key may be left out and keeps the default written
/// here (`ConfigurationFile`). Relative paths are relative to the working directory.
package struct KioskConfiguration: Codable, Sendable, Equatable {
    package enum CodingKeys: String, CodingKey {
        case server, limits, links, publishers, publications, apps, metrics, pdf
        case signIn = "sign_in", webKioskTokenLifetimeSeconds = "web_kiosk_token_lifetime_seconds"
        case webSessionLifetimeSeconds = "web_session_lifetime_seconds"
        case consoleSessionLifetimeSeconds = "console_session_lifetime_seconds"
        case secretFile = "secret_file", apiClients = "api_clients"
        case operators, catalogueSource = "catalogue_source", stores, events, webhooks, push
    }

    package var server = Server()
    package var limits = Limits()
    package var signIn = SignIn()
    package var links = Links()
    package var metrics = Metrics()
    package var pdf = PDF()
    /// The longest any configured duration (a lifetime, a window) may be: ten years.
    package static let maxDurationSeconds = 10 * 366 * 86_400
    package var webKioskTokenLifetimeSeconds = 300
    /// How long a reader stays signed in to the web kiosk (`/web/{app}`) after following a `hashQuiosc` link.
    package var webSessionLifetimeSeconds = 8 * 3600
    /// How long an operator stays signed in to the console (`/admin`).
    package var consoleSessionLifetimeSeconds = 2 * 3600
    package var secretFile: String?
    package var apiClients: [Credential] = []
    package var publishers: [Credential] = []
    /// Who may sign in to the operator console (`/admin`), and what they may do there.
    package var operators: [OperatorEntry] = []
    /// Where the catalogue (publications, editions, apps, tariff lines, demo quotas, web kiosks) is kept: `file` makes
    /// this file the truth at every start and reload; `console` lets the file seed an empty database once,
    /// then the database (edited in the console) is the truth and the file is applied only on request.
    package var catalogueSource: CatalogueSource = .file
    package var publications: [PublicationEntry] = []
    package var apps: [AppEntry] = []
    /// How the App Store and Google Play are reached and trusted, for every app that sells in them.
    package var stores = Stores()
    /// How long the event outbox keeps events.
    package var events = Events()
    /// Where events are posted in the publishers' systems, and how.
    package var webhooks = Webhooks()
    /// How new issues are announced to reader apps (each app's side is `apps[].push`).
    package var push = Push()

    package init() {}

    package struct Events: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case keepDays = "keep_days"
        }
        /// Events older than this many days are pruned once every webhook endpoint has been offered them;
        /// an event stream can resume only from an event still kept.
        package var keepDays = 7
    }

    package struct Webhooks: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case endpoints, allowHosts = "allow_hosts", timeoutSeconds = "timeout_seconds", concurrency
        }
        /// The file's endpoints; the console adds its own beside them.
        @DefaultsToEmpty package var endpoints: [WebhookEntry] = []
        /// Hosts (as written in endpoints' URLs) allowed although they resolve to loopback, link-local or
        /// private addresses; every other such destination is refused.
        @DefaultsToEmpty package var allowHosts: [String] = []
        /// How long one try may take, answer included.
        package var timeoutSeconds = 15
        /// How many deliveries one instance makes at once.
        package var concurrency = 16
    }

    /// An endpoint of the file, kept by its `name` across reloads (its state and delivery log with it).
    package struct WebhookEntry: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case name, owner, url, types, secretFile = "secret_file"
        }
        package var name: String
        /// The operator it belongs to.
        package var owner: String
        package var url: String
        /// Event types (`issue.published`) or families (`issue.*`); empty: every type.
        @DefaultsToEmpty package var types: [String] = []
        /// A file holding the `whsec_` secret, or two (one per line, the new one first) during a rotation.
        package var secretFile: String
    }

    /// The server's side of store purchases; each app's own identities are under `apps[].store`.
    package struct Stores: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case apple, google
            case anonymousDeviceLimit = "anonymous_device_limit"
        }
        package var apple = Apple()
        package var google = Google()
        /// On how many devices an anonymous reader's purchase may be restored before it must sign in.
        package var anonymousDeviceLimit = 5

        package struct Apple: Codable, Sendable, Equatable {
            package enum CodingKeys: String, CodingKey {
                case rootCertificates = "root_certificates", clockSkewSeconds = "clock_skew_seconds"
            }
            /// DER or PEM files of the roots StoreKit's chains must reach: Apple Root CA - G3 in production.
            package var rootCertificates: [String] = []
            /// How far in the future a `signedDate` may be.
            package var clockSkewSeconds = 300
        }

        package struct Google: Codable, Sendable, Equatable {
            package enum CodingKeys: String, CodingKey {
                case serviceAccountFile = "service_account_file", apiBaseURL = "api_base_url", tokenURL = "token_url"
                case pushAudience = "push_audience", pushServiceAccount = "push_service_account"
                case signingKeysURL = "signing_keys_url", caCertificates = "ca_certificates"
            }
            /// The service account's JSON key file, for the Play Developer API.
            package var serviceAccountFile: String?
            package var apiBaseURL = "https://androidpublisher.googleapis.com"
            /// Nil: the key file's `token_uri`.
            package var tokenURL: String?
            /// The audience the Pub/Sub push subscription puts in its OIDC tokens.
            package var pushAudience: String?
            /// The service account Pub/Sub pushes as (the tokens' `email`).
            package var pushServiceAccount: String?
            package var signingKeysURL = "https://www.googleapis.com/oauth2/v3/certs"
            /// A PEM file of the only roots Google's HTTPS endpoints are trusted under (a proxy that terminates
            /// TLS, a test stand-in); nil: the system's roots.
            package var caCertificates: String?
        }
    }

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
            case answerCacheBytes = "answer_cache_bytes"
            case searchesPerMinute = "searches_per_minute", searchBurst = "search_burst"
            case purchaseChecksPerMinute = "purchase_checks_per_minute", purchaseCheckBurst = "purchase_check_burst"
        }

        package var maxBodyBytes = 1 << 20
        package var maxUploadBytes = 2 << 30
        package var databaseBusyTimeoutSeconds = 5.0
        /// Memory for catalogue answers kept between calls (`AnswerCache`, three quarters) and for the catalogue
        /// reads of `getEdicio` (`CatalogueMemo`, a quarter); 0: none kept.
        package var answerCacheBytes = 64 << 20
        /// Searches (`cercar`, the web kiosk's search) one client may make a minute after `searchBurst`
        /// at once (`ClientBudget`); 0: no limit. A reload starts every client's budget afresh.
        package var searchesPerMinute = 60
        package var searchBurst = 20
        /// Purchases (`registrarCompra`, each of `restaurarCompres`) one client may have verified a minute after
        /// `purchaseCheckBurst` at once (`ClientBudget`); 0: no limit.
        package var purchaseChecksPerMinute = 30
        package var purchaseCheckBurst = 40
    }

    /// Publishing from PDFs alone: the images made of each page and the limits every tool runs under.
    package struct PDF: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case smallImage = "small_image", largeImage = "large_image", jpegQuality = "jpeg_quality"
            case cpuSeconds = "cpu_seconds", memoryBytes = "memory_bytes", wallSeconds = "wall_seconds"
            case maxOutputBytes = "max_output_bytes"
            case bwrap, sandboxUser = "sandbox_user"
        }

        /// Pixel size `WIDTHxHEIGHT` of each page's small image (`jpg/`).
        package var smallImage = "300x400"
        /// Pixel size of each page's high-resolution image (`jpgA/`).
        package var largeImage = "1200x1600"
        package var jpegQuality = 85
        /// Processor seconds one tool run may use.
        package var cpuSeconds = 60
        /// Address space one tool run may use.
        package var memoryBytes: Int64 = 1 << 30
        /// Wall-clock seconds before a tool run is killed.
        package var wallSeconds = 120.0
        /// The most one tool run may write (each file, and its scratch folder in all).
        package var maxOutputBytes: Int64 = 512 << 20
        /// The bubblewrap program the tools run in (empty: `bwrap` on `PATH`); read at start.
        package var bwrap = ""
        /// The unprivileged user (name or numeric uid) the tools run as when the server is root; read at start.
        package var sandboxUser = "nobody"

        /// `WIDTHxHEIGHT` as numbers, or nil when malformed.
        package static func pixels(_ text: String) -> (width: Int, height: Int)? {
            let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]),
                  (16...10_000).contains(width), (16...10_000).contains(height) else { return nil }
            return (width, height)
        }
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

    /// An HTTP Basic account: API client or publisher. Only a bcrypt hash of the password is kept. A
    /// publisher may list the `publications` and `editions` it publishes to (its scope); without either
    /// it may publish to every edition.
    package struct Credential: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case username, publications, editions
            case passwordHash = "password_hash"
        }

        package var username: String
        package var passwordHash: String
        package var publications: [Int]?
        package var editions: [Int]?
        package init(username: String, passwordHash: String, scope: PublisherScope? = nil) {
            self.username = username; self.passwordHash = passwordHash
            publications = scope.map { $0.publications.sorted() }
            editions = scope.map { $0.editions.sorted() }
        }

        /// The scope the entry lists; nil when it lists neither key.
        package var scope: PublisherScope? {
            guard publications != nil || editions != nil else { return nil }
            return PublisherScope(publications: Set(publications ?? []), editions: Set(editions ?? []))
        }
    }

    /// An operator of the console: `operator` may do everything, `editor` may only publish and withdraw.
    package struct OperatorEntry: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case username, role
            case passwordHash = "password_hash"
        }
        package var username: String
        package var passwordHash: String
        package var role: OperatorRole
        package init(username: String, passwordHash: String, role: OperatorRole) {
            self.username = username; self.passwordHash = passwordHash; self.role = role
        }
        package var credential: Credential { Credential(username: username, passwordHash: passwordHash) }
    }

    package enum CatalogueSource: String, Codable, Sendable, Equatable {
        case file, console
    }

    package struct PublicationEntry: Codable, Sendable, Equatable {
        package var id: Int
        package var name: String
        @DefaultsToEmpty package var editions: [EditionEntry] = []
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
            case key, name, lines, store, products, push
            case demoQuota = "demo_quota", webKiosk = "web_kiosk"
        }

        package var key: String
        package var name: String
        @DefaultsToEmpty package var demoQuota = 0
        package var webKiosk: WebKioskEntry?
        @DefaultsToEmpty package var lines: [LineEntry] = []
        /// Who the app is in each store it sells in.
        package var store: AppStoreEntry?
        /// What it sells there.
        @DefaultsToEmpty package var products: [ProductEntry] = []
        /// How its devices hear of new issues; nil: they are not told (registrations are still kept).
        package var push: AppPushEntry?

        package init(key: String, name: String, demoQuota: Int = 0, webKiosk: WebKioskEntry? = nil, lines: [LineEntry] = [],
                     store: AppStoreEntry? = nil, products: [ProductEntry] = []) {
            self.key = key; self.name = name; self.demoQuota = demoQuota; self.webKiosk = webKiosk; self.lines = lines
            self.store = store; self.products = products
        }
    }

    /// An app's identities in the stores.
    package struct AppStoreEntry: Codable, Sendable, Equatable {
        package var apple: AppleApp?
        package var google: GoogleApp?

        package struct AppleApp: Codable, Sendable, Equatable {
            package enum CodingKeys: String, CodingKey {
                case bundleID = "bundle_id", appAppleID = "app_apple_id", environments
            }
            package var bundleID: String
            /// Required when `environments` lists Production (Apple puts it in every production notification).
            package var appAppleID: Int64?
            /// `Production`, and `Sandbox` for App Review and testers; empty: Production only.
            @DefaultsToEmpty package var environments: [String] = []

            package var acceptedEnvironments: [String] { environments.isEmpty ? ["Production"] : environments }
        }

        package struct GoogleApp: Codable, Sendable, Equatable {
            package enum CodingKeys: String, CodingKey { case packageName = "package_name", acceptTestPurchases = "accept_test_purchases" }
            package var packageName: String
            /// Whether license testers' purchases (no money moves) grant, as Sandbox does for Apple; false in production.
            @DefaultsToEmpty package var acceptTestPurchases = false
        }
    }

    /// A product an app sells: `id` in both stores unless `apple_id` or `google_id` says otherwise.
    package struct ProductEntry: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case id, kind, editions, credits, scope
            case appleID = "apple_id", googleID = "google_id"
        }
        package var id: String
        package var appleID: String?
        package var googleID: String?
        package var kind: ProductKind
        @DefaultsToEmpty package var editions: [Int] = []
        @DefaultsToEmpty package var credits = 0
        /// A subscription's scope; nil: `period`.
        package var scope: SubscriptionScope?

        package init(_ product: StoreProduct) {
            id = product.id; appleID = product.storeIDs[.apple]; googleID = product.storeIDs[.google]; kind = product.kind
            editions = product.editions; credits = product.credits
            scope = product.kind == .subscription ? product.scope : nil
        }

        package func product(appKey: String) -> StoreProduct {
            var storeIDs: [Storefront: String] = [:]
            if let appleID { storeIDs[.apple] = appleID }
            if let googleID { storeIDs[.google] = googleID }
            return StoreProduct(appKey: appKey, id: id, storeIDs: storeIDs, kind: kind, editions: editions, credits: credits,
                                scope: scope ?? .period)
        }
    }

    /// An app's web kiosk. Without `base_url` it is Kiosk's own, at `public_url` + `/web/<app key>`.
    package struct WebKioskEntry: Codable, Sendable, Equatable {
        package var baseURL: String?
        /// Section name -> path, in the file's order (the first is the default unless `default_section` says).
        @DefaultsToEmpty package var sections = OrderedPaths()
        /// Opened for an unknown or empty `seccioQ`.
        package var defaultSection: String?
        /// Section name -> other names the apps send for it.
        @DefaultsToEmpty package var aliases: [String: [String]] = [:]
        package enum CodingKeys: String, CodingKey {
            case baseURL = "base_url", sections, aliases
            case defaultSection = "default_section"
        }

        package init(baseURL: String?, sections: OrderedPaths = OrderedPaths(), defaultSection: String? = nil,
                     aliases: [String: [String]] = [:]) {
            self.baseURL = baseURL; self.sections = sections; self.defaultSection = defaultSection; self.aliases = aliases
        }

        /// The entry of a stored web kiosk (`config export`, the console's validation).
        package init(_ stored: AppWebKiosk) {
            self.init(baseURL: stored.baseURL,
                      sections: OrderedPaths(stored.sections.map { OrderedPaths.Entry(name: $0.name, path: $0.path) }),
                      defaultSection: stored.defaultSection,
                      aliases: Dictionary(stored.sections.filter { !$0.aliases.isEmpty }.map { ($0.name, $0.aliases) },
                                          uniquingKeysWith: { first, second in first + second }))
        }

        /// The web kiosk as the catalogue keeps it: each section with its aliases.
        package func stored(appKey: String) -> AppWebKiosk {
            AppWebKiosk(appKey: appKey, baseURL: baseURL,
                        sections: sections.entries.map { WebKiosk.Section(name: $0.name, path: $0.path, aliases: aliases[$0.name] ?? []) },
                        defaultSection: defaultSection)
        }
    }

    /// A YAML map of names to paths that keeps the file's order.
    package struct OrderedPaths: EmptyConfigurationValue, Sendable {
        package static var empty: OrderedPaths { OrderedPaths() }
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

// What the configuration gives the rest of the server, in its terms.
extension KioskConfiguration {
    /// The configured XML-RPC paths as the router matches them: without a trailing `/`, each once.
    package var rpcRoutes: [String] {
        var seen = Set<String>()
        return server.rpcPaths.compactMap { path in
            let route = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
            return seen.insert(route).inserted ? route : nil
        }
    }

    /// The catalogue part, in domain terms, with the accounts (`api_clients`, `publishers`, `operators`).
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
            },
            accounts: apiClients.map { Account(kind: .apiClient, username: $0.username, passwordHash: $0.passwordHash) }
                + publishers.map { Account(kind: .publisher, username: $0.username, passwordHash: $0.passwordHash, scope: $0.scope) }
                + operators.map { Account(kind: .operator, username: $0.username, passwordHash: $0.passwordHash, role: $0.role) },
            webKiosks: apps.compactMap { app in app.webKiosk?.stored(appKey: app.key) },
            products: storeProducts)
    }

    /// What each app sells in the stores, in domain terms.
    package var storeProducts: [StoreProduct] {
        apps.flatMap { app in app.products.map { $0.product(appKey: app.key) } }
    }

    /// Every app's web kiosk as `hashQuiosc` answers from this file's catalogue: the one its `web_kiosk`
    /// names, or Kiosk's own (`/web/<app key>`, sections `portada` and `compte`) for an app without one or
    /// without a `base_url` (`AppWebKiosk.webKiosk(ownBaseURL:)`).
    package var webKiosks: [String: WebKiosk] {
        Dictionary(uniqueKeysWithValues: apps.map { app in
            let own = "\(publicURL)/web/\(app.key)"
            return (app.key, app.webKiosk?.stored(appKey: app.key).webKiosk(ownBaseURL: own) ?? AppWebKiosk.own(baseURL: own))
        })
    }

    /// Readers reach Kiosk over TLS (its own, or a proxy's at an `https` public URL): cookies are `Secure`.
    package var servesTLS: Bool { server.tls != nil || publicURL.hasPrefix("https://") }

    package var publicURL: String {
        let url = server.publicURL ?? "http://\(server.host.contains(":") ? "[\(server.host)]" : server.host):\(server.port)"
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }
}
