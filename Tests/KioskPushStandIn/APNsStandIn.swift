import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A local APNs: HTTP/2 over TLS (ALPN `h2` only) on 127.0.0.1, checking what Apple checks and answering as
/// Apple answers.
///
/// Checked on each request, in Apple's order: `POST /3/device/{token}`; the provider token (ES256 over the
/// configured public key, `kid` and `iss` as configured, `iat` not older than an hour nor in the future, a
/// new token not within 20 minutes of the previous one); `apns-topic` among the configured ones;
/// `apns-push-type` `alert` or `background` and a matching `apns-priority` (5 for background) and `aps`;
/// `apns-collapse-id` at most 64 bytes; `apns-expiration` a number; the payload JSON with `aps`, at most
/// 4096 bytes. Then the device token: unregistered ones 410, bad ones 400 `BadDeviceToken`, another app's
/// 400 `DeviceTokenNotForTopic`, throttled ones 429 and failing ones 500 as many times as configured. It
/// counts every answer per device token and every new provider token.
public final class APNsStandIn: Sendable {
    public struct Configuration: Sendable {
        public var teamID: String
        public var keyID: String
        /// The public half of the team's key.
        public var publicKey: P256.Signing.PublicKey
        public var topics: Set<String>
        public var unregistered: Set<String> = []
        public var badTokens: Set<String> = []
        public var otherTopicTokens: Set<String> = []
        /// Device token → how many requests to answer 429 `TooManyRequests` before accepting.
        public var throttled: [String: Int] = [:]
        /// Device token → how many requests to answer 500 `InternalServerError` before accepting.
        public var failing: [String: Int] = [:]
        /// Keep each request's headers and payload (tests); off for the benchmark.
        public var record = true
        /// Announced in SETTINGS, as APNs does.
        public var maximumConcurrentStreams = 1000
        /// A new provider token within this many seconds of the previous one is refused (429
        /// `TooManyProviderTokenUpdates`), as Apple asks; 0 for tests where several processes (a restart) make their own.
        public var minimumTokenRenewalSeconds: Int64 = 20 * 60

        public init(teamID: String, keyID: String, publicKey: P256.Signing.PublicKey, topics: Set<String>) {
            self.teamID = teamID
            self.keyID = keyID
            self.publicKey = publicKey
            self.topics = topics
        }
    }

    /// One request as it came.
    public struct Recorded: Sendable {
        public let deviceToken: String
        public let headers: [String: String]
        public let payload: [UInt8]
        public let status: Int
        public let reason: String?
    }

    /// Counts so far.
    public struct Snapshot: Sendable {
        public var requests = 0
        /// Device token → requests answered.
        public var answered: [String: Int] = [:]
        /// Device token → requests answered 200.
        public var delivered: [String: Int] = [:]
        /// Error reason → how many times answered.
        public var refusals: [String: Int] = [:]
        /// Provider tokens seen and accepted, in order of first use.
        public var providerTokens = 0
        /// TLS connections accepted.
        public var connections = 0
        public var recorded: [Recorded] = []
    }

    public let port: Int
    public let authority: TestAuthority
    public var baseURL: String { "https://127.0.0.1:\(port)" }
    private let channel: any Channel
    let shared: Shared

    final class Shared: Sendable {
        let configuration: Configuration
        let clock: @Sendable () -> Date
        let state: NIOLockedValueBox<State>

        init(configuration: Configuration, clock: @escaping @Sendable () -> Date) {
            self.configuration = configuration
            self.clock = clock
            var state = State()
            state.throttled = configuration.throttled
            state.failing = configuration.failing
            self.state = NIOLockedValueBox(state)
        }
    }

    struct State {
        var snapshot = Snapshot()
        /// Provider token → its `iat`, once verified.
        var verified: [String: Int64] = [:]
        var lastNewIat: Int64?
        var throttled: [String: Int] = [:]
        var failing: [String: Int] = [:]
    }

    /// Starts listening on a free port of 127.0.0.1. `clock` is the stand-in's now (the real one by default).
    public static func start(
        _ configuration: Configuration, clock: @escaping @Sendable () -> Date = { Date() },
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> APNsStandIn {
        let authority = try TestAuthority()
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(authority.serverCertificate)], privateKey: .privateKey(authority.serverKey))
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let shared = Shared(configuration: configuration, clock: clock)
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: configuration.maximumConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 8192),
        ]
        let connectionConfiguration = connection
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    shared.state.withLockedValue { $0.snapshot.connections += 1 }
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: connectionConfiguration, streamConfiguration: .init()
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandlers(
                                HTTP2FramePayloadToHTTP1ServerCodec(), APNsStreamHandler(shared: shared))
                        }
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port else {
            try await channel.close()
            throw StandInError("the APNs stand-in has no port")
        }
        return APNsStandIn(port: port, authority: authority, channel: channel, shared: shared)
    }

    private init(port: Int, authority: TestAuthority, channel: any Channel, shared: Shared) {
        self.port = port
        self.authority = authority
        self.channel = channel
        self.shared = shared
    }

    /// Stops listening; open connections are closed.
    public func stop() async throws {
        try await channel.close()
    }

    public func snapshot() -> Snapshot {
        shared.state.withLockedValue { $0.snapshot }
    }

    /// Answers `token`'s next `count` requests 429.
    public func throttle(_ token: String, count: Int) {
        shared.state.withLockedValue { $0.throttled[token] = count }
    }
}

public struct StandInError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One HTTP/2 stream: one request, one answer.
final class APNsStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let shared: APNsStandIn.Shared
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(shared: APNsStandIn.Shared) {
        self.shared = shared
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body(var part):
            body.writeBuffer(&part)
        case .end:
            guard let head else { return }
            let (status, reason) = answer(head)
            var headers = HTTPHeaders()
            headers.add(name: "apns-id", value: UUID().uuidString)
            var payload = ByteBuffer()
            if let reason {
                headers.add(name: "content-type", value: "application/json")
                let timestamp = status == 410 ? #","timestamp":\#(Int64(shared.clock().timeIntervalSince1970 * 1000))"# : ""
                payload.writeString(#"{"reason":"\#(reason)"\#(timestamp)}"#)
            }
            headers.add(name: "content-length", value: String(payload.readableBytes))
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: .init(statusCode: status), headers: headers))), promise: nil)
            if payload.readableBytes > 0 {
                context.write(wrapOutboundOut(.body(.byteBuffer(payload))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    /// The status and Apple's reason word for this request; records it.
    private func answer(_ head: HTTPRequestHead) -> (Int, String?) {
        let configuration = shared.configuration
        let prefix = "/3/device/"
        let token = head.uri.hasPrefix(prefix) ? String(head.uri.dropFirst(prefix.count)) : ""
        let (status, reason) = shared.state.withLockedValue { state -> (Int, String?) in
            state.snapshot.requests += 1
            let result = check(head, token: token, configuration: configuration, state: &state)
            if !token.isEmpty {
                state.snapshot.answered[token, default: 0] += 1
                if result.0 == 200 {
                    state.snapshot.delivered[token, default: 0] += 1
                }
            }
            if let reason = result.1 {
                state.snapshot.refusals[reason, default: 0] += 1
            }
            return result
        }
        if configuration.record {
            var headers: [String: String] = [:]
            for (name, value) in head.headers {
                headers[name.lowercased()] = value
            }
            let recorded = APNsStandIn.Recorded(
                deviceToken: token, headers: headers, payload: Array(body.readableBytesView), status: status, reason: reason)
            shared.state.withLockedValue { $0.snapshot.recorded.append(recorded) }
        }
        return (status, reason)
    }

    private func check(_ head: HTTPRequestHead, token: String, configuration: APNsStandIn.Configuration, state: inout APNsStandIn.State) -> (Int, String?) {
        guard head.method == .POST else { return (405, "MethodNotAllowed") }
        guard !token.isEmpty, !token.contains("/") else { return (404, "BadPath") }

        // The provider token.
        guard let authorization = head.headers.first(name: "authorization") else { return (403, "MissingProviderToken") }
        guard authorization.lowercased().hasPrefix("bearer ") else { return (403, "InvalidProviderToken") }
        let jwt = String(authorization.dropFirst(7))
        let iat: Int64
        if let known = state.verified[jwt] {
            iat = known
        } else {
            guard let claims = verify(jwt, configuration: configuration) else { return (403, "InvalidProviderToken") }
            if let last = state.lastNewIat, claims - last < configuration.minimumTokenRenewalSeconds {
                return (429, "TooManyProviderTokenUpdates")
            }
            state.verified[jwt] = claims
            state.lastNewIat = claims
            state.snapshot.providerTokens += 1
            iat = claims
        }
        let now = Int64(shared.clock().timeIntervalSince1970)
        if now - iat > 3600 { return (403, "ExpiredProviderToken") }
        if iat > now + 60 { return (403, "InvalidProviderToken") }

        // The headers.
        guard let topic = head.headers.first(name: "apns-topic") else { return (400, "MissingTopic") }
        guard configuration.topics.contains(topic) else { return (400, "TopicDisallowed") }
        let pushType = head.headers.first(name: "apns-push-type")
        guard pushType == "alert" || pushType == "background" else { return (400, "InvalidPushType") }
        let priority = head.headers.first(name: "apns-priority")
        guard priority == "10" || priority == "5" else { return (400, "BadPriority") }
        if pushType == "background" && priority != "5" { return (400, "BadPriority") }
        if let collapse = head.headers.first(name: "apns-collapse-id"), collapse.utf8.count > 64 { return (400, "BadCollapseId") }
        if let expiration = head.headers.first(name: "apns-expiration"), Int64(expiration) == nil { return (400, "BadExpirationDate") }

        // The payload.
        guard body.readableBytes > 0 else { return (400, "PayloadEmpty") }
        guard body.readableBytes <= 4096 else { return (413, "PayloadTooLarge") }
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
            let aps = object["aps"] as? [String: Any]
        else { return (400, "BadPayload") }
        if pushType == "background" && (aps["alert"] != nil || (aps["content-available"] as? Int) != 1) { return (400, "BadPayload") }
        if pushType == "alert" && aps["alert"] == nil { return (400, "BadPayload") }

        // The device.
        guard token.utf8.allSatisfy({ $0 < 128 && (Character(Unicode.Scalar($0)).isHexDigit) }) else { return (400, "BadDeviceToken") }
        if configuration.unregistered.contains(token) { return (410, "Unregistered") }
        if configuration.badTokens.contains(token) { return (400, "BadDeviceToken") }
        if configuration.otherTopicTokens.contains(token) { return (400, "DeviceTokenNotForTopic") }
        if let left = state.throttled[token], left > 0 {
            state.throttled[token] = left - 1
            return (429, "TooManyRequests")
        }
        if let left = state.failing[token], left > 0 {
            state.failing[token] = left - 1
            return (500, "InternalServerError")
        }
        return (200, nil)
    }

    /// The `iat` of a provider token whose header, claims and ES256 signature are right; nil otherwise.
    private func verify(_ jwt: String, configuration: APNsStandIn.Configuration) -> Int64? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Self.base64URLDecoded(parts[0]), let claimsData = Self.base64URLDecoded(parts[1]),
            let signatureData = Self.base64URLDecoded(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any],
            header["alg"] as? String == "ES256", header["kid"] as? String == configuration.keyID,
            claims["iss"] as? String == configuration.teamID,
            let iat = (claims["iat"] as? Int).flatMap({ Int64(exactly: $0) }),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
            configuration.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
        else { return nil }
        return iat
    }

    static func base64URLDecoded(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
