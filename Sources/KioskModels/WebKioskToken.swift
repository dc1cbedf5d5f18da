import Crypto

/// The signed, short-lived hash `hashQuiosc` hands out and `/sso/verify` checks: it names a user.
///
/// Form: `<user id>.<expiry, unix seconds>.<base64url HMAC-SHA256>`, so the web site needs no
/// database lookup to reject a forged or expired one.
public struct WebKioskTokenSigner: Sendable {
    private let secret: SymmetricKey

    public init(secret: [UInt8]) { self.secret = SymmetricKey(data: secret) }

    public func token(userID: Int, expires: Int64) -> String {
        let payload = "\(userID).\(expires)"
        return payload + "." + signature(payload)
    }

    /// The user id of a valid, unexpired token; nil otherwise.
    public func verify(_ token: String, now: Int64) -> Int? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let userID = Int(parts[0]), userID > 0, let expires = Int64(parts[1]) else { return nil }
        let expected = signature("\(parts[0]).\(parts[1])")
        guard ConstantTime.equals(Array(parts[2].utf8), Array(expected.utf8)), now <= expires else { return nil }
        return userID
    }

    private func signature(_ payload: String) -> String {
        var message = [UInt8]("kiosk-sso-v1".utf8)
        message.append(0)
        message.append(contentsOf: payload.utf8)
        return Base64URL.encode(HMAC<SHA256>.authenticationCode(for: message, using: secret))
    }
}
