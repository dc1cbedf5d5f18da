import Crypto
import Foundation
import NIOConcurrencyHelpers

/// A team's APNs signing key: the `.p8` file Apple lets you download once, its key id and the team id.
public struct APNsSigningKey: Sendable {
    public let keyID: String
    public let teamID: String
    let privateKey: P256.Signing.PrivateKey

    /// `pem` is the `.p8` file's text (a PKCS #8 P-256 private key).
    public init(p8 pem: String, keyID: String, teamID: String) throws(APNsConfigurationError) {
        guard Self.isIdentifier(keyID) else { throw .keyID }
        guard Self.isIdentifier(teamID) else { throw .teamID }
        do {
            privateKey = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw .key
        }
        self.keyID = keyID
        self.teamID = teamID
    }

    /// Reads the `.p8` file at `file`.
    public init(contentsOf file: URL, keyID: String, teamID: String) throws(APNsConfigurationError) {
        let text: String
        do {
            text = try String(contentsOf: file, encoding: .utf8)
        } catch {
            throw .unreadableKeyFile(file.path)
        }
        try self.init(p8: text, keyID: keyID, teamID: teamID)
    }

    /// Apple's ids are 10 upper-case letters and digits; anything short and alphanumeric is taken.
    private static func isIdentifier(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 32 && text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }
    }
}

/// An APNs key or setting that cannot be used. `description` says what to fix; it never quotes the key.
public enum APNsConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    case keyID
    case teamID
    case key
    case unreadableKeyFile(String)
    case baseURL(String)

    public var description: String {
        switch self {
        case .keyID: "the APNs key id must be the 10-character id Apple shows for the key (letters and digits)"
        case .teamID: "the APNs team id must be the 10-character team id of the Apple developer account (letters and digits)"
        case .key: "the APNs key is not a P-256 private key in PEM (PKCS #8): give the .p8 file Apple let you download"
        case .unreadableKeyFile(let path): "the APNs key file \(path) cannot be read"
        case .baseURL(let url): "the APNs base URL '\(url)' is not an https URL without a path"
        }
    }
}

/// The provider authentication token (an ES256 JWT: `kid` the key id, `iss` the team id, `iat`), one for
/// every sender that shares this value and every request they make at once. Apple refuses a token older
/// than an hour and one renewed more often than every 20 minutes, so a token is reused until
/// `refreshAge` (40 minutes by default, kept within 20 to 55) and then made again, once; a token APNs
/// called expired is made again at its next use.
public final class APNsTokens: Sendable {
    public static let defaultRefreshAge: TimeInterval = 40 * 60

    public let key: APNsSigningKey
    /// Seconds a token is reused for.
    public let refreshAge: TimeInterval
    private let clock: @Sendable () -> Date
    private let state = NIOLockedValueBox(State())

    private struct State {
        var token: String?
        var issuedAt = Date.distantPast
        var made = 0
    }

    /// - Parameter clock: now; for tests.
    public init(key: APNsSigningKey, refreshAge: TimeInterval = APNsTokens.defaultRefreshAge, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.key = key
        self.refreshAge = min(max(refreshAge, 20 * 60), 55 * 60)
        self.clock = clock
    }

    /// The token to send now: the kept one while it is young enough, else a new one.
    public func current() -> String {
        let now = clock()
        return state.withLockedValue { state in
            if let token = state.token, now.timeIntervalSince(state.issuedAt) < refreshAge, now >= state.issuedAt {
                return token
            }
            let token = make(at: now)
            state.token = token
            state.issuedAt = now
            state.made += 1
            return token
        }
    }

    /// APNs answered `ExpiredProviderToken` for `token`: the next `current()` makes a new one, unless
    /// another caller already did.
    public func rejected(_ token: String) {
        state.withLockedValue { state in
            if state.token == token {
                state.token = nil
            }
        }
    }

    /// How many tokens were made so far.
    public var made: Int { state.withLockedValue { $0.made } }

    private func make(at now: Date) -> String {
        let iat = Int64(exactly: now.timeIntervalSince1970.rounded(.down)) ?? 0
        let header = #"{"alg":"ES256","kid":"\#(key.keyID)"}"#
        let claims = #"{"iss":"\#(key.teamID)","iat":\#(iat)}"#
        let signingInput = Self.base64URL(Data(header.utf8)) + "." + Self.base64URL(Data(claims.utf8))
        // Signing a digest with a valid key only fails when the system's random source does.
        guard let signature = try? key.privateKey.signature(for: Data(signingInput.utf8)) else {
            return signingInput + "."
        }
        return signingInput + "." + Self.base64URL(signature.rawRepresentation)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
