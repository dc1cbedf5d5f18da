/// Why a store's proof of purchase was refused: the wire answers fault 8 with `message`, a notification route 400.
///
/// `message` is for a person (a support engineer reading the log or an app developer reading the fault): it
/// says what was wrong, never a secret.
public struct PurchaseVerificationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of check failed, for tests and metrics.
    public enum Reason: String, Sendable, CaseIterable {
        /// Not the format the store uses (not a compact JWS, bad base64url, bad JSON, a field missing).
        case malformed
        /// The header names an algorithm the store does not use.
        case algorithm
        /// The certificate chain is the wrong length, does not reach a configured root, lacks the store's
        /// marker extension, or is not valid at the time the store signed.
        case certificateChain
        /// The signature does not verify with the key it names.
        case signature
        /// Signed further in the future than the allowed clock skew, or expired.
        case time
        /// Another app: bundle id, app id, package name, audience, issuer or sender.
        case wrongApp
        /// An environment (Sandbox, Production) the app does not accept.
        case wrongEnvironment
        /// A product this app does not sell.
        case unknownProduct
        /// The store knows no such purchase (any more): a token it does not recognise, or one it has dropped.
        case unknownPurchase
    }

    public let reason: Reason
    public let message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { message }
}
