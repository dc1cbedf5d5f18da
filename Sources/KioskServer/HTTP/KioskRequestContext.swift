import Hummingbird
import KioskRPC
import Logging
import NIOCore

/// Per-request context: Hummingbird's core storage plus the kiosk configuration in force when the request began.
struct KioskRequestContext: RequestContext, KioskRPCContext, ConnectionEventLoopProviding {
    var coreContext: CoreRequestContextStorage
    /// Set by `RuntimeMiddleware` before any route runs.
    var runtime: KioskRuntime!
    let remoteAddress: SocketAddress?
    let connectionEventLoop: any EventLoop

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.connectionEventLoop = source.channel.eventLoop
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
