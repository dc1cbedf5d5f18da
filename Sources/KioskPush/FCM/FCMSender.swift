import AsyncHTTPClient
import Foundation
import KioskGoogleAuth
import NIOCore
import NIOHTTP1

/// Where FCM is and how the sender talks to it.
public struct FCMConfiguration: Sendable {
    public static let defaultBaseURL = "https://fcm.googleapis.com"

    /// The Firebase project the apps are in (the service account key file's `project_id`, usually).
    public var projectID: String
    /// Google's host unless set (a stand-in).
    public var baseURL: String
    /// Devices in flight at once.
    public var maximumConcurrentSends: Int
    public var retry: PushRetryPolicy
    /// For one request until its answer's head.
    public var timeout: Duration

    public init(
        projectID: String, baseURL: String = FCMConfiguration.defaultBaseURL, maximumConcurrentSends: Int = 200,
        retry: PushRetryPolicy = PushRetryPolicy(), timeout: Duration = .seconds(10)
    ) {
        self.projectID = projectID
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.maximumConcurrentSends = max(maximumConcurrentSends, 1)
        self.retry = retry
        self.timeout = timeout
    }
}

/// Sends notifications to Android devices through Firebase Cloud Messaging's HTTP v1 API
/// (`POST /v1/projects/{project}/messages:send`), authorized by a service account's access token.
public final class FCMSender: PushSender {
    public var service: PushService { .fcm }
    public let configuration: FCMConfiguration
    private let tokens: GoogleAccessTokens
    private let httpClient: HTTPClient
    private let observer: any PushObserver
    private let url: String

    /// FCM's limit on a message's notification and data.
    static let maximumBytes = 4096

    /// - Parameters:
    ///   - tokens: access tokens for `GoogleAccessTokens.firebaseMessagingScope`.
    ///   - httpClient: owned by the caller, who shuts it down.
    public init(
        tokens: GoogleAccessTokens, configuration: FCMConfiguration, httpClient: HTTPClient = .shared,
        observer: any PushObserver = NoPushObserver()
    ) throws(FCMConfigurationError) {
        guard !configuration.projectID.isEmpty,
            configuration.projectID.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 122) || $0 == 45 })
        else { throw .projectID(configuration.projectID) }
        guard tokens.scope.split(separator: " ").contains(Substring(GoogleAccessTokens.firebaseMessagingScope)) else {
            throw .scope(tokens.scope)
        }
        guard let parsed = URL(string: configuration.baseURL), parsed.scheme == "https" || parsed.scheme == "http", parsed.host != nil else {
            throw .baseURL(configuration.baseURL)
        }
        self.tokens = tokens
        self.configuration = configuration
        self.httpClient = httpClient
        self.observer = observer
        url = configuration.baseURL + "/v1/projects/" + configuration.projectID + "/messages:send"
    }

    public func send(_ message: PushMessage, to devices: [PushDevice]) async throws(PushMessageError) -> [PushResult] {
        let fields = try FCMRequest.Message(message)
        return await fanOut(devices, limit: configuration.maximumConcurrentSends, service: .fcm, observer: observer) { _, device in
            await self.deliver(fields, to: device)
        }
    }

    private func deliver(_ fields: FCMRequest.Message, to device: PushDevice) async -> PushResult {
        let clock = ContinuousClock()
        let start = clock.now
        func result(_ outcome: PushOutcome, _ attempts: Int) -> PushResult {
            PushResult(device: device, outcome: outcome, attempts: attempts, latency: clock.now - start)
        }
        var message = fields
        message.token = device.token
        message.android.restrictedPackageName = device.app.isEmpty ? nil : device.app
        guard let body = try? JSONEncoder().encode(FCMRequest(message: message)) else {
            return result(.failed(reason: "the message could not be written as JSON", status: nil), 0)
        }
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json; charset=UTF-8")
        request.body = .bytes(ByteBuffer(bytes: body))

        var attempts = 0
        var retries = 0
        var renewedToken = false
        while true {
            attempts += 1
            let accessToken: String
            do {
                accessToken = try await tokens.accessToken()
            } catch {
                return result(.failed(reason: "no FCM access token: \(error)", status: nil), attempts)
            }
            request.headers.replaceOrAdd(name: "authorization", value: "Bearer " + accessToken)
            let status: Int
            let answer: ByteBuffer
            let retryAfter: Duration?
            do {
                let response = try await httpClient.execute(request, deadline: .now() + PushHTTP.timeAmount(configuration.timeout))
                answer = try await response.body.collect(upTo: 64 * 1024)
                status = Int(exactly: response.status.code) ?? 0
                retryAfter = PushHTTP.retryAfter(response.headers)
            } catch {
                retries += 1
                guard retries < configuration.retry.maximumAttempts else {
                    return result(.failed(reason: "no answer from FCM (\(PushHTTP.describe(error)))", status: nil), attempts)
                }
                try? await Task.sleep(for: configuration.retry.delay(afterAttempt: retries, retryAfter: nil))
                continue
            }
            if status == 200 {
                return result(.sent, attempts)
            }
            let error = FCMError(answer)
            switch status {
            case 404 where error.code == "UNREGISTERED":
                return result(.deadToken(reason: "UNREGISTERED"), attempts)
            case 400 where error.onToken:
                return result(.deadToken(reason: error.code ?? "INVALID_ARGUMENT"), attempts)
            case 401 where !renewedToken:
                renewedToken = true
                await tokens.invalidate(accessToken)
            case 429, 500...599:
                retries += 1
                guard retries < configuration.retry.maximumAttempts else {
                    return result(.failed(reason: "FCM answered \(status) \(error.word) \(retries) times", status: status), attempts)
                }
                try? await Task.sleep(for: configuration.retry.delay(afterAttempt: retries, retryAfter: retryAfter))
            default:
                return result(.failed(reason: "FCM answered \(status) \(error.word)", status: status), attempts)
            }
        }
    }
}

/// The body of `messages:send`.
struct FCMRequest: Encodable {
    var message: Message

    struct Message: Encodable, Sendable {
        var token = ""
        var notification: [String: String]?
        var data: [String: String]?
        var android: Android

        /// The message without its token and package, checked against FCM's size limit.
        init(_ message: PushMessage) throws(PushMessageError) {
            try message.validate()
            if let alert = message.alert {
                var notification = ["title": alert.title, "body": alert.body]
                if let image = alert.imageURL {
                    notification["image"] = image
                }
                self.notification = notification
            }
            data = message.data.isEmpty ? nil : message.data
            // Seconds left, within FCM's four weeks; an unreadable time counts as none left.
            let ttl = message.expiration.flatMap { Int(exactly: $0.timeIntervalSinceNow.rounded(.up)) }.map { min(max($0, 0), 2_419_200) } ?? 0
            android = Android(collapseKey: message.collapseID, priority: message.alert != nil ? "HIGH" : "NORMAL", ttl: "\(ttl)s")
            struct Sized: Encodable {
                let notification: [String: String]?
                let data: [String: String]?
            }
            let size = (try? JSONEncoder().encode(Sized(notification: notification, data: data)).count) ?? Int.max
            guard size <= FCMSender.maximumBytes else {
                throw .payloadTooLarge(service: .fcm, bytes: size, limit: FCMSender.maximumBytes)
            }
        }
    }

    struct Android: Encodable, Sendable {
        var collapseKey: String?
        var priority: String
        var ttl: String
        var restrictedPackageName: String?

        enum CodingKeys: String, CodingKey {
            case collapseKey = "collapse_key"
            case priority
            case ttl
            case restrictedPackageName = "restricted_package_name"
        }
    }
}

/// What FCM's error answer says: `error.details[].errorCode` (the FcmError), `error.status`, and whether a
/// field violation names the token.
struct FCMError {
    var code: String?
    var status: String?
    var onToken = false

    var word: String { code ?? status ?? "" }

    init(_ body: ByteBuffer) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
            let error = object["error"] as? [String: Any]
        else { return }
        status = Self.word(error["status"])
        for detail in error["details"] as? [[String: Any]] ?? [] {
            if let code = Self.word(detail["errorCode"]) {
                self.code = code
            }
            for violation in detail["fieldViolations"] as? [[String: Any]] ?? [] where (violation["field"] as? String) == "message.token" {
                onToken = true
            }
        }
        if code == "INVALID_ARGUMENT", let message = error["message"] as? String, message.contains("registration token") {
            onToken = true
        }
    }

    /// A machine word: capitals, digits and `_`, at most 64.
    private static func word(_ value: Any?) -> String? {
        guard let text = value as? String, !text.isEmpty, text.utf8.count <= 64,
            text.utf8.allSatisfy({ ($0 >= 65 && $0 <= 90) || ($0 >= 48 && $0 <= 57) || $0 == 95 })
        else { return nil }
        return text
    }
}

/// An FCM setting that cannot be used. `description` says what to fix.
public enum FCMConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    case projectID(String)
    case scope(String)
    case baseURL(String)

    public var description: String {
        switch self {
        case .projectID(let id): "the Firebase project id '\(id)' is not one (lower-case letters, digits and '-'): take project_id from the service account key file"
        case .scope(let scope): "the access tokens are for '\(scope)': FCM needs \(GoogleAccessTokens.firebaseMessagingScope)"
        case .baseURL(let url): "the FCM base URL '\(url)' is not an http(s) URL"
        }
    }
}
