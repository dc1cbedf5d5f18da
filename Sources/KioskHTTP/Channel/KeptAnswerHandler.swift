import Glibc
import HTTPTypes
import KioskIntegers
import NIOCore
import NIOHTTPTypes

/// Answers on the connection's event loop the requests `KeptRPCAnswers` can answer at once, and passes
/// every other request on to Hummingbird unchanged (see `KioskHTTP1Channel` for where it sits).
///
/// A request that may be answered is held while its head and body arrive; when it cannot be answered
/// after all, it is passed on whole. Responses keep the order of the requests: a complete request held
/// while Hummingbird still owes the response to an earlier one waits for that response to end (a client
/// may send the next request as soon as it has the previous body, before the response's end is written).
package final class KeptAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    private let answers: KeptRPCAnswers
    private var state = StateMachine()
    private var date: (second: Int, text: String) = (0, "")
    private var accepted: KeptRPCAnswers.Accepted?

    package init(answers: KeptRPCAnswers) { self.answers = answers }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch state.read(unwrapInboundIn(data), mayAnswer: answers.mayAnswer) {
        case .pass:
            context.fireChannelRead(data)
        case .hold:
            break
        case .passHeld(let head, let body, let complete):
            passOn(head, body, complete: complete, context: context)
            context.fireChannelRead(data)
        case .complete(let head, let body):
            answerOrPassOn(head, body, context: context)
        }
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        context.write(data, promise: promise)
        if let (head, body) = state.responseEnded() {
            answerOrPassOn(head, body, context: context)
            context.fireChannelReadComplete()
        }
    }

    private func answerOrPassOn(_ head: HTTPRequest, _ body: ByteBuffer, context: ChannelHandlerContext) {
        if let response = answers.answer(head, body: body, date: currentDate(), accepted: &accepted) {
            context.write(wrapOutboundOut(.head(response.head)), promise: nil)
            context.write(wrapOutboundOut(.body(response.body)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        } else {
            state.passedOn()
            passOn(head, body, complete: true, context: context)
        }
    }

    private func passOn(_ head: HTTPRequest, _ body: ByteBuffer, complete: Bool, context: ChannelHandlerContext) {
        context.fireChannelRead(wrapInboundOut(.head(head)))
        if body.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(.body(body))) }
        if complete { context.fireChannelRead(wrapInboundOut(.end(nil))) }
    }

    /// The `Date` header's value, formatted once a second.
    private func currentDate() -> String {
        let second = time(nil)
        if second != date.second { date = (second, HTTPDate.format(seconds: Int64(widening: second))) }
        return date.text
    }
}

extension KeptAnswerHandler {
    /// What the handler holds and owes, without I/O.
    struct StateMachine {
        enum Reading {
            case idle
            /// A request that may be answered here: its head and the body so far.
            case holding(HTTPRequest, ByteBuffer)
            /// That request, complete, waiting for the responses owed before it.
            case waiting(HTTPRequest, ByteBuffer)
            /// A request passed on, until its end.
            case passing
        }

        enum ReadAction {
            /// Pass the part on.
            case pass
            /// Keep it (held in the state).
            case hold
            /// Pass on the held head and body (and its end, when `complete`), then the part.
            case passHeld(HTTPRequest, ByteBuffer, complete: Bool)
            /// The held request is complete (the part was its end) and nothing is owed before it:
            /// answer it, or pass it all on.
            case complete(HTTPRequest, ByteBuffer)
        }

        private(set) var reading = Reading.idle
        /// Requests passed on whose response has not ended yet.
        private(set) var unanswered = 0

        mutating func read(_ part: HTTPRequestPart, mayAnswer: (HTTPRequest) -> Bool) -> ReadAction {
            switch (part, reading) {
            case (_, .waiting(let head, let body)):
                // A request pipelined behind one that waits: both go the usual way, in order.
                unanswered += 1
                if case .head = part {
                    reading = .passing
                    unanswered += 1
                } else {
                    reading = .idle
                }
                return .passHeld(head, body, complete: true)
            case (.head(let head), _):
                if mayAnswer(head) {
                    reading = .holding(head, ByteBuffer())
                    return .hold
                }
                reading = .passing
                unanswered += 1
                return .pass
            case (.body(let chunk), .holding(let head, var body)):
                guard body.readableBytes + chunk.readableBytes <= KeptRPCAnswers.bodyLimit else {
                    reading = .passing
                    unanswered += 1
                    return .passHeld(head, body, complete: false)
                }
                if body.readableBytes == 0 { body = chunk } else { body.writeImmutableBuffer(chunk) }
                reading = .holding(head, body)
                return .hold
            case (.body, _):
                return .pass
            case (.end, .holding(let head, let body)):
                guard unanswered == 0 else {
                    reading = .waiting(head, body)
                    return .hold
                }
                reading = .idle
                return .complete(head, body)
            case (.end, _):
                reading = .idle
                return .pass
            }
        }

        /// A complete held request could not be answered here and is passed on.
        mutating func passedOn() { unanswered += 1 }

        /// A response written by Hummingbird ended; returns the request that waited for it, if it may
        /// now be answered.
        mutating func responseEnded() -> (HTTPRequest, ByteBuffer)? {
            unanswered = max(0, unanswered - 1)
            guard unanswered == 0, case .waiting(let head, let body) = reading else { return nil }
            reading = .idle
            return (head, body)
        }
    }
}
