import KioskModels
import Logging

/// What the kiosk methods need for one call: the service and the configuration in force when it began.
/// The catalogue (apps, lines, web kiosks) is the store's, read under its version (`CatalogueMemo`).
///
/// The server swaps in a new environment on reload; a call keeps the one it started with.
public struct KioskRPCEnvironment: Sendable {
    public var service: KioskService
    public var links: any LinkSigning
    public var bundles: any IssueBundles
    /// Where Kiosk's own web kiosks are, e.g. `https://kiosk.example.cat/web` (an app's is `/<app key>`
    /// under it): what `hashQuiosc` links to for an app whose stored web kiosk has no base URL, or none.
    public var ownWebKiosks: String
    public var webKioskTokens: WebKioskTokenSigner
    public var webKioskTokenLifetime: Int
    public var observer: any KioskRPCObserver
    /// Catalogue answers kept between calls (`AnswerCache`).
    public var answers: AnswerCache

    public init(service: KioskService, links: any LinkSigning, bundles: any IssueBundles,
                ownWebKiosks: String, webKioskTokens: WebKioskTokenSigner, webKioskTokenLifetime: Int,
                observer: any KioskRPCObserver = UnobservedKioskRPC(), answers: AnswerCache = AnswerCache(name: "answers", byteLimit: 0)) {
        self.service = service; self.links = links; self.bundles = bundles; self.ownWebKiosks = ownWebKiosks
        self.webKioskTokens = webKioskTokens; self.webKioskTokenLifetime = webKioskTokenLifetime
        self.observer = observer; self.answers = answers
    }
}

/// What the wire methods notice beyond their answers, reported as it happens; metrics plug in here.
public protocol KioskRPCObserver: Sendable {
    /// `hashQuiosc` got a `seccioQ` that names no section (nor alias) of the app's web kiosk and opened
    /// the default section instead.
    func unknownSection(appKey: String, section: String)
}

/// The observer when nobody listens.
public struct UnobservedKioskRPC: KioskRPCObserver {
    public init() {}
    public func unknownSection(appKey: String, section: String) {}
}

/// The per-call context the kiosk methods read; the HTTP layer provides it.
public protocol KioskRPCContext: Sendable {
    var environment: KioskRPCEnvironment { get }
    var logger: Logger { get }
}
