import KioskModels
import Logging

/// What the kiosk methods need for one call: the service and the configuration in force when it began.
///
/// The server swaps in a new environment on reload; a call keeps the one it started with.
public struct KioskRPCEnvironment: Sendable {
    public var service: KioskService
    public var links: any LinkSigning
    public var bundles: any IssueBundles
    /// By app key.
    public var webKiosks: [String: WebKiosk]
    public var webKioskTokens: WebKioskTokenSigner
    public var webKioskTokenLifetime: Int

    public init(service: KioskService, links: any LinkSigning, bundles: any IssueBundles,
                webKiosks: [String: WebKiosk], webKioskTokens: WebKioskTokenSigner, webKioskTokenLifetime: Int) {
        self.service = service; self.links = links; self.bundles = bundles; self.webKiosks = webKiosks
        self.webKioskTokens = webKioskTokens; self.webKioskTokenLifetime = webKioskTokenLifetime
    }
}

/// The per-call context the kiosk methods read; the HTTP layer provides it.
public protocol KioskRPCContext: Sendable {
    var environment: KioskRPCEnvironment { get }
    var logger: Logger { get }
}
