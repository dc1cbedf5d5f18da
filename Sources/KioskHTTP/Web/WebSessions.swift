import Crypto
import Foundation
import Hummingbird
import KioskIntegers
import KioskModels

/// Signed-in people of the web pages (readers of `/web`, operators of `/admin`): a session cookie that
/// names them and expires, signed so any instance with the same secret accepts it (no session table),
/// and the CSRF token of its forms, derived from the cookie so an attacker's page can neither read nor
/// compute it.
///
/// The cookie is `HttpOnly`, scoped to its path, `Secure` when Kiosk is reached over TLS, with the
/// `SameSite` given. Its value is `<payload and session id, base64url>.<expiry>.<HMAC-SHA256, base64url>`.
/// The session id (random) lets a sign-out end that session on every instance: the pages check
/// `KioskStore.sessionHasEnded` on each request.
package struct WebSessions: Sendable {
    package let cookieName: String
    package let path: String
    package let lifetimeSeconds: Int
    package let secure: Bool
    package let sameSite: Cookie.SameSite
    private let key: SymmetricKey
    private let csrfKey: SymmetricKey

    /// `secret` must be this kind of session's own, so no other signed value is ever taken for one.
    package init(cookieName: String, path: String, secret: [UInt8], lifetimeSeconds: Int, secure: Bool,
                 sameSite: Cookie.SameSite = .lax) {
        self.cookieName = cookieName; self.path = path; self.lifetimeSeconds = lifetimeSeconds
        self.secure = secure; self.sameSite = sameSite
        key = SymmetricKey(data: secret)
        csrfKey = SymmetricKey(data: SHA256.hash(data: secret + Array("csrf".utf8)))
    }

    /// The cookie that signs `payload` (a user id, an operator's name) in until `now` + the lifetime, as a
    /// new session.
    package func signIn(_ payload: String, now: Int64) -> Cookie {
        var id = SystemRandomNumberGenerator()
        let session = Base64URL.encode((0..<12).map { _ in UInt8.random(in: 0...255, using: &id) })
        let value = Base64URL.encode(Array((payload + "\n" + session).utf8)) + "." + String(now + Int64(widening: lifetimeSeconds))
        return cookie(value + "." + signature(value), maxAge: lifetimeSeconds)
    }

    /// The payload naming `subject` (an operator's name, a reader's id) for as long as its password hash stays
    /// `passwordHash`: the first 9 bytes of the hash's SHA-256 ride along, so a new password (set anywhere, on
    /// any instance) ends the sessions signed in before it at their next request. Nothing of the hash can be
    /// learnt from them, and the cookie is signed.
    package static func payload(_ subject: String, passwordHash: String) -> String {
        subject + "\n" + Base64URL.encode(Array(SHA256.hash(data: Array(passwordHash.utf8)).prefix(9)))
    }

    /// The subject a `payload(_:passwordHash:)` names (still to be checked against the current hash).
    package static func subject(of payload: String) -> String {
        String(payload.prefix { $0 != "\n" })
    }

    /// The cookie that signs out.
    package func signOut() -> Cookie { cookie("", maxAge: 0) }

    /// The session the request carries, when its signature holds and it has not expired.
    package func session(of request: Request, now: Int64) -> Session? {
        guard let value = request.cookies[cookieName]?.value, value.utf8.count <= 512 else { return nil }
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let expires = Int64(parts[1]), now <= expires,
              ConstantTime.equals(Array(parts[2].utf8), Array(signature("\(parts[0]).\(parts[1])").utf8)),
              let decoded = Base64URL.decode(String(parts[0])) else { return nil }
        let signed = String(decoding: decoded, as: UTF8.self)
        guard let cut = signed.lastIndex(of: "\n") else { return nil }
        let (began, overflow) = expires.subtractingReportingOverflow(Int64(widening: lifetimeSeconds))
        guard !overflow else { return nil }
        return Session(cookie: value, payload: String(signed[..<cut]), id: String(signed[signed.index(after: cut)...]),
                       began: began, expires: expires)
    }

    /// The token a form of `session` carries.
    package func csrfToken(_ session: Session) -> String { csrfToken(binding: session.cookie) }

    /// The token for a form bound to any value the browser holds in a cookie (e.g. the sign-in form's nonce).
    package func csrfToken(binding value: String) -> String {
        Base64URL.encode(HMAC<SHA256>.authenticationCode(for: Array(value.utf8), using: csrfKey))
    }

    package func acceptsCSRF(_ token: String, binding value: String) -> Bool {
        !value.isEmpty && ConstantTime.equals(Array(token.utf8), Array(csrfToken(binding: value).utf8))
    }

    /// A validly signed session: its cookie value (what CSRF tokens are bound to), what it names, its id,
    /// when it began and when it expires (Unix seconds). Whether it was ended is the store's to say.
    package struct Session: Sendable {
        package let cookie: String
        package let payload: String
        package let id: String
        package let began: Int64
        package let expires: Int64
    }

    private func signature(_ value: String) -> String {
        Base64URL.encode(HMAC<SHA256>.authenticationCode(for: Array((cookieName + "\0" + value).utf8), using: key))
    }

    private func cookie(_ value: String, maxAge: Int) -> Cookie {
        Cookie(name: cookieName, value: value, maxAge: maxAge, path: path, secure: secure, httpOnly: true, sameSite: sameSite)
    }
}
