import Foundation
import Hummingbird
import KioskEditions
import KioskIntegers
import KioskModels
import NIOCore
import KioskFiles

/// Serves the files behind signed links: `GET` and `HEAD`, one byte range per request (`206`,
/// `Content-Range`, `416`), `ETag` with `If-None-Match` and `If-Range`, streamed from an open descriptor
/// in bounded chunks, read on the connection's event loop when the page cache has them.
///
/// The link is verified first (bad: `403`, expired: `410`); only then is the path, decoded once,
/// resolved by `EditionsDirectory.open(servable:)`, the one place that decides what may be served
/// (no `..`, no dot files, no symbolic links, nothing outside the editions directory). The file is opened
/// before the response starts, so a republish during the download does not cut it short.
package struct FileDelivery: Sendable {
    package let directory: EditionsDirectory
    package let links: SignedLinks
    /// Bytes read per step; each response holds two buffers of this size. 512 KiB measured best: 256 KiB
    /// costs single-client throughput (0.6-0.7x nginx), 1 MiB costs memory (+95 MiB with 50 downloads).
    package var chunkSize = 512 << 10
    package var clock: any KioskClock = SystemClock()

    package init(directory: EditionsDirectory, links: SignedLinks) {
        self.directory = directory
        self.links = links
    }

    /// - Parameter eventLoop: the connection's event loop; when given, cached chunks are read on it, which
    ///   also paces the response to the loop (see the body below). Without it, every chunk is read on
    ///   the blocking executor.
    package func respond(to request: Request, eventLoop: (any EventLoop)? = nil) async throws -> Response {
        let relative: String
        switch links.verify(rawPath: request.uri.path, query: request.uri.query, now: clock.now) {
        case .valid(let path): relative = path
        case .forbidden: throw KioskHTTPError.forbidden("This link is not valid.")
        case .expired: throw KioskHTTPError.gone("This link has expired; ask the app for a new one.")
        }
        let directory = self.directory
        let opened: Result<EditionsDirectory.ServedFile, EditionsDirectory.ResolutionError> = try await directory.executor.run {
            Result { () throws(EditionsDirectory.ResolutionError) in try directory.open(servable: relative) }
        }
        let file: EditionsDirectory.ServedFile
        switch opened {
        case .success(let served): file = served
        case .failure(.invalidPath): throw KioskHTTPError.forbidden("This link is not valid.")
        case .failure(.notFound): throw KioskHTTPError.notFound("No such file (it may have been replaced by a newer edition).")
        }

        let etag = file.etag
        let lastModified = HTTPDate.format(seconds: file.modified / 1_000_000_000)
        var headers = HTTPFields()
        headers[.contentType] = EditionsDirectory.contentType(of: relative)
        headers[.acceptRanges] = "bytes"
        headers[.eTag] = etag
        headers[.lastModified] = lastModified
        headers[.cacheControl] = "private, max-age=\(max(0, links.lifetimeSeconds))"

        if let match = request.headers[.ifNoneMatch], Self.matches(match, etag: etag) {
            return Response(status: .notModified, headers: headers)
        }
        let size = file.size
        var range: ClosedRange<Int64>?
        if let header = request.headers[.range], Self.ifRangeAllows(request.headers[.ifRange], etag: etag, lastModified: lastModified) {
            switch ByteRange.parse(header, size: size) {
            case .none: break                           // malformed or several ranges: the whole file
            case .unsatisfiable:
                headers[.contentRange] = "bytes */\(size)"
                throw KioskHTTPError.rangeNotSatisfiable(headers: headers)
            case .range(let bytes): range = bytes
            }
        }
        let start = range?.lowerBound ?? 0
        let length = range.map { $0.upperBound - $0.lowerBound + 1 } ?? size
        headers[.contentLength] = String(length)
        if let range { headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)" }
        let status: HTTPResponse.Status = range == nil ? .ok : .partialContent
        if request.method == .head || length == 0 {
            return Response(status: status, headers: headers, body: ResponseBody())
        }
        let chunkSize = min(self.chunkSize, Int(widening: length))
        let executor = directory.executor
        let body = ResponseBody(contentLength: Int(widening: length)) { writer in
            // Two buffers per response, used in turn: by the time one comes round again the connection
            // has normally sent it, so its storage is refilled in place.
            let buffers = [FileChunkBuffer(capacity: chunkSize), FileChunkBuffer(capacity: chunkSize)]
            var offset = start
            var turn = 0
            let end = start + length
            while offset < end {
                let want = min(chunkSize, Int(widening: end - offset))
                let at = offset
                let slot = buffers[turn % buffers.count]
                turn += 1
                // On the connection's event loop, cached data is read without waiting for the disk; the
                // loop runs its tasks in order, so by then it has also taken the previous chunk: a fast
                // disk never queues a whole file behind a busy loop (NIO's outbound writer hands chunks
                // over without waiting), and there is one thread hop per chunk. Anything not cached
                // is read on the blocking executor.
                let cached = try await eventLoop?.submit { slot.fillIfCached(from: file.file, count: want, at: at) }.get() ?? false
                if !cached { try await executor.run { try slot.fill(from: file.file, count: want, at: at) } }
                offset += Int64(widening: want)
                try await writer.write(slot.buffer)
            }
            try await writer.finish(nil)
            withExtendedLifetime(file) {}
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// `If-None-Match`: `*` or a list containing the (weakly compared) entity tag.
    package static func matches(_ header: String, etag: String) -> Bool {
        let bare = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        return header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == bare || tag == "W/" + bare
        }
    }

    /// `If-Range`: the range applies only if the representation is unchanged (strong entity tag, or the
    /// exact `Last-Modified` date).
    package static func ifRangeAllows(_ header: String?, etag: String, lastModified: String) -> Bool {
        guard let header = header?.trimmingCharacters(in: .whitespaces) else { return true }
        return header == etag || header == lastModified
    }
}

/// `GET` and `HEAD` for `<prefix>/**` (the configuration's `links.prefix`, fixed at start), answered by the
/// delivery `delivery` returns for the request's context (so a configuration reload can swap it).
package struct FileDeliveryController: Sendable {
    package let prefix: String
    package let delivery: @Sendable (KioskRequestContext) -> FileDelivery

    package func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        let path = RouterPath(String(prefix.drop { $0 == "/" }) + "/**")
        group.get(path) { request, context in
            try await delivery(context).respond(to: request, eventLoop: context.connectionEventLoop)
        }
        group.head(path) { request, context in try await delivery(context).respond(to: request) }
    }
}
