import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Closes a connection once a response that says `Connection: close` is written.
///
/// Hummingbird reads a request's unread body to its end before it reads the next request, even after
/// a response that refused the body; an oversized or never-ending body would keep the server reading.
/// After such a response this handler shuts the connection's output (the client reads the answer, then
/// the end of the stream) and closes the connection `linger` later, so whatever the client is still
/// sending is read for that long at most, and the answer is not lost to a reset.
package final class CloseAfterResponseHandler: ChannelOutboundHandler, RemovableChannelHandler {
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    private let linger: TimeAmount
    private var closeAfterEnd = false

    package init(linger: TimeAmount = .milliseconds(250)) { self.linger = linger }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            closeAfterEnd = head.headerFields[.connection]?.lowercased() == "close"
        case .body:
            break
        case .end:
            guard closeAfterEnd else { break }
            closeAfterEnd = false
            let written = promise ?? context.eventLoop.makePromise()
            context.write(data, promise: written)
            let channel = context.channel
            let linger = self.linger
            written.futureResult.whenComplete { _ in
                channel.close(mode: .output, promise: nil)
                channel.eventLoop.scheduleTask(in: linger) { channel.close(promise: nil) }
            }
            return
        }
        context.write(data, promise: promise)
    }
}
