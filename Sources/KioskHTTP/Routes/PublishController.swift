import KioskRPC
import Foundation
import HTTPTypes
import Hummingbird
import KioskEditions
import KioskIntegers
import KioskModels
import Logging
import NIOCore
import NIOPosix
import KioskConfig
import KioskFiles

/// The publishers' HTTP endpoint, behind their own HTTP Basic credentials (`BasicAuthenticationMiddleware.publishers`):
///
/// - `PUT /publish/{edicio_id}/{date}`: the body is a ZIP, tar or tar.gz of a publish folder
///   (`issue.json` and the files it names, or PDFs alone, at the top or inside one folder), or with
///   `Content-Type: application/pdf` the issue as one PDF. It is streamed to a file under the editions
///   directory's `.staging/` with a size limit, unpacked safely and published exactly like
///   `KioskServer publish` (PDFs through `PDFIssueImporter`). `201` with a JSON summary (for PDFs with a
///   `rendering` member); `400` for an unusable or unsafe archive,
///   `413` over a limit, `422` when the issue itself is refused; every refusal lists what and where.
/// - `DELETE /publish/{edicio_id}/{date}`: withdraws the issue (`200`, or `404` when none is visible).
/// - `POST /publish/{edicio_id}/{date}/restore`: brings a withdrawn issue back as it was (`200`; `404` when
///   it was never published, `409` when it is visible, `410` when its files are gone).
package struct PublishEndpoint: Sendable {
    package let publisher: IssuePublisher
    /// Publishes each upload (an archive or one PDF).
    package let uploads: UploadPublisher
    /// Largest upload body accepted.
    package var maxUploadBytes: Int64
    package var logger: Logger = Logger(label: "kiosk.publish")

    package init(publisher: IssuePublisher, pdfOptions: PDFImportOptions = PDFImportOptions(), maxUploadBytes: Int64,
                 logger: Logger = Logger(label: "kiosk.publish")) {
        self.publisher = publisher
        self.uploads = UploadPublisher(importer: PDFIssueImporter(publisher: publisher, options: pdfOptions))
        self.maxUploadBytes = maxUploadBytes
        self.logger = logger
    }

    /// Publishes the upload. With `Accept: application/x-ndjson` the answer is `200` at once and streams
    /// one JSON line per step while the issue is processed (`ProgressLine`: `phase`, files and bytes done
    /// and in all), then a last line with the outcome (`OutcomeLine`: `status` 201 and `published`, or the
    /// refusal's `status` and `error`). `published` runs after a success, before the answer (or the last
    /// line) is written.
    package func publish(_ request: Request, publisherName: String, editionText: String?, dateText: String?,
                         published: (@Sendable () async throws -> Void)? = nil) async throws -> Response {
        guard let editionID = editionText.flatMap({ Int($0) }), editionID > 0 else {
            throw KioskHTTPError.badRequest("The edition in the URL must be a positive number: /publish/{edicio_id}/{YYYY-MM-DD}.",
                                            closesConnection: !(await Self.drain(request.body)))
        }
        guard let date = dateText.flatMap({ IssueDate($0) }) else {
            throw KioskHTTPError.badRequest("The date in the URL must be a real day written YYYY-MM-DD.",
                                            closesConnection: !(await Self.drain(request.body)))
        }
        if let declared = request.headers[.contentLength].flatMap({ Int64($0) }), declared > maxUploadBytes {
            throw KioskHTTPError.tooLarge("The upload is \(declared) bytes; the limit is \(maxUploadBytes) bytes.",
                                          closesConnection: !(await Self.drain(request.body)))
        }
        let work: @Sendable ((@Sendable (PublishProgress) -> Void)?) async throws -> Summary = { progress in
            let summary = try await self.receiveAndPublish(request, publisherName: publisherName, editionID: editionID,
                                                           date: date, progress: progress)
            try await published?()
            return summary
        }
        guard request.headers[.accept]?.contains(Self.progressType) == true else {
            return try JSONResponse.response(.created, try await work(nil))
        }
        // The answer begins before the body is read, so a refusal part-way may leave some of it unread:
        // the connection closes after the answer.
        let headers: HTTPFields = [.contentType: Self.progressType, .cacheControl: "no-store", Self.noProxyBuffering: "no",
                                   .connection: "close"]
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            let (steps, continuation) = AsyncStream<PublishProgress>.makeStream(bufferingPolicy: .bufferingNewest(16))
            async let outcome: OutcomeLine = {
                defer { continuation.finish() }
                do {
                    return OutcomeLine(published: try await work { continuation.yield($0) })
                } catch let error as KioskHTTPError {
                    return OutcomeLine(status: error.status.code, error: error.message)
                } catch {
                    self.logger.error("publish failed", metadata: ["error": .string("\(error)")])
                    return OutcomeLine(status: 500, error: "The publish failed on the server; its log says why.")
                }
            }()
            for await step in steps { try await writer.write(try JSONResponse.bytes(ProgressLine(step))) }
            try await writer.write(try JSONResponse.bytes(try await outcome))
            try await writer.finish(nil)
        })
    }

    /// Receives the upload and publishes it; throws `KioskHTTPError` for every refusal.
    private func receiveAndPublish(_ request: Request, publisherName: String, editionID: Int, date: IssueDate,
                                   progress: (@Sendable (PublishProgress) -> Void)?) async throws -> Summary {
        let upload = try await uploads.makeUpload()
        let kind: UploadPublisher.Kind = request.headers[.contentType].map(Self.isPDFType) == true ? .pdf : .archive
        let metadata: Logger.Metadata = ["publisher": .string(publisherName), "edition": .stringConvertible(editionID),
                                         "date": .stringConvertible(date)]
        do {
            do {
                let (received, drained) = try await receive(request.body, into: upload)
                guard received <= maxUploadBytes else {
                    throw KioskHTTPError.tooLarge("The upload is larger than the limit of \(maxUploadBytes) bytes.",
                                                  closesConnection: !drained)
                }
            } catch {
                await uploads.discard(upload)
                throw error
            }
            let outcome = try await uploads.publish(upload, kind: kind, editionID: editionID, date: date, progress: progress)
            logger.notice("published over HTTP", metadata: metadata.merging(["revision": .stringConvertible(outcome.result.revision)]) { $1 })
            return Summary(outcome.result, rendering: outcome.rendering)
        } catch let refused as UploadPublisher.Refused {
            if !refused.unusableUpload {
                logger.notice("publish refused", metadata: metadata.merging(["problems": .stringConvertible(refused.rejected.problems.count)]) { $1 })
            }
            throw KioskHTTPError.refused(refused.rejected, archive: refused.unusableUpload)
        } catch let error as SystemError where error.isOutOfSpace {
            logger.error("publish failed: the editions disk is full", metadata: ["error": .string(error.description)])
            throw KioskHTTPError.insufficientStorage(
                "The server's editions disk is full (\(error.call) failed); nothing was published. Try again later.")
        }
    }

    package func withdraw(_ request: Request, publisherName: String, editionText: String?, dateText: String?) async throws -> Response {
        guard let editionID = editionText.flatMap({ Int($0) }), editionID > 0, let date = dateText.flatMap({ IssueDate($0) }) else {
            throw KioskHTTPError.badRequest("Use /publish/{edicio_id}/{YYYY-MM-DD} with a positive edition number and a real day.")
        }
        let withdrawn = try await publisher.withdraw(editionID: editionID, date: date)
        logger.notice("withdraw over HTTP", metadata: ["publisher": .string(publisherName), "edition": .stringConvertible(editionID),
                                                      "date": .stringConvertible(date), "withdrawn": .stringConvertible(withdrawn)])
        return try JSONResponse.response(withdrawn ? .ok : .notFound,
                                         Withdrawal(edition: editionID, date: date.description, withdrawn: withdrawn))
    }

    package func restore(publisherName: String, editionText: String?, dateText: String?) async throws -> Response {
        guard let editionID = editionText.flatMap({ Int($0) }), editionID > 0, let date = dateText.flatMap({ IssueDate($0) }) else {
            throw KioskHTTPError.badRequest("Use /publish/{edicio_id}/{YYYY-MM-DD}/restore with a positive edition number and a real day.")
        }
        let revision: Int
        do { revision = try await publisher.restore(editionID: editionID, date: date) }
        catch let refused as IssueRestoreRefused { throw KioskHTTPError.refused(refused) }
        logger.notice("restore over HTTP", metadata: ["publisher": .string(publisherName), "edition": .stringConvertible(editionID),
                                                     "date": .stringConvertible(date), "revision": .stringConvertible(revision)])
        return try JSONResponse.response(.ok, Restoration(edition: editionID, date: date.description, restored: true, revision: revision))
    }

    /// The media type of a progress-reporting answer (one JSON document per line).
    static let progressType = "application/x-ndjson"
    /// Asks nginx not to buffer the answer, so each progress line reaches the client as it is written.
    static let noProxyBuffering = HTTPField.Name("X-Accel-Buffering")!

    /// One step of a publish, as a line of a progress-reporting answer.
    struct ProgressLine: Encodable {
        var phase: String
        var filesDone: Int
        var filesTotal: Int
        var bytesDone: Int64
        var bytesTotal: Int64
        var seconds: Double
        init(_ progress: PublishProgress) {
            phase = progress.phase.rawValue; filesDone = progress.filesDone; filesTotal = progress.filesTotal
            bytesDone = progress.bytesDone; bytesTotal = progress.bytesTotal; seconds = (progress.elapsed * 1000).rounded() / 1000
        }
        enum CodingKeys: String, CodingKey {
            case phase, filesDone = "files_done", filesTotal = "files_total", bytesDone = "bytes_done", bytesTotal = "bytes_total", seconds
        }
    }

    /// The last line of a progress-reporting answer: the status the plain answer would have had, and
    /// what was published or why it was refused.
    struct OutcomeLine: Encodable {
        var status: Int
        var published: Summary?
        var error: String?
        init(published: Summary) { status = 201; self.published = published }
        init(status: Int, error: String) { self.status = status; self.error = error }
    }

    /// `application/pdf`, with or without parameters.
    static func isPDFType(_ value: String) -> Bool {
        value.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() == "application/pdf"
    }

    /// Streams the body to the upload file in 1 MiB writes on the blocking executor. Past the limit it stops
    /// writing and discards up to 8 MiB more; `drained` tells whether the body was read to its end.
    private func receive(_ body: RequestBody, into upload: EditionsDirectory.UploadFolder) async throws -> (Int64, drained: Bool) {
        var pending = ByteBufferAllocator().buffer(capacity: 1 << 20)
        var total: Int64 = 0
        func flush(_ buffer: ByteBuffer) async throws {
            guard buffer.readableBytes > 0 else { return }
            try await publisher.directory.executor.run {
                try buffer.withUnsafeReadableBytes { try upload.append($0) }
            }
        }
        for try await chunk in body {
            total += Int64(widening: chunk.readableBytes)
            if total > maxUploadBytes + (8 << 20) { return (total, false) }
            if total > maxUploadBytes { continue }
            var chunk = chunk
            pending.writeBuffer(&chunk)
            if pending.readableBytes >= 1 << 20 {
                try await flush(pending)
                pending.clear()
            }
        }
        if total <= maxUploadBytes { try await flush(pending) }
        return (total, true)
    }

    /// The `201` answer: what was published (`replaced_revision` is `null` for a first publication), and
    /// for PDFs what the rendering did (`rendering`: `pages`, `source_files`, `sections` from `manifest`,
    /// `outline` or `single`, `seconds`; absent for a classic folder).
    package struct Summary: Encodable {
        struct Bundle: Encodable {
            var path: String
            var size: Int64
            var sha256: String
        }
        struct Rendering: Encodable {
            var pages: Int
            var sourceFiles: Int
            var sections: String
            var seconds: Double
            enum CodingKeys: String, CodingKey { case pages, sourceFiles = "source_files", sections, seconds }
        }
        var edition: Int
        var date: String
        var revision: Int
        var replacedRevision: Int?
        var pages: Int
        var bytes: Int64
        var bundle: Bundle
        var seconds: Double
        var rendering: Rendering?

        init(_ result: PublishResult, rendering: PDFIssueImporter.Rendering? = nil) {
            edition = result.editionID; date = result.date.description; revision = result.revision
            replacedRevision = result.replacedRevision; pages = result.pages; bytes = result.bytes
            bundle = Bundle(path: result.bundle.path, size: result.bundle.size, sha256: result.bundle.sha256)
            seconds = (result.seconds * 1000).rounded() / 1000
            self.rendering = rendering.map {
                Rendering(pages: $0.pages, sourceFiles: $0.sourceFiles, sections: $0.sections.rawValue,
                          seconds: ($0.seconds * 1000).rounded() / 1000)
            }
            if let rendering { seconds = ((result.seconds + rendering.seconds) * 1000).rounded() / 1000 }
        }

        enum CodingKeys: String, CodingKey {
            case edition, date, revision, replacedRevision = "replaced_revision", pages, bytes, bundle, seconds, rendering
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(edition, forKey: .edition)
            try container.encode(date, forKey: .date)
            try container.encode(revision, forKey: .revision)
            try container.encode(replacedRevision, forKey: .replacedRevision)   // null when none
            try container.encode(pages, forKey: .pages)
            try container.encode(bytes, forKey: .bytes)
            try container.encode(bundle, forKey: .bundle)
            try container.encode(seconds, forKey: .seconds)
            try container.encodeIfPresent(rendering, forKey: .rendering)
        }
    }

    /// The `DELETE` answer.
    package struct Withdrawal: Encodable {
        var edition: Int
        var date: String
        var withdrawn: Bool
    }

    /// The restore answer.
    package struct Restoration: Encodable {
        var edition: Int
        var date: String
        var restored: Bool
        var revision: Int
    }

    /// Reads and discards what is left of a refused request's body, up to 8 MiB, so that the answer reaches
    /// a client still sending and the connection stays usable. False when more was left: close instead.
    package static func drain(_ body: RequestBody, upTo limit: Int = 8 << 20) async -> Bool {
        var drained = 0
        do {
            for try await chunk in body {
                drained += chunk.readableBytes
                if drained > limit { return false }
            }
            return true
        } catch {
            return false
        }
    }

}

/// `PUT` and `DELETE /publish/{edicio_id}/{date}`, answered by the endpoint `endpoint` returns for the
/// request's context (so a configuration reload can swap it). The group authenticates publishers; each
/// route first checks the publisher's scope (`PublisherScope`): an edition outside it is a `403`, logged
/// and written to the audit log, with nothing read or changed.
package struct PublishController: Sendable {
    package let endpoint: @Sendable (KioskRequestContext) -> PublishEndpoint
    /// The runtime whose accounts hold the publishers' scopes and whose database keeps the audit log;
    /// nil leaves scopes unchecked (an endpoint tested on its own).
    package let scopes: @Sendable (KioskRequestContext) -> KioskRuntime?

    package init(endpoint: @escaping @Sendable (KioskRequestContext) -> PublishEndpoint,
                 scopes: @escaping @Sendable (KioskRequestContext) -> KioskRuntime?) {
        self.endpoint = endpoint
        self.scopes = scopes
    }

    package func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.put("publish/{edicio_id}/{date}") { request, context in
            try await requireScope(request, context, action: "publish")
            return try await endpoint(context).publish(request, publisherName: context.authenticatedUser ?? "",
                                                       editionText: context.parameters.get("edicio_id"), dateText: context.parameters.get("date"))
        }
        group.post("publish/{edicio_id}/{date}/restore") { request, context in
            try await requireScope(request, context, action: "restore")
            return try await endpoint(context).restore(publisherName: context.authenticatedUser ?? "",
                                                       editionText: context.parameters.get("edicio_id"), dateText: context.parameters.get("date"))
        }
        group.delete("publish/{edicio_id}/{date}") { request, context in
            try await requireScope(request, context, action: "withdraw")
            return try await endpoint(context).withdraw(request, publisherName: context.authenticatedUser ?? "",
                                                        editionText: context.parameters.get("edicio_id"), dateText: context.parameters.get("date"))
        }
    }

    /// Throws the `403` when the signed-in publisher has a scope that leaves out the URL's edition. An
    /// edition that is not a number is left to the endpoint's own `400`.
    private func requireScope(_ request: Request, _ context: KioskRequestContext, action: String) async throws {
        let username = context.authenticatedUser ?? ""
        guard let runtime = scopes(context),
              let editionText = context.parameters.get("edicio_id"), let editionID = Int(editionText, radix: 10),
              let account = try await runtime.accounts.current().accounts.first(where: { $0.kind == .publisher && $0.username == username }),
              let scope = account.scope
        else { return }
        let database = runtime.console.database
        let publicationID = try await database.catalogue().editions.first { $0.id == editionID }?.publicationID
        guard !scope.allows(editionID: editionID, publicationID: publicationID) else { return }
        let subject = "edition \(editionID) \(context.parameters.get("date")?.prefix(10) ?? "")"
        context.logger.notice("publisher outside its scope", metadata: [
            "publisher": .string(username), "action": .string(action), "edition": .stringConvertible(editionID)])
        try await database.recordAudit(AuditEntry(time: runtime.environment.service.clock.now, actor: account.label,
                                                  action: "publish.refused", subject: subject, before: "",
                                                  after: "\(action) outside the scope \(scope)"))
        throw KioskHTTPError(.forbidden, "Publisher \(username) may not \(action) issues of edition \(editionID): its scope is \(scope).",
                             closesConnection: !(await PublishEndpoint.drain(request.body)))
    }
}
