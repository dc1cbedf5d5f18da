import KioskRPC
import Foundation
import Hummingbird
import KioskModels

/// `GET /sso/verify?hash=…`: the web kiosk checks a `hashQuiosc` hash and learns who it names.
package struct SSOController {
    package struct VerifiedUser: ResponseEncodable {
        package var id: Int
        package var username: String
        package var name: String
        package var email: String
        package var editions: [SubscribedEdition]
    }

    package struct SubscribedEdition: Codable {
        package var id: Int
        package var until: String
    }

    package func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get("/sso/verify", use: verify)
    }

    @Sendable package func verify(_ request: Request, context: KioskRequestContext) async throws -> Response {
        let environment = context.environment
        let service = environment.service
        guard let hash = request.uri.queryParameters.get("hash"),
              let userID = environment.webKioskTokens.verify(hash, now: service.clock.now),
              let user = try await service.store.user(id: userID)
        else { throw KioskHTTPError.forbidden("invalid or expired hash") }
        let subscriptions = try await service.store.subscriptions(userID: user.id)
        let verified = VerifiedUser(
            id: user.id, username: user.username, name: user.name, email: user.email,
            editions: subscriptions.map { SubscribedEdition(id: $0.editionID, until: $0.until.description) })
        return try verified.response(from: request, context: context)
    }
}
