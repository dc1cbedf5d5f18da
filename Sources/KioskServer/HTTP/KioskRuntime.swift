import KioskModels
import KioskRPC
import NIOConcurrencyHelpers
import XMLRPC

/// Everything derived from one loaded configuration. Replaced whole on reload (SIGHUP).
struct KioskRuntime: Sendable {
    let configuration: KioskConfiguration
    let environment: KioskRPCEnvironment
    let dispatcher: XMLRPCDispatcher<KioskRequestContext>
    let apiClients: BasicAuthenticator
    let publishers: BasicAuthenticator
    /// Signed file links (`links.prefix`).
    let delivery: FileDelivery
    /// `PUT`/`DELETE /publish/…`.
    let publishing: PublishEndpoint
}

/// The runtime in force; requests read it once, reloads swap it.
final class RuntimeBox: Sendable {
    private let box: NIOLockedValueBox<KioskRuntime>
    init(_ runtime: KioskRuntime) { box = NIOLockedValueBox(runtime) }
    var runtime: KioskRuntime { box.withLockedValue { $0 } }
    func replace(with runtime: KioskRuntime) { box.withLockedValue { $0 = runtime } }
}
