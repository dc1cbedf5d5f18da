import Crypto
import Foundation
import Hummingbird
import KioskModels

/// Signed-in readers of the web kiosk: a session cookie that names the user and expires, signed so any
/// instance with the same secret accepts it (no session table), plus the CSRF token of its forms.
///
/// The cookie is `HttpOnly`, `SameSite=Lax`, scoped to `/web`, and `Secure` when Kiosk is reached over TLS.
package struct ReaderSessions: Sendable {
    package static let cookieName = "kiosk_reader"
    package static let cookiePath = "/web"
    private let tokens: WebKioskTokenSigner
    private let csrfKey: SymmetricKey
    package let lifetimeSeconds: Int
    package let secure: Bool

    /// `secret` must differ from the `hashQuiosc` one, so a hash is never taken for a session or back.
    package init(secret: [UInt8], lifetimeSeconds: Int, secure: Bool) {
        tokens = WebKioskTokenSigner(secret: secret)
        csrfKey = SymmetricKey(data: SHA256.hash(data: secret + Array("csrf".utf8)))
        self.lifetimeSeconds = lifetimeSeconds; self.secure = secure
    }

    /// The cookie that signs `userID` in until `now` + the lifetime.
    package func signIn(userID: Int, now: Int64) -> Cookie {
        Cookie(name: Self.cookieName, value: tokens.token(userID: userID, expires: now + Int64(lifetimeSeconds)),
               maxAge: lifetimeSeconds, path: Self.cookiePath, secure: secure, httpOnly: true, sameSite: .lax)
    }

    /// The cookie that signs the reader out.
    package func signOut() -> Cookie {
        Cookie(name: Self.cookieName, value: "", maxAge: 0, path: Self.cookiePath, secure: secure, httpOnly: true, sameSite: .lax)
    }

    /// The session the request carries: its cookie value and user, when valid and unexpired.
    package func session(of request: Request, now: Int64) -> (cookie: String, userID: Int)? {
        guard let value = request.cookies[Self.cookieName]?.value, value.utf8.count <= 256,
              let userID = tokens.verify(value, now: now) else { return nil }
        return (value, userID)
    }

    /// The token a form of this session carries: an attacker's page cannot read or compute it.
    package func csrfToken(session cookie: String) -> String {
        Base64URL.encode(HMAC<SHA256>.authenticationCode(for: Array(cookie.utf8), using: csrfKey))
    }

    package func acceptsCSRF(_ token: String, session cookie: String) -> Bool {
        ConstantTime.equals(Array(token.utf8), Array(csrfToken(session: cookie).utf8))
    }
}
