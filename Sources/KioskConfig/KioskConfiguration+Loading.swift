import Foundation
import KioskModels
import Yams

/// A configuration problem, naming the file, the key and what is wrong.
package struct ConfigurationError: Error, CustomStringConvertible {
    package var file: String
    package var key: String
    package var problem: String
    package var description: String { "\(file): \(key.isEmpty ? "" : "\(key): ")\(problem)" }
    package init(file: String, key: String, problem: String) { self.file = file; self.key = key; self.problem = problem }
}

extension KioskConfiguration {
    /// The repository's configuration, used when no `--config` is given.
    package static let defaultPath = "Config/kiosk.yaml"

    /// The largest configuration file read.
    package static let maxFileBytes = 4 << 20
    /// The most YAML aliases a configuration file may use.
    package static let maxAliases = 64

    /// Reads and validates a configuration file; every problem names the file and the key.
    package static func load(from path: String) throws -> KioskConfiguration {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(file: path, key: "", problem: "cannot be read (\(error.localizedDescription))")
        }
        // An alias expands to a copy of what it names wherever it stands, so a few kilobytes of nested
        // aliases can stand for millions of nodes: few are allowed, and the file's size is bounded.
        guard text.utf8.count <= maxFileBytes else {
            throw ConfigurationError(file: path, key: "", problem: "is larger than \(maxFileBytes >> 20) MiB")
        }
        let aliases = text.matches(of: /(?:^|[\s,\[{:-])\*[^\s,\[\]{}]+/).count
        guard aliases <= maxAliases else {
            throw ConfigurationError(file: path, key: "", problem: "uses \(aliases) YAML aliases (*name); at most \(maxAliases) are allowed")
        }
        let file: Node
        do {
            file = try Yams.compose(yaml: text) ?? Node.Mapping([]).node
        } catch {
            throw ConfigurationError(file: path, key: "", problem: "is not valid YAML: \(error)")
        }
        let configuration = try ConfigurationFile.decode(file, path: path)
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
        guard limits.answerCacheBytes >= 0 else { throw fail("limits.answer_cache_bytes", "must be 0 (off) or more") }
        guard (0...1_000_000).contains(limits.searchesPerMinute) else {
            throw fail("limits.searches_per_minute", "must be 0 (no limit) to 1000000")
        }
        guard (1...1_000_000).contains(limits.searchBurst) else { throw fail("limits.search_burst", "must be 1 to 1000000") }
        guard (0...1_000_000).contains(limits.purchaseChecksPerMinute) else {
            throw fail("limits.purchase_checks_per_minute", "must be 0 (no limit) to 1000000")
        }
        guard (1...1_000_000).contains(limits.purchaseCheckBurst) else {
            throw fail("limits.purchase_check_burst", "must be 1 to 1000000")
        }
        for (key, value) in [("pdf.small_image", pdf.smallImage), ("pdf.large_image", pdf.largeImage)]
            where PDF.pixels(value) == nil {
            throw fail(key, "must be WIDTHxHEIGHT in pixels, each 16-10000, e.g. 1200x1600; got \"\(value)\"")
        }
        guard (1...100).contains(pdf.jpegQuality) else { throw fail("pdf.jpeg_quality", "must be 1-100") }
        guard pdf.cpuSeconds >= 1 else { throw fail("pdf.cpu_seconds", "must be at least 1") }
        guard pdf.wallSeconds >= 1 else { throw fail("pdf.wall_seconds", "must be at least 1") }
        guard pdf.memoryBytes >= 64 << 20 else { throw fail("pdf.memory_bytes", "must be at least 67108864 (64 MiB)") }
        guard pdf.maxOutputBytes >= 1 << 20 else { throw fail("pdf.max_output_bytes", "must be at least 1048576 (1 MiB)") }
        guard !pdf.sandboxUser.isEmpty else { throw fail("pdf.sandbox_user", "must name an unprivileged user or uid, e.g. nobody") }
        guard pdf.bwrap.isEmpty || pdf.bwrap.hasPrefix("/") else {
            throw fail("pdf.bwrap", "must be an absolute path, or empty to find bwrap on PATH; got \"\(pdf.bwrap)\"")
        }
        guard signIn.maxFailures >= 1 else { throw fail("sign_in.max_failures", "must be at least 1") }
        // Every duration is added to or taken from a clock time: bounded, so that no sum can overflow.
        let tenYears = Self.maxDurationSeconds
        for (key, seconds) in [("sign_in.window_seconds", signIn.windowSeconds), ("links.lifetime_seconds", links.lifetimeSeconds),
                               ("web_kiosk_token_lifetime_seconds", webKioskTokenLifetimeSeconds),
                               ("web_session_lifetime_seconds", webSessionLifetimeSeconds),
                               ("console_session_lifetime_seconds", consoleSessionLifetimeSeconds)] {
            guard (1...tenYears).contains(seconds) else { throw fail(key, "must be 1 to \(tenYears) seconds (ten years), got \(seconds)") }
        }
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
        var seen = Set<String>()
        for (index, credential) in metrics.credentials.enumerated() {
            let key = "metrics.credentials[\(index)]"
            if let (field, rule) = Account.credentialProblem(username: credential.username, passwordHash: credential.passwordHash) {
                throw fail("\(key).\(field)", rule)
            }
            guard seen.insert(credential.username).inserted else {
                throw fail("\(key).username", "\"\(credential.username)\" is listed twice")
            }
        }
        // What the file can say that the catalogue cannot hold, checked before the catalogue's own rules.
        for (label, list) in [("api_clients", apiClients), ("metrics.credentials", metrics.credentials),
                              ("operators", operators.map(\.credential))] {
            for (index, credential) in list.enumerated() where credential.scope != nil {
                throw fail("\(label)[\(index)]", "publications and editions (a scope) are for publishers only")
            }
        }
        for (a, app) in apps.enumerated() {
            for section in (app.webKiosk?.aliases.keys).map({ $0.sorted() }) ?? []
                where !(app.webKiosk?.sections.entries.contains { $0.name == section } ?? false) {
                throw fail("apps[\(a)].web_kiosk.aliases.\(section)", "\"\(section)\" is not one of the sections")
            }
        }
        do {
            try catalogue.validate()
        } catch {
            throw fail(keyPath(of: error), error.rule)
        }
        try validateStores(fail)
        try validateEvents(fail)
        try validatePush(fail)
    }

    /// The outbox's keep time and the file's webhook endpoints (their secret files are read at start, at
    /// reload and by `config check`, where the server is wired).
    private func validateEvents(_ fail: (String, String) -> ConfigurationError) throws {
        guard (1...3_650).contains(events.keepDays) else { throw fail("events.keep_days", "must be 1 to 3650 days") }
        guard (1...120).contains(webhooks.timeoutSeconds) else { throw fail("webhooks.timeout_seconds", "must be 1 to 120") }
        guard (1...1_000).contains(webhooks.concurrency) else { throw fail("webhooks.concurrency", "must be 1 to 1000") }
        for (index, host) in webhooks.allowHosts.enumerated() where host.isEmpty || host.contains(where: { $0.isWhitespace || $0 == "/" }) {
            throw fail("webhooks.allow_hosts[\(index)]", "must be a host name or address as written in a URL, got \"\(host)\"")
        }
        var names = Set<String>()
        for (index, entry) in webhooks.endpoints.enumerated() {
            let key = "webhooks.endpoints[\(index)]"
            guard !entry.name.isEmpty, entry.name.count <= 100 else { throw fail("\(key).name", "must be 1 to 100 characters") }
            guard names.insert(entry.name).inserted else { throw fail("\(key).name", "\"\(entry.name)\" is used twice") }
            guard !entry.owner.isEmpty else { throw fail("\(key).owner", "must name the operator the endpoint belongs to") }
            if let problem = WebhookEndpoint.urlProblem(entry.url) { throw fail("\(key).url", problem) }
            if case .failure(let unknown) = EventType.parseList(entry.types.joined(separator: ",")) {
                throw fail("\(key).types", unknown.description)
            }
            guard !entry.secretFile.isEmpty else { throw fail("\(key).secret_file", "must name the file holding the endpoint's whsec_ secret") }
        }
    }

    /// The stores' side: each app's identities there, and the server's trust and credentials when an app
    /// sells (the products are the catalogue's, checked by `Catalogue.validate`).
    private func validateStores(_ fail: (String, String) -> ConfigurationError) throws {
        guard (1...1_000).contains(stores.anonymousDeviceLimit) else { throw fail("stores.anonymous_device_limit", "must be 1 to 1000") }
        guard (0...3_600).contains(stores.apple.clockSkewSeconds) else { throw fail("stores.apple.clock_skew_seconds", "must be 0 to 3600") }
        let google = stores.google
        for (name, url) in [("api_base_url", google.apiBaseURL), ("token_url", google.tokenURL),
                            ("signing_keys_url", google.signingKeysURL), ("push_audience", google.pushAudience)] {
            guard let url, !(url.hasPrefix("https://") || url.hasPrefix("http://")) || url.unicodeScalars.contains(where: CatalogueName.breaksURL)
            else { continue }
            throw fail("stores.google.\(name)", "must be an http(s) URL without spaces or control characters")
        }
        for (a, app) in apps.enumerated() {
            let key = "apps[\(a)].store"
            if let apple = app.store?.apple {
                guard StoreProductID.isValid(apple.bundleID) else {
                    throw fail("\(key).apple.bundle_id", "must be the app's bundle id, e.g. cat.elpunt.quiosc")
                }
                for environment in apple.environments where !["Production", "Sandbox"].contains(environment) {
                    throw fail("\(key).apple.environments", "must list Production and/or Sandbox, got \"\(environment)\"")
                }
                if let id = apple.appAppleID, id <= 0 {
                    throw fail("\(key).apple.app_apple_id", "must be the app's Apple ID in App Store Connect, a positive number")
                }
                if apple.acceptedEnvironments.contains("Production"), apple.appAppleID == nil {
                    throw fail("\(key).apple.app_apple_id", "is required for Production: the app's Apple ID in App Store Connect")
                }
            }
            if let google = app.store?.google, !StoreProductID.isValid(google.packageName) || !google.packageName.contains(".") {
                throw fail("\(key).google.package_name", "must be the app's package name, e.g. cat.elpunt.quiosc")
            }
            if !app.products.isEmpty, app.store?.apple == nil, app.store?.google == nil {
                throw fail("apps[\(a)].products", "app \(app.key) sells products but names no store: add store.apple or store.google")
            }
            for (p, product) in app.products.enumerated() where product.scope != nil && product.kind != .subscription {
                throw fail("apps[\(a)].products[\(p)].scope", "only a subscription has a scope")
            }
        }
        if apps.contains(where: { $0.store?.apple != nil }), stores.apple.rootCertificates.isEmpty {
            throw fail("stores.apple.root_certificates", "must list Apple's root certificate (Apple Root CA - G3) when an app sells in the App Store")
        }
        if apps.contains(where: { $0.store?.google != nil }), stores.google.serviceAccountFile == nil {
            throw fail("stores.google.service_account_file", "must name the service account's key file when an app sells in Google Play")
        }
    }

    /// Where the file holds what a catalogue problem is about.
    private func keyPath(of problem: CatalogueProblem) -> String {
        func nested<Outer, Inner>(_ outer: [Outer], _ inner: (Outer) -> [Inner], _ flat: Int) -> (Int, Int)? {
            var seen = 0
            for (o, item) in outer.enumerated() {
                let count = inner(item).count
                if flat < seen + count { return (o, flat - seen) }
                seen += count
            }
            return nil
        }
        let field = problem.field
        switch problem.place {
        case .publication(let p): return "publications[\(p)].\(field)"
        case .edition(let k):
            guard let (p, e) = nested(publications, \.editions, k) else { return "publications" }
            return "publications[\(p)].editions[\(e)].\(field)"
        case .app(let a): return "apps[\(a)].\(field)"
        case .tariffLine(let k):
            guard let (a, l) = nested(apps, \.lines, k) else { return "apps" }
            return "apps[\(a)].lines[\(l)].\(field)"
        case .webKiosk(let appKey):
            return "apps[\(apps.firstIndex { $0.key == appKey } ?? 0)].web_kiosk.\(field)"
        case .product(let appKey, let index):
            return "apps[\(apps.firstIndex { $0.key == appKey } ?? 0)].products[\(index)].\(field)"
        case .account(let k):
            let lists = [("api_clients", apiClients.count), ("publishers", publishers.count), ("operators", operators.count)]
            guard let (l, i) = nested(lists, { Array(repeating: 0, count: $0.1) }, k) else { return "accounts" }
            return "\(lists[l].0)[\(i)].\(field)"
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

}

extension ConfigurationError {
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
