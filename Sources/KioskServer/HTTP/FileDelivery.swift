import Foundation
import Hummingbird
import KioskEditions
import KioskModels
import Logging
import NIOCore
import NIOPosix

/// Serves the files behind signed links: `GET` and `HEAD`, one byte range per request (`206`,
/// `Content-Range`, `416`), `ETag` with `If-None-Match` and `If-Range`, streamed from an open descriptor
/// in bounded chunks, read on the connection's event loop when the page cache has them.
///
/// The link is verified first (bad: `403`, expired: `410`); only then is the path, decoded once,
/// resolved by `EditionsDirectory.open(servable:)`, the one place that decides what may be served
/// (no `..`, no dot files, no symbolic links, nothing outside the editions directory). The file is opened
/// before the response starts, so a republish during the download does not cut it short.
struct FileDelivery: Sendable {
    let directory: EditionsDirectory
    let links: SignedLinks
    /// Bytes read per step; each response holds two buffers of this size. 512 KiB measured best: 256 KiB
    /// costs single-client throughput (0.6-0.7x nginx), 1 MiB costs memory (+95 MiB with 50 downloads).
    var chunkSize = 512 << 10
    var threadPool: NIOThreadPool = .singleton
    /// Unix seconds.
    var now: @Sendable () -> Int64 = { Int64(time(nil)) }

    init(directory: EditionsDirectory, links: SignedLinks) {
        self.directory = directory
        self.links = links
    }

    /// - Parameter eventLoop: the connection's event loop; when given, cached chunks are read on it, which
    ///   also paces the response to the loop (see the body below). Without it, every chunk is read on
    ///   the thread pool.
    func respond(to request: Request, eventLoop: (any EventLoop)? = nil) async throws -> Response {
        let relative: String
        switch links.verify(rawPath: request.uri.path, query: request.uri.query, now: now()) {
        case .valid(let path): relative = path
        case .forbidden: return Response.text(.forbidden, "This link is not valid.\n")
        case .expired: return Response.text(.gone, "This link has expired; ask the app for a new one.\n")
        }
        let directory = self.directory
        let opened: Result<EditionsDirectory.ServedFile, EditionsDirectory.ResolutionError> = try await threadPool.runIfActive {
            Result { () throws(EditionsDirectory.ResolutionError) in try directory.open(servable: relative) }
        }
        let file: EditionsDirectory.ServedFile
        switch opened {
        case .success(let served): file = served
        case .failure(.invalidPath): return Response.text(.forbidden, "This link is not valid.\n")
        case .failure(.notFound): return Response.text(.notFound, "No such file (it may have been replaced by a newer edition).\n")
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
                return Response(status: .rangeNotSatisfiable, headers: headers)
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
        let chunkSize = Int(min(Int64(self.chunkSize), length))
        let pool = threadPool
        let body = ResponseBody(contentLength: Int(length)) { writer in
            // Two buffers per response, used in turn: by the time one comes round again the connection
            // has normally sent it, so its storage is refilled in place.
            let buffers = [ReusableBuffer(capacity: chunkSize), ReusableBuffer(capacity: chunkSize)]
            var offset = start
            var turn = 0
            let end = start + length
            while offset < end {
                let want = Int(min(Int64(chunkSize), end - offset))
                let at = offset
                let slot = buffers[turn % buffers.count]
                turn += 1
                // On the connection's event loop, cached data is read without waiting for the disk; the
                // loop runs its tasks in order, so by then it has also taken the previous chunk: a fast
                // disk never queues a whole file behind a busy loop (NIO's outbound writer hands chunks
                // over without waiting), and there is one thread hop per chunk. Anything not cached
                // is read on the thread pool.
                let cached = try await eventLoop?.submit { slot.fillIfCached(from: file.file, count: want, at: at) }.get() ?? false
                if !cached { try await pool.runIfActive { try slot.fill(from: file.file, count: want, at: at) } }
                offset += Int64(want)
                try await writer.write(slot.buffer)
            }
            try await writer.finish(nil)
            withExtendedLifetime(file) {}
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// One chunk buffer, filled on the event loop or the thread pool and then handed to the connection.
    ///
    /// The box holds the only reference between uses, so a fill writes into the same storage unless the
    /// connection still holds the previous chunk (then `clear()` gives it fresh storage). Used by one
    /// response task at a time: filled while the task awaits, read after.
    final class ReusableBuffer: @unchecked Sendable {
        private(set) var buffer: ByteBuffer

        init(capacity: Int) {
            buffer = ByteBufferAllocator().buffer(capacity: capacity)
        }

        func fill(from file: OpenFile, count: Int, at offset: Int64) throws {
            buffer.clear()
            let read = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
                try file.read(into: raw.baseAddress!, count: count, at: offset)
            }
            guard read == count else { throw FileTruncated() }
        }

        /// `fill` if the bytes are in the page cache (never waits for the disk); false otherwise.
        func fillIfCached(from file: OpenFile, count: Int, at offset: Int64) -> Bool {
            buffer.clear()
            var cached = false
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
                cached = file.readIfCached(into: raw.baseAddress!, count: count, at: offset)
                return cached ? count : 0
            }
            return cached
        }
    }

    struct FileTruncated: Error {}

    /// `If-None-Match`: `*` or a list containing the (weakly compared) entity tag.
    static func matches(_ header: String, etag: String) -> Bool {
        let bare = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        return header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == bare || tag == "W/" + bare
        }
    }

    /// `If-Range`: the range applies only if the representation is unchanged (strong entity tag, or the
    /// exact `Last-Modified` date).
    static func ifRangeAllows(_ header: String?, etag: String, lastModified: String) -> Bool {
        guard let header = header?.trimmingCharacters(in: .whitespaces) else { return true }
        return header == etag || header == lastModified
    }
}

/// A single `Range: bytes=` range (RFC 9110 §14.1.2).
enum ByteRange: Equatable {
    /// Malformed, several ranges, or a unit other than bytes: serve the whole file.
    case none
    /// No byte of the range exists: `416`.
    case unsatisfiable
    case range(ClosedRange<Int64>)

    static func parse(_ header: String, size: Int64) -> ByteRange {
        let value = header.trimmingCharacters(in: .whitespaces)
        guard value.lowercased().hasPrefix("bytes=") else { return .none }
        let spec = value.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .none }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        func number(_ text: String) -> Int64? {
            guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return Int64(text)
        }
        if first.isEmpty {
            // Suffix range: the last N bytes.
            guard let count = number(last) else { return .none }
            guard count > 0, size > 0 else { return .unsatisfiable }
            return .range(max(0, size - count)...(size - 1))
        }
        guard let start = number(first) else { return .none }
        let end: Int64
        if last.isEmpty {
            end = size - 1
        } else {
            guard let value = number(last), value >= start else { return .none }
            end = min(value, size - 1)
        }
        guard start < size else { return .unsatisfiable }
        return .range(start...end)
    }
}

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) without Foundation.
enum HTTPDate {
    static func format(seconds: Int64) -> String {
        let day = IssueDate(unixTime: seconds)
        let secondsOfDay = Int(seconds - Int64(day.daysSinceEpoch) * 86_400)
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]   // 1970-01-01 was a Thursday
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let weekday = weekdays[((day.daysSinceEpoch % 7) + 7) % 7]
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(weekday), \(two(day.day)) \(months[day.month - 1]) \(day.year) "
            + "\(two(secondsOfDay / 3600)):\(two(secondsOfDay / 60 % 60)):\(two(secondsOfDay % 60)) GMT"
    }
}

/// Adds `GET` and `HEAD` for `<prefix>/**`, answered by the delivery `delivery` returns for the request's
/// context (so a configuration reload can swap it). `prefix` is the configuration's `links.prefix`.
func addFileDeliveryRoutes<Context: RequestContext>(
    to router: Router<Context>, prefix: String,
    delivery: @escaping @Sendable (Context) -> FileDelivery
) {
    let path = RouterPath(String(prefix.drop { $0 == "/" }) + "/**")
    router.get(path) { request, context in
        try await delivery(context).respond(to: request, eventLoop: (context as? any ConnectionEventLoopProviding)?.connectionEventLoop)
    }
    router.head(path) { request, context in try await delivery(context).respond(to: request) }
}

/// A request context that knows its connection's event loop, so streamed responses can pace themselves
/// on it (see `FileDelivery.respond(to:eventLoop:)`).
protocol ConnectionEventLoopProviding {
    var connectionEventLoop: any EventLoop { get }
}

/// Adds the routes for one fixed delivery.
func addFileDeliveryRoutes<Context: RequestContext>(to router: Router<Context>, delivery: FileDelivery) {
    addFileDeliveryRoutes(to: router, prefix: delivery.links.prefix) { _ in delivery }
}
