import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore
import NIOHTTP1

/// Access tokens for one Google API scope, got with a service account's key (OAuth 2.0 JWT bearer grant)
/// and kept until shortly before they expire. Callers that ask while a token is being fetched wait for that
/// one fetch. Failures are `GoogleUnavailable`.
public actor GoogleAccessTokens {
    public static let defaultTokenURL = "https://oauth2.googleapis.com/token"
    /// The Play Developer API's scope.
    public static let androidPublisherScope = "https://www.googleapis.com/auth/androidpublisher"
    /// Firebase Cloud Messaging's scope (HTTP v1 API).
    public static let firebaseMessagingScope = "https://www.googleapis.com/auth/firebase.messaging"

    /// The one scope asked for.
    public nonisolated let scope: String

    /// The token endpoint the assertion is posted to, and its audience.
    public nonisolated let tokenURL: String
    private let account: GoogleServiceAccount
    private let httpClient: HTTPClient
    private let timeout: Duration
    private let clock: @Sendable () -> Date
    private var signer: JWTKeyCollection?
    private var current: Token?
    private var inFlight: Task<Token, any Error>?

    private struct Token: Sendable {
        let value: String
        let refreshAt: Date
    }

    /// - Parameters:
    ///   - scope: the API scope the tokens are for (`androidPublisherScope`, `firebaseMessagingScope`).
    ///   - tokenURL: the token endpoint; nil for the key file's `token_uri`, else Google's.
    ///   - httpClient: owned by the caller, who shuts it down.
    ///   - timeout: for each token request, answer included.
    ///   - clock: now; for tests.
    public init(
        account: GoogleServiceAccount,
        scope: String = GoogleAccessTokens.androidPublisherScope,
        tokenURL: String? = nil,
        httpClient: HTTPClient = .shared,
        timeout: Duration = .seconds(10),
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.account = account
        self.scope = scope
        self.tokenURL = tokenURL ?? account.tokenURI ?? Self.defaultTokenURL
        self.httpClient = httpClient
        self.timeout = timeout
        self.clock = clock
    }

    /// A bearer token valid for at least a little longer, fetched only when the kept one is near its end.
    /// Throws `GoogleUnavailable` when none can be got (endpoint down, or the assertion refused).
    public func accessToken() async throws -> String {
        if let current, clock() < current.refreshAt {
            return current.value
        }
        if let inFlight {
            return try await inFlight.value.value
        }
        let fetch = Task { try await self.fetch() }
        inFlight = fetch
        defer { inFlight = nil }
        let token = try await fetch.value
        current = token
        return token.value
    }

    /// Forgets `token` if it is the kept one (the API refused it), so the next call fetches another.
    public func invalidate(_ token: String) {
        if current?.value == token {
            current = nil
        }
    }

    private struct Assertion: JWTPayload {
        let iss: String
        let scope: String
        let aud: String
        let iat: Int64
        let exp: Int64
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private struct TokenAnswer: Decodable {
        let access_token: String
        let expires_in: Int
    }

    private func fetch() async throws -> Token {
        let now = clock()
        guard let iat = Int64(exactly: now.timeIntervalSince1970.rounded(.down)) else {
            throw GoogleUnavailable(status: nil, "the clock is outside the range of a token's times")
        }
        let assertion = Assertion(
            iss: account.clientEmail, scope: scope, aud: tokenURL, iat: iat, exp: iat + 3600)
        let jwt: String
        do {
            jwt = try await assertionSigner().sign(assertion, kid: JWKIdentifier(string: account.privateKeyID))
        } catch {
            throw GoogleUnavailable(status: nil, "the service account's assertion could not be signed")
        }

        var request = HTTPClientRequest(url: tokenURL)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        // A JWS is base64url and dots only: nothing in it needs form encoding.
        request.body = .bytes(ByteBuffer(string: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(jwt)"))
        let endpoint = "Google's token endpoint"
        let answer = try await GoogleHTTP.send(request, with: httpClient, timeout: timeout, endpoint: endpoint)

        switch answer.status {
        case 200:
            guard let decoded = try? JSONDecoder().decode(TokenAnswer.self, from: answer.body),
                !decoded.access_token.isEmpty
            else {
                throw GoogleUnavailable(status: 200, "\(endpoint) answered without a usable access token")
            }
            // Kept until a minute before it ends (half its life when it lives under two minutes), a day at most.
            let life = TimeInterval(min(max(decoded.expires_in, 0), 86_400))
            let refreshAt = now.addingTimeInterval(life - min(60, life / 2))
            return Token(value: decoded.access_token, refreshAt: refreshAt)
        case 400, 401, 403:
            throw GoogleUnavailable(
                status: answer.status,
                "\(endpoint) refused the assertion of \(account.clientEmail) (\(GoogleHTTP.describe(answer))): "
                    + "check the key file, the key's id and that the account is enabled")
        default:
            throw GoogleUnavailable(status: answer.status, "\(endpoint) answered \(GoogleHTTP.describe(answer))")
        }
    }

    private func assertionSigner() async -> JWTKeyCollection {
        if let signer { return signer }
        let keys = JWTKeyCollection()
        await keys.add(rsa: account.privateKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: account.privateKeyID))
        signer = keys
        return keys
    }
}
