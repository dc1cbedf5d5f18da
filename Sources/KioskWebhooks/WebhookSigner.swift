import Crypto
import Foundation
import KioskModels

/// A webhook signing secret in the Standard Webhooks form: `whsec_` and the base64 of 24 to 64 random bytes.
package struct WebhookSecret: Sendable, Hashable, CustomStringConvertible {
    /// The secret as written (`whsec_…`).
    package let text: String
    let key: SymmetricKey

    static let prefix = "whsec_"
    static let keyBytes = 24...64

    /// Reads a secret; throws why it is not one.
    package init(_ text: String) throws(WebhookSecretProblem) {
        guard text.hasPrefix(Self.prefix) else {
            throw WebhookSecretProblem("does not start with \"whsec_\"; make one as \"whsec_\" followed by the output of `openssl rand -base64 24`")
        }
        var encoded = String(text.dropFirst(Self.prefix.count))
        guard !encoded.isEmpty, encoded.utf8.allSatisfy({ Self.isBase64($0) }) else {
            throw WebhookSecretProblem("is not base64 after \"whsec_\" (only A-Z, a-z, 0-9, +, / and = padding)")
        }
        let padding = encoded.utf8.reversed().prefix(while: { $0 == UInt8(ascii: "=") }).count
        guard padding <= 2, padding < encoded.utf8.count, !encoded.utf8.dropLast(padding).contains(UInt8(ascii: "=")) else {
            throw WebhookSecretProblem("is not valid base64 after \"whsec_\" ('=' only as padding at the end)")
        }
        if encoded.utf8.count % 4 != 0, padding == 0 {
            encoded += String(repeating: "=", count: 4 - encoded.utf8.count % 4)
        }
        guard let bytes = Data(base64Encoded: encoded) else {
            throw WebhookSecretProblem("is not valid base64 after \"whsec_\"")
        }
        guard Self.keyBytes.contains(bytes.count) else {
            throw WebhookSecretProblem("holds \(bytes.count) bytes; a signing secret holds 24 to 64")
        }
        self.init(text: text, key: SymmetricKey(data: bytes))
    }

    private init(text: String, key: SymmetricKey) {
        self.text = text; self.key = key
    }

    /// A new secret: `whsec_` and the base64 of 24 random bytes.
    package static func generate() -> WebhookSecret {
        let key = SymmetricKey(size: .init(bitCount: 192))
        return WebhookSecret(text: prefix + key.withUnsafeBytes { Data($0) }.base64EncodedString(), key: key)
    }

    /// Never the secret itself, so that logging one does not leak it.
    package var description: String { "whsec_… (\(text.utf8.count - Self.prefix.count) characters)" }

    package static func == (lhs: WebhookSecret, rhs: WebhookSecret) -> Bool { lhs.text == rhs.text }
    package func hash(into hasher: inout Hasher) { hasher.combine(text) }

    private static func isBase64(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="):
            true
        default:
            false
        }
    }
}

/// Why a text is not a webhook signing secret.
package struct WebhookSecretProblem: Error, Sendable, Hashable, CustomStringConvertible {
    package var problem: String
    package init(_ problem: String) { self.problem = problem }
    package var description: String { "the webhook secret \(problem)" }
}

/// Signs deliveries as the Standard Webhooks specification says: `webhook-signature` holds `v1,` and the
/// base64 HMAC-SHA256 of `id.timestamp.body` for each secret, space-separated, so that during a rotation
/// an endpoint that knows either secret can verify.
package struct WebhookSigner: Sendable, Hashable {
    package let secrets: [WebhookSecret]

    package init(secrets: [WebhookSecret]) { self.secrets = secrets }

    /// Reads `secrets` (an endpoint's, the current first); throws for the first that is not a secret, or when there is none.
    package init(secrets: [String]) throws(WebhookSecretProblem) {
        guard !secrets.isEmpty else { throw WebhookSecretProblem("list is empty; an endpoint needs at least one secret") }
        var read: [WebhookSecret] = []
        for (index, text) in secrets.enumerated() {
            do {
                read.append(try WebhookSecret(text))
            } catch {
                throw WebhookSecretProblem("number \(index + 1) \(error.problem)")
            }
        }
        self.secrets = read
    }

    /// The headers of one try: `webhook-id` (the same across retries), `webhook-timestamp` (this try, Unix
    /// seconds) and `webhook-signature`.
    package func headers(id: String, timestamp: Int64, body: some DataProtocol) -> [(name: String, value: String)] {
        [("webhook-id", id), ("webhook-timestamp", String(timestamp)),
         ("webhook-signature", signature(id: id, timestamp: timestamp, body: body))]
    }

    /// The `webhook-signature` value: one `v1,<base64>` per secret, space-separated.
    package func signature(id: String, timestamp: Int64, body: some DataProtocol) -> String {
        secrets.map { secret in
            "v1," + Data(Self.mac(key: secret.key, id: id, timestamp: timestamp, body: body)).base64EncodedString()
        }.joined(separator: " ")
    }

    /// Whether one of the `v1` signatures in `header` is by one of the secrets (compared in constant time).
    /// The receiver's check, for tests and tools; the timestamp's age is the caller's to check.
    package func verifies(_ header: String, id: String, timestamp: Int64, body: some DataProtocol) -> Bool {
        let message = Self.message(id: id, timestamp: timestamp, body: body)
        for entry in header.split(separator: " ") {
            let parts = entry.split(separator: ",", maxSplits: 1)
            guard parts.count == 2, parts[0] == "v1", let mac = Data(base64Encoded: String(parts[1])) else { continue }
            for secret in secrets where HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: message, using: secret.key) {
                return true
            }
        }
        return false
    }

    private static func message(id: String, timestamp: Int64, body: some DataProtocol) -> Data {
        var message = Data("\(id).\(timestamp).".utf8)
        message.append(contentsOf: body)
        return message
    }

    private static func mac(key: SymmetricKey, id: String, timestamp: Int64, body: some DataProtocol) -> HashedAuthenticationCode<SHA256> {
        var hmac = HMAC<SHA256>(key: key)
        hmac.update(data: Data("\(id).\(timestamp).".utf8))
        hmac.update(data: body)
        return hmac.finalize()
    }
}
