import AsyncHTTPClient
import Foundation
import KioskGoogleAuth
import KioskIntegers
import NIOCore
import NIOHTTP1

/// The Play Developer API calls that check and settle an app's purchases, as one service account.
///
/// Errors: a purchase Google does not know or will not describe (HTTP 400, 404, 410) is a
/// `PurchaseVerificationError`; anything that says nothing about the purchase (Google unreachable, slow,
/// 5xx, 429, our credentials refused) is `GooglePlayUnavailable`.
public struct PlayDeveloperAPI: Sendable {
    public static let defaultBaseURL = "https://androidpublisher.googleapis.com"

    public let packageName: String
    public let baseURL: String
    private let tokens: GoogleAccessTokens
    private let httpClient: HTTPClient
    private let timeout: Duration

    /// - Parameters:
    ///   - packageName: the app whose purchases are asked about.
    ///   - baseURL: scheme and host (and port) of the API, without a trailing slash.
    ///   - httpClient: owned by the caller, who shuts it down.
    ///   - timeout: for each call, answer included.
    public init(
        packageName: String,
        tokens: GoogleAccessTokens,
        baseURL: String = Self.defaultBaseURL,
        httpClient: HTTPClient = .shared,
        timeout: Duration = .seconds(10)
    ) {
        self.packageName = packageName
        self.tokens = tokens
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.httpClient = httpClient
        self.timeout = timeout
    }

    /// `purchases.subscriptionsv2.get`.
    public func subscription(token: String) async throws -> GoogleSubscriptionPurchase {
        let answer = try await call(.GET, ["purchases", "subscriptionsv2", "tokens", token], what: "subscription")
        return try decode(GoogleSubscriptionPurchase.self, from: answer)
    }

    /// `purchases.products.get`.
    public func product(_ productID: String, token: String) async throws -> GoogleProductPurchase {
        let answer = try await call(.GET, ["purchases", "products", productID, "tokens", token], what: "product purchase")
        return try decode(GoogleProductPurchase.self, from: answer)
    }

    /// The voided purchase `purchases.voidedpurchases.list` lists for `token` and `orderID`, voided at or after
    /// `since` (Google keeps 30 days; an older time is moved up to 30 days ago); nil when Google lists none.
    /// Both kinds are asked for (`type=1`: one-time products and subscriptions), up to `maximumPages` pages of
    /// 1 000, newest last as Google orders them.
    public func voidedPurchase(token: String, orderID: String, since: Date, now: Date = Date(),
                               maximumPages: Int = 10) async throws -> GoogleVoidedPurchase? {
        let oldest = now.addingTimeInterval(-Self.voidedPurchasesKept + 60)
        let start = Int64(exactly: (max(since, oldest).timeIntervalSince1970 * 1000).rounded(.down)) ?? 0
        var query = [("startTime", String(start)), ("type", "1"), ("maxResults", "1000")]
        for _ in 0..<max(maximumPages, 1) {
            let answer = try await call(.GET, ["purchases", "voidedpurchases"], query: query, what: "list of voided purchases")
            let page = try decode(GoogleVoidedPurchases.self, from: answer)
            if let found = page.voidedPurchases.first(where: { $0.purchaseToken == token && $0.orderID == orderID }) {
                return found
            }
            guard let next = page.nextPageToken, !next.isEmpty else { return nil }
            query = query.filter { $0.0 != "token" } + [("token", next)]
        }
        return nil
    }

    /// How far back the Voided Purchases API lists.
    public static let voidedPurchasesKept: TimeInterval = 30 * 86_400

    /// `purchases.subscriptions.acknowledge`. A subscription already acknowledged counts as done: when Google
    /// answers 400 (as it does to a second acknowledgement), the subscription is read and the refusal stands
    /// only if it is still unacknowledged.
    public func acknowledgeSubscription(_ subscriptionID: String, token: String) async throws {
        try await settle(["purchases", "subscriptions", subscriptionID, "tokens", token], "acknowledge", "subscription") {
            try await subscription(token: token).acknowledgementState == .acknowledged
        }
    }

    /// `purchases.products.acknowledge`; an already acknowledged purchase counts as done, as above.
    public func acknowledgeProduct(_ productID: String, token: String) async throws {
        try await settle(["purchases", "products", productID, "tokens", token], "acknowledge", "product purchase") {
            try await product(productID, token: token).acknowledgementState == .acknowledged
        }
    }

    /// `purchases.products.consume`; an already consumed purchase counts as done, as above.
    public func consumeProduct(_ productID: String, token: String) async throws {
        try await settle(["purchases", "products", productID, "tokens", token], "consume", "product purchase") {
            try await product(productID, token: token).consumptionState == .consumed
        }
    }

    /// POSTs `action`; a 400 answer stands only when `isDone` says the purchase is not already settled.
    private func settle(
        _ segments: [String], _ action: String, _ what: String, isDone: () async throws -> Bool
    ) async throws {
        let answer = try await call(.POST, segments, action: action, what: what, settling: true)
        if answer.status == 400, try await !isDone() {
            throw PurchaseVerificationError(
                .malformed, "Google Play refuses to \(action) this \(what) of \(packageName) (\(GoogleHTTP.describe(answer)))")
        }
    }

    /// The URL of `segments` under the app, each segment percent-encoded, then `:action`.
    func url(_ segments: [String], action: String? = nil, query: [(String, String)] = []) -> String {
        var url = baseURL + "/androidpublisher/v3/applications/" + Self.encode(packageName)
        for segment in segments {
            url += "/" + Self.encode(segment)
        }
        if let action {
            url += ":" + action
        }
        for (index, (name, value)) in query.enumerated() {
            url += (index == 0 ? "?" : "&") + Self.encode(name) + "=" + Self.encode(value)
        }
        return url
    }

    /// A path segment with everything but RFC 3986's unreserved characters percent-encoded (UTF-8).
    static func encode(_ segment: String) -> String {
        var encoded = ""
        for byte in segment.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                encoded.unicodeScalars.append("%")
                encoded.unicodeScalars.append(hex[Int(widening: byte >> 4)])
                encoded.unicodeScalars.append(hex[Int(widening: byte & 0x0F)])
            }
        }
        return encoded
    }

    /// One call; `settling` returns a 400 answer to the caller instead of throwing.
    private func call(
        _ method: HTTPMethod, _ segments: [String], action: String? = nil, query: [(String, String)] = [], what: String,
        settling: Bool = false
    ) async throws -> GoogleHTTP.Answer {
        let endpoint = "the Play Developer API" + (action.map { " (\($0))" } ?? "")
        let bearer = try await tokens.accessToken()
        var request = HTTPClientRequest(url: url(segments, action: action, query: query))
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(bearer)")
        request.headers.add(name: "Accept", value: "application/json")
        if method == .POST {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: "{}"))
        }
        let answer = try await GoogleHTTP.send(request, with: httpClient, timeout: timeout, endpoint: endpoint)
        switch answer.status {
        case 200, 204:
            return answer
        case 400 where settling:
            return answer
        case 400, 404:
            throw PurchaseVerificationError(
                .unknownPurchase, "Google Play knows no such \(what) of \(packageName) (\(GoogleHTTP.describe(answer)))")
        case 410:
            throw PurchaseVerificationError(
                .unknownPurchase, "Google Play no longer describes this \(what): it ended too long ago (\(GoogleHTTP.describe(answer)))")
        case 401:
            await tokens.invalidate(bearer)
            throw GooglePlayUnavailable(status: 401, "\(endpoint) refused the access token (\(GoogleHTTP.describe(answer)))")
        case 403:
            throw GooglePlayUnavailable(
                status: 403,
                "\(endpoint) refused the service account for \(packageName) (\(GoogleHTTP.describe(answer))): "
                    + "grant it access in the Play Console")
        default:
            throw GooglePlayUnavailable(status: answer.status, "\(endpoint) answered \(GoogleHTTP.describe(answer))")
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, from answer: GoogleHTTP.Answer) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: answer.body)
        } catch {
            throw GooglePlayUnavailable(status: answer.status, "the Play Developer API's answer could not be read as a \(T.self)")
        }
    }
}
