import Hummingbird
import KioskModels
import KioskRPC
import KioskConfig
import KioskFiles

/// `GET /zip/{edicio_id}/{YYYY-MM-DD}.zip` with API client credentials: the reference peer's bundle route
/// (`../shared/bench/peer_server.py`), added by `serve --data` for API clients, so the shared load harness
/// (`load.py`, whose sanity check asks this route for a 401) runs against Kiosk unchanged. Answers with a
/// redirect to the bundle's signed link, recording the download like `getEdicio` does.
package struct BenchmarkPeerRoutes {
    package init() {}

    package func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get("/zip/:edition/:file", use: bundle)
    }

    @Sendable package func bundle(_ request: Request, context: KioskRequestContext) async throws -> Response {
        let runtime = context.runtime
        let file = context.parameters.get("file") ?? ""
        guard let editionID = context.parameters.get("edition", as: Int.self), file.hasSuffix(".zip"),
              let date = IssueDate(String(file.dropLast(4))),
              let app = runtime.configuration.apps.first(where: { $0.lines.contains { $0.edition == editionID } })
        else { throw KioskHTTPError.notFound("No such bundle: use /zip/{edicio_id}/{YYYY-MM-DD}.zip.") }
        let environment = runtime.environment
        let offered: OfferedEdition, contents: IssueContents
        do {
            (offered, contents) = try await environment.service.openIssue(
                appKey: app.key, identityKey: "", editionID: editionID, date: date, claimedUserID: "", os: "benchmark")
        } catch let error as KioskError {
            throw KioskHTTPError.notFound("No such bundle: \(error.xmlrpcFault.message).")
        }
        let bundle = try await environment.bundles.bundle(for: contents, offered: offered)
        return Response(status: .found, headers: [.location: environment.links.link(to: bundle.path, now: environment.service.clock.now)])
    }
}
