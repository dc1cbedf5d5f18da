import Hummingbird
import KioskRPC
import Logging
import NIOCore

/// Per-request context: Hummingbird's core storage, the kiosk configuration in force when the request
/// began, the connection it came on, and who it authenticated as.
struct KioskRequestContext: RequestContext, KioskRPCContext {
    var coreContext: CoreRequestContextStorage
    private var pinnedRuntime: KioskRuntime?
    let remoteAddress: SocketAddress?
    /// Where cached file chunks are read (see `FileDelivery`).
    let connectionEventLoop: any EventLoop
    /// The account a `BasicAuthenticationMiddleware` accepted, if any.
    var authenticatedUser: String?

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.connectionEventLoop = source.channel.eventLoop
    }

    /// The runtime pinned to this request by `RuntimeMiddleware`, the first middleware of every route.
    var runtime: KioskRuntime {
        get {
            guard let pinnedRuntime else { preconditionFailure("RuntimeMiddleware runs before every route") }
            return pinnedRuntime
        }
        set { pinnedRuntime = newValue }
    }

    var environment: KioskRPCEnvironment { runtime.environment }
}

/// Pins the current runtime (configuration snapshot) to the request, so a reload never changes a request midway.
struct RuntimeMiddleware: RouterMiddleware {
    typealias Context = KioskRequestContext
    let current: RuntimeBox

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.runtime = current.runtime
        return try await next(request, context)
    }
}
