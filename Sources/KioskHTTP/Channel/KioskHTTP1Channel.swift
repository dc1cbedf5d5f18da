import Prometheus
import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1.1 child channel with Kiosk's additions: a `KeptAnswerHandler` after
/// Hummingbird's connection state handler (so idle timeouts and graceful shutdown see the requests it
/// answers), and, with metrics, the connection gauge counting every connection for as long as it is
/// handled (Hummingbird runs `handle(value:logger:)` once per connection, for its whole life, keep-alive
/// and idle time included).
package struct KioskHTTP1Channel: ServerChildChannel {
    package typealias Value = HTTP1Channel.Value
    package let base: HTTP1Channel
    package let keptAnswers: KeptRPCAnswers
    package let metrics: KioskMetrics?

    package func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let keptAnswers = self.keptAnswers
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let connectionState = try pipeline.handler(type: HTTPConnectionStateHandler.self)
            try pipeline.addHandler(KeptAnswerHandler(answers: keptAnswers), position: .after(connectionState))
            return value
        }
    }

    package func handle(value: Value, logger: Logger) async {
        guard let metrics else { return await base.handle(value: value, logger: logger) }
        metrics.httpConnectionsTotal.increment()
        metrics.httpConnectionsOpen.increment()
        defer { metrics.httpConnectionsOpen.decrement() }
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 on `KioskHTTP1Channel` (TLS, when configured, wraps this builder, so TLS connections get
    /// the same).
    package static func kioskHTTP1(configuration: HTTP1Channel.Configuration, keptAnswers: KeptRPCAnswers,
                                   metrics: KioskMetrics?) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            KioskHTTP1Channel(base: HTTP1Channel(responder: responder, configuration: configuration),
                              keptAnswers: keptAnswers, metrics: metrics)
        }
    }
}
