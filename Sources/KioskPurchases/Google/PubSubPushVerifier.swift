import AsyncHTTPClient
import Foundation
import KioskGoogleAuth
import JWTKit
import NIOHTTP1

/// Checks that a push request comes from our Pub/Sub subscription: the `Authorization: Bearer` OIDC token
/// Pub/Sub signs as the subscription's push service account.
///
/// The token must be RS256, signed by one of Google's published keys (fetched, kept, and fetched again when
/// a token names a key not yet seen, at most once per `minimumRefreshInterval` so made-up key ids cannot
/// make us fetch on every request), issued by `accounts.google.com` to `audience`, for `serviceAccountEmail`
/// with a verified email, and current. Each refusal is a `PurchaseVerificationError`; when Google's keys
/// cannot be fetched it is `GooglePlayUnavailable` (answer 5xx: Pub/Sub tries again).
public actor PubSubPushVerifier {
    public static let defaultKeysURL = "https://www.googleapis.com/oauth2/v3/certs"
    public static let issuers: Set<String> = ["accounts.google.com", "https://accounts.google.com"]
    /// Longer than any OIDC token Google makes; a longer header is refused unread.
    public static let maximumTokenLength = 8192

    /// Who a verified push token says sent the request.
    public struct Identity: Sendable, Equatable {
        public let email: String
        public let subject: String?
        public let issuedAt: Date
        public let expiresAt: Date
    }

    public nonisolated let audience: String
    public nonisolated let serviceAccountEmail: String
    private let keysURL: String
    private let httpClient: HTTPClient
    private let timeout: Duration
    private let minimumRefreshInterval: TimeInterval
    private let maximumKeyAge: TimeInterval
    private let clockSkew: TimeInterval
    private let clock: @Sendable () -> Date

    private var keys: KeySet?
    private var lastFetchAttempt: Date?
    private var inFlight: Task<KeySet, any Error>?

    private struct KeySet: Sendable {
        let collection: JWTKeyCollection
        let ids: Set<String>
        let fetchedAt: Date
    }

    /// - Parameters:
    ///   - audience: the audience set on the push subscription (by default its push endpoint URL).
    ///   - serviceAccountEmail: the service account the subscription pushes as.
    ///   - keysURL: Google's JWKS.
    ///   - httpClient: owned by the caller, who shuts it down.
    ///   - timeout: for each key fetch, answer included.
    ///   - minimumRefreshInterval: seconds between two fetches of the keys.
    ///   - maximumKeyAge: seconds after which the kept keys are fetched again (kept if that fails).
    ///   - clockSkew: seconds a token may be issued in our future or used after its expiry.
    ///   - clock: now; for tests.
    public init(
        audience: String,
        serviceAccountEmail: String,
        keysURL: String = PubSubPushVerifier.defaultKeysURL,
        httpClient: HTTPClient = .shared,
        timeout: Duration = .seconds(10),
        minimumRefreshInterval: TimeInterval = 60,
        maximumKeyAge: TimeInterval = 3600,
        clockSkew: TimeInterval = 60,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.audience = audience
        self.serviceAccountEmail = serviceAccountEmail
        self.keysURL = keysURL
        self.httpClient = httpClient
        self.timeout = timeout
        self.minimumRefreshInterval = minimumRefreshInterval
        self.maximumKeyAge = maximumKeyAge
        self.clockSkew = clockSkew
        self.clock = clock
    }

    /// Verifies the `Authorization` header's value of a push request.
    public func verify(authorization: String?) async throws -> Identity {
        guard let authorization else {
            throw PurchaseVerificationError(.malformed, "the push request has no Authorization header")
        }
        guard authorization.utf8.count <= Self.maximumTokenLength + 7,
            authorization.prefix(7).lowercased() == "bearer "
        else {
            throw PurchaseVerificationError(.malformed, "the push request's Authorization is not a Bearer token")
        }
        let token = authorization.dropFirst(7).trimmingCharacters(in: .whitespaces)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = GoogleBase64.decodeURL(parts[0]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any]
        else {
            throw PurchaseVerificationError(.malformed, "the push token is not a JWS compact serialization")
        }
        guard let algorithm = header["alg"] as? String, algorithm == "RS256" else {
            let named = (header["alg"] as? String).map(GoogleBase64.printable) ?? "no algorithm"
            throw PurchaseVerificationError(.algorithm, "the push token is signed with \(named), not RS256")
        }
        guard let kid = header["kid"] as? String, !kid.isEmpty else {
            throw PurchaseVerificationError(.malformed, "the push token's header names no key (kid)")
        }

        let keySet = try await keys(containing: kid)
        guard keySet.ids.contains(kid) else {
            throw PurchaseVerificationError(
                .signature, "the push token is signed with key \(GoogleBase64.printable(kid)), which Google does not publish")
        }
        do {
            _ = try await keySet.collection.verify(token, as: SignedOnly.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw PurchaseVerificationError(.signature, "the push token's signature does not verify")
        } catch {
            throw PurchaseVerificationError(.malformed, "the push token's payload could not be read")
        }

        guard let payloadData = GoogleBase64.decodeURL(parts[1]),
            let claims = try? JSONSerialization.jsonObject(with: payloadData) as? [String: Any]
        else {
            throw PurchaseVerificationError(.malformed, "the push token's payload is not a JSON object")
        }
        return try check(claims)
    }

    /// The longest a push token Google issues lasts.
    static let longestLifetime: TimeInterval = 3_600

    private func check(_ claims: [String: Any]) throws -> Identity {
        guard let issuer = claims["iss"] as? String, Self.issuers.contains(issuer) else {
            throw PurchaseVerificationError(.wrongApp, "the push token was not issued by accounts.google.com")
        }
        let audiences: [String] =
            if let one = claims["aud"] as? String { [one] } else { claims["aud"] as? [String] ?? [] }
        guard audiences.contains(audience) else {
            throw PurchaseVerificationError(.wrongApp, "the push token is for another audience than this endpoint's")
        }
        guard let email = claims["email"] as? String, email == serviceAccountEmail else {
            throw PurchaseVerificationError(.wrongApp, "the push token is not for this server's push service account")
        }
        guard Self.isTrue(claims["email_verified"]) else {
            throw PurchaseVerificationError(.wrongApp, "the push token's email is not verified")
        }
        guard let expiresAt = Self.time(claims["exp"]), let issuedAt = Self.time(claims["iat"]) else {
            throw PurchaseVerificationError(.malformed, "the push token has no exp or iat")
        }
        let now = clock()
        guard now.timeIntervalSince(expiresAt) <= clockSkew else {
            throw PurchaseVerificationError(.time, "the push token expired")
        }
        guard issuedAt.timeIntervalSince(now) <= clockSkew else {
            throw PurchaseVerificationError(.time, "the push token is issued in the future")
        }
        // Google's tokens last an hour: one that claims to last longer was not made by Google.
        guard expiresAt.timeIntervalSince(issuedAt) <= Self.longestLifetime + clockSkew,
              expiresAt.timeIntervalSince(now) <= Self.longestLifetime + clockSkew else {
            throw PurchaseVerificationError(.time, "the push token lasts longer than the hour Google's tokens last")
        }
        return Identity(email: email, subject: claims["sub"] as? String, issuedAt: issuedAt, expiresAt: expiresAt)
    }

    private static func isTrue(_ value: Any?) -> Bool {
        if let flag = value as? Bool { return flag }
        return (value as? String) == "true"
    }

    private static func time(_ value: Any?) -> Date? {
        guard let number = value as? NSNumber else { return nil }
        let seconds = number.doubleValue
        guard seconds.isFinite else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// Verification of the signature alone: the claims are read and checked after it.
    private struct SignedOnly: JWTPayload {
        init(from decoder: any Decoder) throws {}
        func encode(to encoder: any Encoder) throws {}
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// The kept keys, fetched first when there are none, when they are old, or when `kid` is not among them
    /// and the last fetch is at least `minimumRefreshInterval` ago.
    private func keys(containing kid: String) async throws -> KeySet {
        if let inFlight {
            return try await inFlight.value
        }
        let now = clock()
        let mayFetch = lastFetchAttempt.map { now.timeIntervalSince($0) >= minimumRefreshInterval } ?? true
        guard let keys else {
            guard mayFetch else {
                throw GooglePlayUnavailable(status: nil, "Google's OIDC signing keys could not be fetched a moment ago")
            }
            return try await fetchKeys()
        }
        if keys.ids.contains(kid) {
            if now.timeIntervalSince(keys.fetchedAt) >= maximumKeyAge, mayFetch {
                // Old keys stay in use when Google cannot be reached now.
                return (try? await fetchKeys()) ?? keys
            }
            return keys
        }
        return mayFetch ? try await fetchKeys() : keys
    }

    private func fetchKeys() async throws -> KeySet {
        if let inFlight {
            return try await inFlight.value
        }
        lastFetchAttempt = clock()
        let fetch = Task { try await self.download() }
        inFlight = fetch
        defer { inFlight = nil }
        let fetched = try await fetch.value
        keys = fetched
        return fetched
    }

    private struct JWKSet: Decodable {
        struct Key: Decodable {
            let kty: String?
            let kid: String?
            let alg: String?
            let use: String?
            let n: String?
            let e: String?
        }
        let keys: [Key]
    }

    private func download() async throws -> KeySet {
        let endpoint = "Google's OIDC signing keys"
        var request = HTTPClientRequest(url: keysURL)
        request.headers.add(name: "Accept", value: "application/json")
        let answer = try await GoogleHTTP.send(request, with: httpClient, timeout: timeout, endpoint: endpoint)
        guard answer.status == 200 else {
            throw GooglePlayUnavailable(status: answer.status, "\(endpoint) answered \(GoogleHTTP.describe(answer))")
        }
        guard let set = try? JSONDecoder().decode(JWKSet.self, from: answer.body) else {
            throw GooglePlayUnavailable(status: 200, "\(endpoint) are not a JSON Web Key Set")
        }
        let collection = JWTKeyCollection()
        var ids = Set<String>()
        for key in set.keys {
            guard key.kty == "RSA", key.alg == nil || key.alg == "RS256", key.use == nil || key.use == "sig",
                let kid = key.kid, !kid.isEmpty, let n = key.n, let e = key.e,
                let publicKey = try? Insecure.RSA.PublicKey(modulus: n, exponent: e)
            else { continue }
            await collection.add(rsa: publicKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
            ids.insert(kid)
        }
        guard !ids.isEmpty else {
            throw GooglePlayUnavailable(status: 200, "\(endpoint) hold no RS256 key")
        }
        return KeySet(collection: collection, ids: ids, fetchedAt: clock())
    }
}

/// Base64 helpers for tokens and messages.
enum GoogleBase64 {
    /// Unpadded (or padded) base64url; nil for anything else.
    static func decodeURL(_ text: Substring) -> Data? {
        var base64 = String(text).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !base64.contains("=") || text.hasSuffix("=") else { return nil }
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    /// `text` for a message: at most 64 characters, letters, digits and `-_.` only, else a placeholder.
    static func printable(_ text: String) -> String {
        guard text.count <= 64,
            text.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) })
        else { return "(an unprintable name)" }
        return text
    }
}
