import Hummingbird
import KioskHTTP
import KioskModels
import KioskRPC

/// `GET /zip/{edicio_id}/{YYYY-MM-DD}.zip`: the reference peer's bundle route (`../shared/bench/peer_server.py`),
/// which load.py's sanity check asks for a 401 without credentials. Added for API clients; answers with a
/// redirect to the bundle's signed link, recording the download as `getEdicio` does.
struct PeerBundleRoute: Sendable {
    /// The app a download is recorded for, by edition.
    let appKeysByEdition: [Int: String]

    func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get("/zip/:edition/:file", use: bundle)
    }

    @Sendable func bundle(_ request: Request, context: KioskRequestContext) async throws -> Response {
        let file = context.parameters.get("file") ?? ""
        guard let editionID = context.parameters.get("edition", as: Int.self), file.hasSuffix(".zip"),
              let date = IssueDate(String(file.dropLast(4))), let appKey = appKeysByEdition[editionID]
        else { throw KioskHTTPError.notFound("No such bundle: use /zip/{edicio_id}/{YYYY-MM-DD}.zip.") }
        let environment = context.environment
        let offered: OfferedEdition, contents: IssueContents
        do {
            (offered, contents) = try await environment.service.openIssue(
                appKey: appKey, identityKey: "", editionID: editionID, date: date, claimedUserID: "", os: "benchmark")
        } catch let error as KioskError {
            throw KioskHTTPError.notFound("No such bundle: \(error.xmlrpcFault.message).")
        }
        let bundle = try await environment.bundles.bundle(for: contents, offered: offered)
        return Response(status: .found, headers: [.location: environment.links.link(to: bundle.path, now: environment.service.clock.now)])
    }
}
