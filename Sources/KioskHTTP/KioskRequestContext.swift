import HTTPTypes
import Hummingbird
import KioskRPC
import Logging
import NIOCore
import KioskConfig
import KioskFiles

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

/// Pins the current runtime (configuration snapshot) to the request, so a reload never changes a request midway.
package struct RuntimeMiddleware: RouterMiddleware {
    package typealias Context = KioskRequestContext
    package let current: RuntimeBox

    package func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.runtime = current.runtime
        return try await PasswordHashing.$client.withValue(Self.client(of: request, peer: context.remoteAddress)) {
            try await next(request, context)
        }
    }

    /// Who the request is from, for limits per client: the peer's address, or for a loopback peer (a
    /// reverse proxy on this machine) the last address it put in `X-Forwarded-For`.
    static func client(of request: Request, peer: SocketAddress?) -> String {
        let address = peer?.ipAddress ?? ""
        guard address == "127.0.0.1" || address == "::1",
              let forwarded = request.headers[values: .xForwardedFor].last?.split(separator: ",").last
        else { return address }
        return String(forwarded.filter { $0 != " " && $0 != "\t" }.prefix(64))
    }
}

extension HTTPField.Name {
    /// The fields a reverse proxy adds for the client it forwards for (names that are valid tokens).
    package static let forwarded = HTTPField.Name("Forwarded")!
    package static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}
