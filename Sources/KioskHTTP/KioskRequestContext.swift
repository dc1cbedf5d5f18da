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
        return try await next(request, context)
    }
}
