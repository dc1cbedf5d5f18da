import HTTPTypes
import Hummingbird
import KioskModels
import KioskRPC
import NIOCore

/// Per-request context: Hummingbird's core storage, the kiosk configuration in force when the request
/// began, the connection it came on, and who it authenticated as.
public struct KioskRequestContext: RequestContext, KioskRPCContext {
    public var coreContext: CoreRequestContextStorage
    private var pinnedRuntime: KioskRuntime?
    package let remoteAddress: SocketAddress?
    /// Where cached file chunks are read (see `FileDelivery`).
    package let connectionEventLoop: any EventLoop
    /// The account a `BasicAuthenticationMiddleware` accepted, if any.
    package var authenticatedUser: String?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.connectionEventLoop = source.channel.eventLoop
    }

    /// The runtime pinned to this request by `RuntimeMiddleware`, the first middleware of every route.
    package var runtime: KioskRuntime {
        get {
            guard let pinnedRuntime else { preconditionFailure("RuntimeMiddleware runs before every route") }
            return pinnedRuntime
        }
        set { pinnedRuntime = newValue }
    }

    /// The service, links and bundles of the configuration pinned to this request.
    public var environment: KioskRPCEnvironment { runtime.environment }
}

/// Pins the current runtime (configuration snapshot) to the request, so a reload never changes a request midway,
/// and gives the request its client (`RequestClient`) and its catalogue snapshot (`CatalogueSnapshot`).
package struct RuntimeMiddleware: RouterMiddleware {
    package typealias Context = KioskRequestContext
    package let current: RuntimeBox

    package func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.runtime = current.runtime
        let snapshot = CatalogueSnapshot(store: context.runtime.environment.service.store)
        return try await RequestClient.$address.withValue(Self.client(of: request, peer: context.remoteAddress)) {
            try await CatalogueSnapshot.$current.withValue(snapshot) { try await next(request, context) }
        }
    }

    /// Who the request is from, for limits per client: the peer's address, or for a loopback peer (a
    /// reverse proxy on this machine, which appends the address it saw) the last entry of
    /// `X-Forwarded-For` when that is an address; anything else there (empty, a name, junk) counts as
    /// the peer itself, so no header value escapes the limits.
    static func client(of request: Request, peer: SocketAddress?) -> String {
        client(forwardedFor: request.headers[values: .xForwardedFor], peer: peer?.ipAddress)
    }

    /// `client(of:peer:)` on the request's `X-Forwarded-For` values and the peer's address.
    static func client(forwardedFor values: [String], peer: String?) -> String {
        let address = peer ?? "unknown peer"
        guard address == "127.0.0.1" || address == "::1",
              let last = values.last?.split(separator: ",", omittingEmptySubsequences: false).last
        else { return address }
        let forwarded = String(last.filter { $0 != " " && $0 != "\t" })
        let isAddress = (2...45).contains(forwarded.utf8.count)
            && forwarded.unicodeScalars.allSatisfy { $0.properties.isASCIIHexDigit || $0 == "." || $0 == ":" }
        return isAddress ? forwarded : address
    }
}

extension HTTPField.Name {
    /// The fields a reverse proxy adds for the client it forwards for (names that are valid tokens).
    package static let forwarded = HTTPField.Name("Forwarded")!
    package static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    /// Where a server-sent events reader resumes.
    package static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
