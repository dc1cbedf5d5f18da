/// What the purchase rules refuse. Each case maps to one application fault (`KioskRPC`) and one HTTP status.
public enum PurchaseError: Error, Sendable, Hashable {
    /// Fault 8, HTTP 400: the store does not vouch for it (signature, chain, app, environment, unknown
    /// product or purchase), with the reason in words.
    case unverifiable(String)
    /// Fault 9: the purchase belongs to another account, or its anonymous devices are used up.
    case anotherAccount(String)
    /// Fault 10, HTTP 503: the store could not be asked (unreachable, busy); the same call may succeed later.
    case storeUnavailable(String)
    /// Fault 5: no pack of this identity has a credit left.
    case noCreditLeft
}
