import Hummingbird
import HummingbirdCore
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Prometheus
import KioskConfig

/// Counts every HTTP request by route pattern, method and status, times it, keeps the in-flight gauge,
/// and for signed-link files (`links.prefix`) counts downloads started and completed and the body bytes
/// actually written, by wrapping the response body: `FileDelivery` is not touched. Streamed bodies (no
/// length) are wrapped too, to keep them in flight until sent; other bodies are in memory and are not.
///
/// It runs after `RuntimeMiddleware` (it reads the links prefix of the runtime pinned to the request).
package struct HTTPMetricsMiddleware: RouterMiddleware {
    package typealias Context = KioskRequestContext
    package let metrics: KioskMetrics

    package func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let inFlight = InFlight(metrics.httpRequestsInFlight)
        let method = request.method.rawValue
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            let status = Self.status(of: error)
            metrics.observeHTTP(route: context.endpointPath ?? "unmatched", method: method, status: status,
                                duration: start.duration(to: .now))
            inFlight.end()
            throw error
        }
        let status = response.status.code
        metrics.observeHTTP(route: context.endpointPath ?? "unmatched", method: method, status: status,
                            duration: start.duration(to: .now))

        var file: KioskMetrics.FileKind?
        if request.method == .get, status == 200 || status == 206, response.body.contentLength != 0,
           request.uri.path.hasPrefix(context.runtime.configuration.links.prefix + "/") {
            let kind = KioskMetrics.FileKind(path: request.uri.path)
            file = kind
            metrics.fileDownloadStarted(kind)
        }
        // A body of known length that is not a file is in memory: it is as good as sent, and left as it
        // is, so Hummingbird writes head, body and end at once.
        guard file != nil || response.body.contentLength == nil else {
            inFlight.end()
            return response
        }
        let metrics = self.metrics
        let body = response.body
        response.body = ResponseBody(contentLength: body.contentLength) { [file] writer in
            defer { inFlight.end() }
            let counting = CountingBodyWriter(base: writer) { bytes in
                if let file { metrics.fileBytesSent(file, bytes) }
            } finished: {
                if let file { metrics.fileDownloadCompleted(file) }
            }
            try await body.write(counting)
        }
        return response
    }

    /// The status counted for a request that failed with `error`: the status of an HTTP error; for a
    /// client that went away (closed the connection while its body was being read) 499, nginx's "client
    /// closed request", and 400 for a body the HTTP parser refused; 500 only for the server's own errors.
    static func status(of error: any Error) -> Int {
        if let error = error as? any HTTPResponseError { return error.status.code }
        if let error = error as? HTTPParserError { return error == .invalidEOFState ? 499 : 400 }
        if error is ChannelError || error is IOError || error is CancellationError { return 499 }
        return 500
    }
}

/// Decrements the in-flight gauge once: when the body is written, or when the response is dropped
/// without being written (connection gone), whichever comes first.
private final class InFlight: Sendable {
    private let gauge: Gauge
    private let done = NIOLockedValueBox(false)

    package init(_ gauge: Gauge) {
        self.gauge = gauge
        gauge.increment()
    }

    package func end() {
        let first = done.withLockedValue { done in
            defer { done = true }
            return !done
        }
        if first { gauge.decrement() }
    }

    deinit { end() }
}

/// Passes every buffer on and reports how many bytes went through, then the finish.
package struct CountingBodyWriter: ResponseBodyWriter {
    package var base: any ResponseBodyWriter
    package let sent: @Sendable (Int) -> Void
    package let finished: @Sendable () -> Void

    package init(base: any ResponseBodyWriter, sent: @escaping @Sendable (Int) -> Void, finished: @escaping @Sendable () -> Void) {
        self.base = base
        self.sent = sent
        self.finished = finished
    }

    package mutating func write(_ buffer: ByteBuffer) async throws {
        let count = buffer.readableBytes
        try await base.write(buffer)
        sent(count)
    }

    package mutating func write(contentsOf buffers: some Sequence<ByteBuffer>) async throws {
        for buffer in buffers { try await write(buffer) }
    }

    package consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await base.finish(trailingHeaders)
        finished()
    }
}
