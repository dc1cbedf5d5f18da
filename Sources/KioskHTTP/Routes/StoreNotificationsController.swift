import Foundation
import Hummingbird
import KioskConfig
import KioskRPC
import Logging
import KioskModels

/// The stores' server notifications: `POST /store/apple/{app}` (App Store Server Notifications V2) and
/// `POST /store/google/{app}` (Google Play real-time developer notifications, a Pub/Sub push).
///
/// `200` once the notification is stored with what it changes (or was already stored); `400` when it
/// does not verify, which the store does not retry; `5xx` only when it could not be stored, so that the
/// store sends it again.
///
/// A refusal is logged, at most `refusalLog`'s rate per client address: anyone can post a refused
/// notification, and must not fill the disk with log lines.
package struct StoreNotificationsController {
    /// How many refusals of each client address are logged: 20 at once, then one a second.
    package let refusalLog = ClientBudget(burst: 20, perMinute: 60)

    package init() {}

    package func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.post("/store/apple/:app") { request, context in try await notice(.apple, request, context) }
        group.post("/store/google/:app") { request, context in try await notice(.google, request, context) }
    }

    @Sendable func notice(_ store: Storefront, _ request: Request, _ context: KioskRequestContext) async throws -> Response {
        let appKey = try context.parameters.require("app")
        let limit = context.runtime.configuration.limits.maxBodyBytes
        var request = request
        let body = try await request.collectBody(
            upTo: limit, orThrow: .badRequest("notification over the limit of \(limit) bytes", closesConnection: true))
        let outcome: KioskService.NoticeOutcome
        do {
            outcome = try await context.environment.service.applyNotice(
                store: store, appKey: appKey, body: Array(buffer: body), authorization: request.headers[.authorization])
        } catch let error as PurchaseError {
            if refusalLog.take(client: RequestClient.address, now: Date().timeIntervalSince1970) == nil {
                context.logger.notice("store notification refused", metadata: [
                    "store": .string(store.rawValue), "app": .string(appKey), "reason": .string("\(error)")])
            }
            throw KioskHTTPError.storeNotice(error)
        } catch KioskError.unknownApp {
            throw KioskHTTPError.notFound("no app \(appKey)")
        }
        return Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: outcome.rawValue + "\n")))
    }
}
