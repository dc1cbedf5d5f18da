import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// Where APNs is and how the sender talks to it.
public struct APNsConfiguration: Sendable {
    /// Apple's two services: tokens of apps built for development work only in Sandbox.
    public enum Environment: String, Sendable, CaseIterable {
        case production
        case sandbox

        /// Apple's host for this environment.
        public var baseURL: String {
            switch self {
            case .production: "https://api.push.apple.com"
            case .sandbox: "https://api.sandbox.push.apple.com"
            }
        }
    }

    public var environment: Environment
    /// The `https://host[:port]` requests go to: the environment's host unless set (a stand-in, a proxy).
    public var baseURL: String
    /// HTTP/2 connections to keep; requests are multiplexed over them, as many at once on each as APNs
    /// allows (it announces 1000).
    public var connections: Int
    /// Devices in flight at once over all connections.
    public var maximumConcurrentSends: Int
    public var retry: PushRetryPolicy
    /// For a connection to be set up (TLS included), and for one request until its answer's head.
    public var timeout: Duration
    /// TLS for the connections; nil for the system's trust roots. Tests give one trusting their authority.
    public var tls: TLSConfiguration?

    public init(
        environment: Environment, baseURL: String? = nil, connections: Int = 2, maximumConcurrentSends: Int = 1000,
        retry: PushRetryPolicy = PushRetryPolicy(), timeout: Duration = .seconds(10), tls: TLSConfiguration? = nil
    ) {
        self.environment = environment
        self.baseURL = baseURL ?? environment.baseURL
        self.connections = min(max(connections, 1), 16)
        self.maximumConcurrentSends = max(maximumConcurrentSends, 1)
        self.retry = retry
        self.timeout = timeout
        self.tls = tls
    }
}

/// Sends notifications to Apple devices through APNs over HTTP/2 with token authentication.
///
/// AsyncHTTPClient negotiates HTTP/2 by ALPN and multiplexes every request to one host over one connection,
/// as many streams at once as the server announces; the sender keeps `connections` clients, so as many
/// connections, and spreads devices over them. Call `shutdown()` when done.
public final class APNsSender: PushSender {
    public var service: PushService { .apns }
    public let configuration: APNsConfiguration
    /// The provider token, shareable with other senders of the same key (Production and Sandbox).
    public let tokens: APNsTokens
    private let clients: [HTTPClient]
    private let observer: any PushObserver

    /// The answers that mean the token will never work again.
    static let deadReasons: Set<String> = ["BadDeviceToken", "Unregistered", "DeviceTokenNotForTopic"]

    /// - Parameter eventLoopGroup: where the connections run; AsyncHTTPClient's shared group by default.
    public init(
        tokens: APNsTokens, configuration: APNsConfiguration, observer: any PushObserver = NoPushObserver(),
        eventLoopGroup: any EventLoopGroup = HTTPClient.defaultEventLoopGroup
    ) throws(APNsConfigurationError) {
        guard let url = URL(string: configuration.baseURL), url.scheme == "https", url.host != nil,
            url.path.isEmpty || url.path == "/", url.query == nil
        else { throw .baseURL(configuration.baseURL) }
        self.tokens = tokens
        var configuration = configuration
        if configuration.baseURL.hasSuffix("/") {
            configuration.baseURL.removeLast()
        }
        self.configuration = configuration
        self.observer = observer
        var http = HTTPClient.Configuration()
        http.tlsConfiguration = configuration.tls
        http.httpVersion = .automatic
        http.decompression = .disabled
        http.timeout.connect = PushHTTP.timeAmount(configuration.timeout)
        http.connectionPool.idleTimeout = .minutes(10)
        clients = (0..<configuration.connections).map { _ in HTTPClient(eventLoopGroup: eventLoopGroup, configuration: http) }
    }

    /// Closes the connections. Sends that are still running fail.
    public func shutdown() async throws {
        for client in clients {
            try await client.shutdown()
        }
    }

    public func send(_ message: PushMessage, to devices: [PushDevice]) async throws(PushMessageError) -> [PushResult] {
        let payload = try APNsPayload(message)
        var headers = HTTPHeaders()
        headers.add(name: "apns-push-type", value: payload.pushType)
        headers.add(name: "apns-priority", value: payload.priority)
        headers.add(name: "apns-expiration", value: payload.expiration)
        if let collapseID = payload.collapseID {
            headers.add(name: "apns-collapse-id", value: collapseID)
        }
        headers.add(name: "content-type", value: "application/json")
        let body = ByteBuffer(bytes: payload.body)
        let common = headers
        return await fanOut(devices, limit: configuration.maximumConcurrentSends, service: .apns, observer: observer) { index, device in
            await self.deliver(body, headers: common, to: device, client: self.clients[index % self.clients.count])
        }
    }

    private func deliver(_ body: ByteBuffer, headers: HTTPHeaders, to device: PushDevice, client: HTTPClient) async -> PushResult {
        let clock = ContinuousClock()
        let start = clock.now
        func result(_ outcome: PushOutcome, _ attempts: Int) -> PushResult {
            PushResult(device: device, outcome: outcome, attempts: attempts, latency: clock.now - start)
        }
        guard Self.isDeviceToken(device.token) else {
            return result(.deadToken(reason: "BadDeviceToken"), 0)
        }
        guard Self.isTopic(device.app) else {
            return result(.failed(reason: "the app '\(device.app)' is not a bundle id usable as an APNs topic", status: nil), 0)
        }
        var request = HTTPClientRequest(url: configuration.baseURL + "/3/device/" + device.token)
        request.method = .POST
        request.headers = headers
        request.headers.add(name: "apns-topic", value: device.app)
        request.body = .bytes(body)

        var attempts = 0
        var renewedToken = false
        var retries = 0
        while true {
            attempts += 1
            let jwt = tokens.current()
            request.headers.replaceOrAdd(name: "authorization", value: "bearer " + jwt)
            let status: Int
            let reason: String?
            let retryAfter: Duration?
            do {
                let response = try await client.execute(request, deadline: .now() + PushHTTP.timeAmount(configuration.timeout))
                let answer = try await response.body.collect(upTo: 16 * 1024)
                status = Int(exactly: response.status.code) ?? 0
                reason = Self.reason(in: answer)
                retryAfter = PushHTTP.retryAfter(response.headers)
            } catch {
                retries += 1
                guard retries < configuration.retry.maximumAttempts else {
                    return result(.failed(reason: "no answer from APNs (\(PushHTTP.describe(error)))", status: nil), attempts)
                }
                try? await Task.sleep(for: configuration.retry.delay(afterAttempt: retries, retryAfter: nil))
                continue
            }
            switch status {
            case 200:
                return result(.sent, attempts)
            case 410:
                return result(.deadToken(reason: reason ?? "Unregistered"), attempts)
            case 400 where Self.isDead(reason):
                return result(.deadToken(reason: reason ?? "BadDeviceToken"), attempts)
            case 403 where reason == "ExpiredProviderToken" && !renewedToken:
                renewedToken = true
                tokens.rejected(jwt)
                continue
            case 429, 500...599:
                retries += 1
                guard retries < configuration.retry.maximumAttempts else {
                    return result(.failed(reason: "APNs answered \(status) \(reason ?? "") \(retries) times", status: status), attempts)
                }
                try? await Task.sleep(for: configuration.retry.delay(afterAttempt: retries, retryAfter: retryAfter))
            default:
                return result(.failed(reason: reason ?? "HTTP \(status)", status: status), attempts)
            }
        }
    }

    /// Whether a 400's reason says the token will never work.
    static func isDead(_ reason: String?) -> Bool {
        guard let reason else { return false }
        return deadReasons.contains(reason)
    }

    /// APNs's error word (`{"reason": "BadDeviceToken"}`): letters only, at most 64.
    static func reason(in body: ByteBuffer) -> String? {
        guard body.readableBytes > 0,
            let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
            let reason = object["reason"] as? String, !reason.isEmpty, reason.utf8.count <= 64,
            reason.unicodeScalars.allSatisfy({ $0.isASCII && $0.properties.isAlphabetic })
        else { return nil }
        return reason
    }

    /// A device token is hexadecimal (64 digits today; longer ones are allowed for).
    static func isDeviceToken(_ token: String) -> Bool {
        let count = token.utf8.count
        return count >= 16 && count <= 200 && token.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 70) || ($0 >= 97 && $0 <= 102) }
    }

    /// A bundle id, maybe with `.voip`-style suffixes: letters, digits, `.`, `-`, `_`.
    static func isTopic(_ topic: String) -> Bool {
        !topic.isEmpty && topic.utf8.count <= 255
            && topic.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 46 || $0 == 45 || $0 == 95 }
    }
}
