import Foundation
import Hummingbird
import KioskModels
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

/// `GET /events`: the event outbox as a stream, for systems that cannot receive webhooks (behind a
/// firewall), behind publisher or operator credentials (`BasicAuthenticationMiddleware.eventReaders`).
///
/// Server-sent events (`text/event-stream`: `id`, `event`, `data` per event) or, with
/// `Accept: application/x-ndjson`, one JSON object per line. It starts after `Last-Event-ID` or
/// `?after=` (an event id, `evt_N`, or `N`; none: only new events), and `?types=` picks types or families
/// (`issue.*`). A reader resuming from an event no longer kept gets `410`. While there is nothing new a
/// keep-alive is written every 15 s (an SSE comment, an empty line in NDJSON). With `?follow=false` the
/// answer ends once it has caught up. Writes wait for the reader, and at most one page of events is held
/// per stream, so a slow reader costs no memory beyond that; at most `maxStreams` are open per instance
/// (`503` beyond) and `maxStreamsPerAccount` per account (`429` beyond), so one account cannot take every
/// place. Streams end when the server shuts down.
package struct EventStreamController {
    /// Open streams on this server, over all its runtimes (one box, shared by the routes' copies of the controller).
    package let openStreams = NIOLockedValueBox(OpenStreams())
    package var maxStreams = 256
    package var maxStreamsPerAccount = 64
    package var page = 200
    package var keepAlive: Duration = .seconds(15)
    package var poll: Duration = .seconds(1)

    package init() {}

    package func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get("/events") { request, context in try await stream(request, context) }
    }

    enum Format { case sse, ndjson }

    @Sendable func stream(_ request: Request, _ context: KioskRequestContext) async throws -> Response {
        let reader = try await eventReader(context)
        let log: any EventLog = context.runtime.console.database
        let format: Format = request.headers[.accept]?.contains("application/x-ndjson") == true ? .ndjson : .sse
        var types = reader.visibleTypes
        if let text = request.uri.queryParameters["types"] {
            switch EventType.parseList(String(text)) {
            case .success(let asked) where !asked.isEmpty: types.formIntersection(asked)
            case .success: break
            case .failure(let unknown): throw KioskHTTPError.badRequest(unknown.description)
            }
        }
        let account = context.authenticatedUser ?? ""
        let follow = request.uri.queryParameters["follow"].map { $0 != "false" && $0 != "0" } ?? true
        let bounds = try await log.eventBounds()
        let start: Int64
        if let text = request.headers[values: .lastEventID].last ?? request.uri.queryParameters["after"].map(String.init) {
            guard let position = KioskEvent.position(ofPublicID: Substring(text)) else {
                throw KioskHTTPError.badRequest("Last-Event-ID and ?after= take an event id such as evt_42, got \"\(text.prefix(64))\".")
            }
            if let bounds, position < bounds.lowerBound - 1 {
                throw KioskHTTPError.gone("Events after \(position) are no longer kept (the oldest kept is evt_\(bounds.lowerBound)); "
                                          + "read the current state again, then follow from the newest event.")
            }
            if let bounds, position > bounds.upperBound {
                // Not an event of this log (another server's, or one from before a restore): following from it would skip events unseen.
                throw KioskHTTPError.badRequest("evt_\(position) is newer than the newest event here (evt_\(bounds.upperBound)); "
                                                + "read the current state again, then follow from the newest event.")
            }
            start = position
        } else {
            start = bounds?.upperBound ?? 0
        }
        switch openStreams.withLockedValue({ $0.open(by: account, most: maxStreams, mostPerAccount: maxStreamsPerAccount) }) {
        case .opened: break
        case .serverFull:
            throw KioskHTTPError(.serviceUnavailable, "Too many event streams are open on this server; try again shortly.",
                                 headers: [.retryAfter: "5"])
        case .accountFull:
            throw KioskHTTPError(.tooManyRequests, "This account has \(maxStreamsPerAccount) event streams open, the most one account may; "
                                 + "close one first.", headers: [.retryAfter: "5"])
        }
        let editions = EditionPublications(database: context.runtime.console.database)
        let logger = context.logger
        let body = ResponseBody { [self, types] writer in
            defer { openStreams.withLockedValue { $0.close(by: account) } }
            var cursor = start
            var lastWrite = ContinuousClock.now
            if format == .sse { try await writer.write(ByteBuffer(string: "retry: 2000\n\n")) }
            while !Task.isCancelled, !Task.isShuttingDownGracefully {
                let events = try await log.events(after: cursor, types: types, limit: page)
                if events.isEmpty {
                    guard follow else { break }
                    if ContinuousClock.now - lastWrite >= keepAlive {
                        try await writer.write(ByteBuffer(string: format == .sse ? ": keep-alive\n\n" : "\n"))
                        lastWrite = .now
                    }
                    try? await Task.sleep(for: poll)
                    continue
                }
                var buffer = ByteBuffer()
                let publications = await editions.publications(of: events.compactMap(\.body.edition))
                for event in events {
                    cursor = event.id
                    guard reader.maySee(event, publicationOf: { publications[$0] }) else { continue }
                    switch format {
                    case .sse: buffer.writeString("id: \(event.publicID)\nevent: \(event.type.rawValue)\ndata: \(event.json())\n\n")
                    case .ndjson: buffer.writeString(event.json() + "\n")
                    }
                }
                if buffer.readableBytes > 0 {
                    try await writer.write(buffer)
                    lastWrite = .now
                }
            }
            logger.debug("event stream ended", metadata: ["after": .stringConvertible(cursor)])
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [
            .contentType: format == .sse ? "text/event-stream; charset=utf-8" : "application/x-ndjson",
            .cacheControl: "no-store", PublishEndpoint.noProxyBuffering: "no",
        ], body: body)
    }

    /// The account the credentials named, as a reader of events.
    private func eventReader(_ context: KioskRequestContext) async throws -> EventReader {
        let accounts = try await context.runtime.accounts.current().accounts
        guard let username = context.authenticatedUser else { throw KioskHTTPError.forbidden("No account is signed in.") }
        if let publisher = accounts.first(where: { $0.kind == .publisher && $0.username == username }) {
            return .publisher(scope: publisher.scope)
        }
        guard let account = accounts.first(where: { $0.kind == .operator && $0.username == username }) else {
            throw KioskHTTPError.forbidden("Only publishers and operators read events.")
        }
        // An editor reads what its console webhooks may receive: issues and editions, as a publisher of every edition.
        return account.role?.mayConfigure == true ? .operator : .publisher(scope: nil)
    }
}

/// How many event streams are open, in all and per account.
package struct OpenStreams: Sendable {
    package private(set) var total = 0
    private var byAccount: [String: Int] = [:]

    enum Admission { case opened, serverFull, accountFull }

    /// Counts a new stream of `account` when there is room for it.
    mutating func open(by account: String, most: Int, mostPerAccount: Int) -> Admission {
        guard total < most else { return .serverFull }
        let own = byAccount[account, default: 0]
        guard own < mostPerAccount else { return .accountFull }
        total += 1
        byAccount[account] = own + 1
        return .opened
    }

    /// Counts a stream of `account` as closed.
    mutating func close(by account: String) {
        total = max(0, total - 1)
        let own = byAccount[account, default: 0] - 1
        byAccount[account] = own > 0 ? own : nil
    }
}

/// Editions' publications, read once per stream and again when an edition is unknown (a new one).
private actor EditionPublications {
    let database: any KioskDatabase
    var known: [Int: Int] = [:]

    init(database: any KioskDatabase) { self.database = database }

    /// Every edition's publication, read again when one of `editions` is not known yet.
    func publications(of editions: [Int]) async -> [Int: Int] {
        if editions.allSatisfy({ known[$0] != nil }) { return known }
        guard let catalogue = try? await database.catalogue() else { return known }
        known = Dictionary(catalogue.editions.map { ($0.id, $0.publicationID) }, uniquingKeysWith: { first, _ in first })
        return known
    }
}
