import Logging
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import KioskConfig
import KioskPasswords

/// The HTTP Basic credentials of a request, if well-formed.
package struct BasicCredentials: Sendable {
    package let username: String
    package let password: String

    package init?(request: Request) {
        guard let header = request.headers.onlyValue(of: .authorization), header.count <= 1024 else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
              let decoded = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
              let text = String(data: decoded, encoding: .utf8),
              let colon = text.firstIndex(of: ":")
        else { return nil }
        username = String(text[..<colon])
        password = String(text[text.index(after: colon)...])
    }
}

/// Checks HTTP Basic credentials against bcrypt hashes (stored accounts, or the file's metrics scrapers).
///
/// bcrypt is slow on purpose, so a verified credential is remembered by its SHA-256 (never in clear),
/// and so is a refused one (bounded): a client pays the hash once, not on every call. Concurrent
/// requests with the same uncached credentials share one check (a freshly started instance behind a
/// load balancer gets many at once).
package final class BasicAuthenticator: Sendable {
    /// Username -> bcrypt hash.
    package let hashes: [String: String]
    private let verifier: PasswordHashing
    private let cache = NIOLockedValueBox(Cache())
    private static let cacheLimit = 10_000

    private struct Cache {
        package var accepted: [SHA256Digest: String] = [:]
        package var refused: Set<SHA256Digest> = []
        package var checking: [SHA256Digest: Task<Bool?, Never>] = [:]
    }

    package init(hashes: [String: String], verifier: PasswordHashing = PasswordHashing()) {
        self.hashes = hashes
        self.verifier = verifier
    }

    package convenience init(accounts: [KioskConfiguration.Credential], verifier: PasswordHashing = PasswordHashing()) {
        self.init(hashes: Dictionary(accounts.map { ($0.username, $0.passwordHash) }, uniquingKeysWith: { first, _ in first }),
                  verifier: verifier)
    }

    package var isEmpty: Bool { hashes.isEmpty }

    /// The username of an `Authorization` header already verified, or nil (never verifies: no bcrypt).
    /// The first step of `authenticate`, and all that the connection's fast path (`KeptRPCAnswers`) asks.
    package func acceptedUsername(authorization header: String) -> String? {
        guard header.utf8.count <= 1024 else { return nil }
        let digest = Self.digest(header)
        return cache.withLockedValue { $0.accepted[digest] }
    }

    /// Known clients are keyed by a digest of the header itself: they cost one SHA-256, no decoding.
    private static func digest(_ header: String) -> SHA256Digest {
        var header = header
        return header.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
    }

    /// The authenticated username, or nil; a 429 when the password checks already waiting for this
    /// username or client are as many as they may be (`PasswordHashing`).
    package func authenticate(_ request: Request) async throws -> String? {
        guard let header = request.headers.onlyValue(of: .authorization), header.utf8.count <= 1024 else { return nil }
        if let username = acceptedUsername(authorization: header) { return username }
        let digest = Self.digest(header)
        if cache.withLockedValue({ $0.refused.contains(digest) }) { return nil }
        guard let credentials = BasicCredentials(request: request) else { return nil }
        let hash = hashes[credentials.username], verifier = self.verifier
        let (check, owner) = cache.withLockedValue { cache in
            if let running = cache.checking[digest] { return (running, false) }
            let check = Task { try? await verifier.verify(credentials.password, against: hash, username: credentials.username) }
            cache.checking[digest] = check
            return (check, true)
        }
        let result = await check.value
        if owner { cache.withLockedValue { $0.checking[digest] = nil } }
        guard let valid = result else {
            throw KioskHTTPError(.tooManyRequests, "too many password checks waiting for this account or client; retry in a second",
                                 headers: [.retryAfter: "1"])
        }
        guard owner else { return valid ? credentials.username : nil }
        cache.withLockedValue { cache in
            if valid {
                if cache.accepted.count >= Self.cacheLimit { cache.accepted.removeAll() }
                cache.accepted[digest] = credentials.username
            } else {
                if cache.refused.count >= Self.cacheLimit { cache.refused.removeAll() }
                cache.refused.insert(digest)
            }
        }
        return valid ? credentials.username : nil
    }
}

/// HTTP Basic authentication of one realm's accounts (API clients, publishers, metrics scrapers) before
/// the routes of a group run: the accepted account goes into the context, anything else is a `401` with
/// the realm's challenge.
///
/// A refused request's body is left for Hummingbird to drain (so the 2012 app's retry on the same
/// connection works) only when it is declared and at most `drainLimit` bytes; otherwise the connection
/// closes instead of reading it.
package struct BasicAuthenticationMiddleware: RouterMiddleware {
    package typealias Context = KioskRequestContext
    package let realm: String
    package let message: String
    /// The realm's accounts for this request (stored accounts as of now); nil: no credentials needed.
    package let accounts: @Sendable (Context) async throws -> BasicAuthenticator?
    package let drainLimit: @Sendable (Context) -> Int

    package func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let authenticator = try await accounts(context) else { return try await next(request, context) }
        guard let username = try await authenticator.authenticate(request) else {
            context.logger.info("refused: missing or wrong credentials", metadata: ["realm": .string(realm)])
            throw KioskHTTPError.unauthorized(realm: realm, message, closesConnection: !Self.bodyIsSmall(request, limit: drainLimit(context)))
        }
        var context = context
        context.authenticatedUser = username
        return try await next(request, context)
    }

    /// Whether the request declares a body of at most `limit` bytes (or has none).
    package static func bodyIsSmall(_ request: Request, limit: Int) -> Bool {
        if let length = request.headers[.contentLength].flatMap(Int.init) { return length <= limit }
        return request.headers[.transferEncoding] == nil
    }
}

extension BasicAuthenticationMiddleware {
    /// The reader apps' API clients (stored accounts of kind `api_client`), realm `kiosk`; bodies up to the
    /// XML-RPC limit are drained.
    package static let apiClients = Self(realm: "kiosk", message: "authentication required",
                                 accounts: { try await $0.runtime.accounts.current().apiClients },
                                 drainLimit: { $0.runtime.configuration.limits.maxBodyBytes })
    /// Publishers (stored accounts of kind `publisher`), realm `kiosk publishers`.
    package static let publishers = Self(realm: "kiosk publishers", message: "Publisher credentials are required (HTTP Basic).",
                                 accounts: { try await $0.runtime.accounts.current().publishers }, drainLimit: { _ in 8 << 20 })
    /// Readers of the event stream: publishers and operators, realm `kiosk events`.
    package static let eventReaders = Self(realm: "kiosk events", message: "Publisher or operator credentials are required (HTTP Basic).",
                                           accounts: { try await $0.runtime.accounts.current().eventReaders },
                                           drainLimit: { $0.runtime.configuration.limits.maxBodyBytes })
}

extension HTTPFields {
    /// The value of the one field named `name`; nil when there is none or more than one (repeated
    /// `Authorization` fields are never valid credentials). One pass, no joining of values.
    package func onlyValue(of name: HTTPField.Name) -> String? {
        var found: String?
        for field in self where field.name == name {
            if found != nil { return nil }
            found = field.value
        }
        return found
    }
}
