import Crypto
import AsyncHTTPClient
import Foundation
import KioskGoogleAuth
import KioskModels
import Synchronization

/// The stores' checks behind the domain's `StoreVerifying`: what an app sends and what a store posts is
/// verified with `AppleSignedDataVerifier`, the Play Developer API and `PubSubPushVerifier`, then told in
/// Kiosk's terms (`StoreFacts`).
///
/// Errors are the domain's: a proof the store does not vouch for (bad signature, another app, an unknown
/// token, a pending payment) is `PurchaseError.unverifiable` with the reason in words; a store that could
/// not be asked (Google unreachable, slow, 5xx, our credentials refused) is `PurchaseError.storeUnavailable`.
///
/// Times: a payment's `paidAt` and periods are Unix seconds, `signedAt` Unix milliseconds. Apple signs each
/// word (`signedDate`); Google answers with the purchase as it stands, so a Google fetch is signed "now":
/// the newest fetch is the newest word.
public struct StoreChecks: StoreVerifying {
    /// The stores an app sells in: its App Store identity, its Google Play package name. nil: not in that store.
    public struct App: Sendable, Hashable {
        public var apple: AppleStoreIdentity?
        public var googlePackageName: String?
        /// Whether Google Play license testers' purchases (no money moves) are taken.
        public var googleAcceptsTestPurchases: Bool

        public init(apple: AppleStoreIdentity? = nil, googlePackageName: String? = nil, googleAcceptsTestPurchases: Bool = false) {
            self.apple = apple
            self.googlePackageName = googlePackageName
            self.googleAcceptsTestPurchases = googleAcceptsTestPurchases
        }
    }

    /// How Google Play is asked: the service account's tokens and the Play Developer API's address (one API
    /// client is made per app's package), and the verifier of Pub/Sub pushes (nil: no notifications taken).
    public struct GooglePlay: Sendable {
        public var tokens: GoogleAccessTokens
        public var apiBaseURL: String
        public var httpClient: HTTPClient
        public var timeout: Duration
        public var pushVerifier: PubSubPushVerifier?

        /// - Parameters:
        ///   - httpClient: owned by the caller, who shuts it down.
        ///   - timeout: for each API call, answer included.
        public init(
            tokens: GoogleAccessTokens,
            apiBaseURL: String = PlayDeveloperAPI.defaultBaseURL,
            httpClient: HTTPClient = .shared,
            timeout: Duration = .seconds(10),
            pushVerifier: PubSubPushVerifier? = nil
        ) {
            self.tokens = tokens
            self.apiBaseURL = apiBaseURL
            self.httpClient = httpClient
            self.timeout = timeout
            self.pushVerifier = pushVerifier
        }
    }

    /// The largest notification body read: an App Store notification (three JWS with their chains) is
    /// about 20 KB, a Pub/Sub push under 2 KB.
    public static let defaultNotificationBodyLimit = 64 * 1024

    /// How long a period a Google subscription's payment is taken to pay for when Google gives no start.
    static let assumedPeriod: Int64 = 30 * 86_400

    private let apps: [String: App]
    private let apple: AppleSignedDataVerifier?
    private let playAPIs: [String: PlayDeveloperAPI]
    private let pushVerifier: PubSubPushVerifier?
    private let googleConfigured: Bool
    private let notificationBodyLimit: Int
    private let clock: @Sendable () -> Date
    private let settled = SettledPurchases()

    /// - Parameters:
    ///   - apps: by app key, the stores each app sells in.
    ///   - apple: the verifier of App Store signed data; nil when no root is configured (every App Store
    ///     proof is then refused).
    ///   - google: how Google Play is asked; nil when no service account is configured (every Google Play
    ///     proof is then refused).
    ///   - notificationBodyLimit: the largest notification body read, in bytes.
    ///   - clock: now, for the time of Google's answers; for tests.
    public init(
        apps: [String: App],
        apple: AppleSignedDataVerifier?,
        google: GooglePlay?,
        notificationBodyLimit: Int = StoreChecks.defaultNotificationBodyLimit,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.apps = apps
        self.apple = apple
        var playAPIs: [String: PlayDeveloperAPI] = [:]
        if let google {
            for (appKey, app) in apps {
                guard let packageName = app.googlePackageName else { continue }
                playAPIs[appKey] = PlayDeveloperAPI(
                    packageName: packageName, tokens: google.tokens, baseURL: google.apiBaseURL,
                    httpClient: google.httpClient, timeout: google.timeout)
            }
        }
        self.playAPIs = playAPIs
        self.pushVerifier = google?.pushVerifier
        self.googleConfigured = google != nil
        self.notificationBodyLimit = notificationBodyLimit
        self.clock = clock
    }

    // MARK: - StoreVerifying

    public func verify(_ evidence: PurchaseEvidence, appKey: String, kind: ProductKind) async throws -> StoreFacts {
        switch evidence {
        case .apple(let signedTransaction):
            let (verifier, identity) = try appleChecks(appKey)
            let transaction: AppleTransaction
            do throws(PurchaseVerificationError) {
                transaction = try await verifier.transaction(signedTransaction, for: identity)
            } catch {
                throw PurchaseError.unverifiable(error.message)
            }
            if transaction.quantity != 1 {
                throw PurchaseError.unverifiable("the App Store reports \(transaction.quantity) bought at once; Kiosk sells one at a time "
                                                 + "(buy with a quantity of 1)")
            }
            if transaction.originalTransactionId.isEmpty || transaction.transactionId.isEmpty {
                throw PurchaseError.unverifiable("the transaction has no transaction id")
            }
            return Self.facts(transaction, subscription: kind == .subscription)

        case .google(let productID, let token):
            let api = try playAPI(appKey)
            if kind == .subscription {
                let purchase = try await Self.asking { try await api.subscription(token: token) }
                remember(purchase, appKey: appKey, token: token)
                return try accepted(Self.facts(purchase, token: token, productID: productID, now: clock()), appKey: appKey)
            }
            let purchase = try await Self.asking { try await api.product(productID, token: token) }
            remember(purchase, appKey: appKey, token: token)
            try Self.checkOneTime(purchase, productID: productID)
            switch Self.facts(purchase, token: token, productID: productID, now: clock()) {
            case .facts(let facts): return try accepted(facts, appKey: appKey)
            case .pending: throw PurchaseError.unverifiable("the purchase is pending payment")
            case .unknownState(let state):
                throw PurchaseError.unverifiable("Google Play reports the purchase in state \(state), which this server does not know")
            }
        }
    }

    public func notice(store: Storefront, appKey: String, body: [UInt8], authorization: String?) async throws -> StoreNotice {
        switch store {
        case .apple: try await appleNotice(appKey: appKey, body: body)
        case .google: try await googleNotice(appKey: appKey, body: body, authorization: authorization)
        }
    }

    public func confirm(_ facts: StoreFacts, appKey: String, kind: ProductKind) async throws {
        guard facts.store == .google else { return }
        let api = try playAPI(appKey)
        // Nothing granted, nothing to settle: a word about grace or a hold, a revoked payment, a voided order.
        guard let payment = facts.payment, !payment.revoked, !facts.storeProductID.isEmpty else { return }
        let token = facts.originalID
        switch kind {
        case .subscription:
            guard !settled.contains(.acknowledged, appKey: appKey, token: token) else { return }
            try await Self.asking { try await api.acknowledgeSubscription(facts.storeProductID, token: token) }
            settled.insert(.acknowledged, appKey: appKey, token: token)
        case .issue, .credits:
            // Both are consumables: consuming lets the reader buy the product again, and acknowledges it.
            guard !settled.contains(.consumed, appKey: appKey, token: token) else { return }
            try await Self.asking { try await api.consumeProduct(facts.storeProductID, token: token) }
            settled.insert(.consumed, appKey: appKey, token: token)
        }
    }

    // MARK: - The App Store

    private func appleChecks(_ appKey: String) throws(PurchaseError) -> (AppleSignedDataVerifier, AppleStoreIdentity) {
        guard let identity = apps[appKey]?.apple else {
            throw .unverifiable("app \(appKey) does not sell in the App Store")
        }
        guard let apple else {
            throw .unverifiable("this server is not set up to verify App Store purchases (no Apple root certificate)")
        }
        return (apple, identity)
    }

    private func appleNotice(appKey: String, body: [UInt8]) async throws -> StoreNotice {
        let (verifier, identity) = try appleChecks(appKey)
        let notification: AppleNotification
        do throws(PurchaseVerificationError) {
            notification = try await verifier.notification(body: body, limit: notificationBodyLimit, for: identity)
        } catch {
            throw PurchaseError.unverifiable(error.message)
        }
        var notice = StoreNotice(
            store: .apple, id: notification.notificationUUID, type: notification.notificationType.rawValue,
            subtype: notification.subtype?.rawValue ?? "", facts: nil)
        guard notification.notificationType != .test, let data = notification.data, let transaction = data.transaction else {
            return notice
        }
        // Several bought at once, which a registration refuses: recorded, and it changes nothing.
        guard transaction.quantity == 1 else { return notice }
        var facts = Self.facts(transaction, subscription: transaction.type == .autoRenewableSubscription)
        if let renewal = data.renewalInfo {
            guard renewal.originalTransactionId == transaction.originalTransactionId else {
                throw PurchaseError.unverifiable(
                    "the notification's renewal info is about another subscription than its transaction")
            }
            facts.grace = GraceFact(until: renewal.gracePeriodExpiresDate.map(Self.seconds), signedAt: Self.milliseconds(renewal.signedDate))
            if facts.accountToken == nil {
                facts.accountToken = renewal.appAccountToken?.uuidString.lowercased()
            }
        }
        notice.facts = facts
        return notice
    }

    /// A verified transaction in Kiosk's terms; `subscription`: its purchase and expiry dates are a paid period.
    static func facts(_ transaction: AppleTransaction, subscription: Bool) -> StoreFacts {
        let paidAt = seconds(transaction.purchaseDate)
        let period = subscription ? transaction.expiresDate.map { PaidPeriod(start: paidAt, end: seconds($0)) } : nil
        let payment = StorePayment(
            id: transaction.transactionId, paidAt: paidAt, period: period, revoked: transaction.revocationDate != nil,
            price: transaction.isFree ? 0 : StorePayment.plausible(transaction.price), currency: transaction.currency,
            signedAt: milliseconds(transaction.signedDate))
        return StoreFacts(
            store: .apple, originalID: transaction.originalTransactionId, storeProductID: transaction.productId,
            environment: transaction.environment.rawValue, accountToken: transaction.appAccountToken?.uuidString.lowercased(),
            payment: payment)
    }

    // MARK: - Google Play

    /// `facts` when the app takes them: a license tester's purchase only where the app accepts them.
    private func accepted(_ facts: StoreFacts, appKey: String) throws(PurchaseError) -> StoreFacts {
        if facts.environment == "Test", apps[appKey]?.googleAcceptsTestPurchases != true {
            throw .unverifiable("a Google Play license tester's purchase (no money moved); "
                                + "set apps[].store.google.accept_test_purchases to take them on this server")
        }
        return facts
    }

    private func playAPI(_ appKey: String) throws(PurchaseError) -> PlayDeveloperAPI {
        guard apps[appKey]?.googlePackageName != nil else {
            throw .unverifiable("app \(appKey) does not sell in Google Play")
        }
        guard googleConfigured, let api = playAPIs[appKey] else {
            throw .unverifiable("this server is not set up to verify Google Play purchases (no service account)")
        }
        return api
    }

    private func googleNotice(appKey: String, body: [UInt8], authorization: String?) async throws -> StoreNotice {
        let api = try playAPI(appKey)
        guard let pushVerifier else {
            throw PurchaseError.unverifiable("this server is not set up to receive Google Play notifications (no push audience)")
        }
        _ = try await Self.asking { try await pushVerifier.verify(authorization: authorization) }
        let message: PubSubPushMessage
        let notification: GoogleDeveloperNotification
        do throws(PurchaseVerificationError) {
            message = try PubSubPushMessage(body: Data(body), maximumSize: notificationBodyLimit)
            notification = try message.developerNotification(expectedPackageName: api.packageName)
        } catch {
            throw PurchaseError.unverifiable(error.message)
        }
        let eventTime = notification.eventTime
        // The message id with what it says: a bearer replayed with another body under an id Pub/Sub has yet to
        // use cannot make the genuine message a duplicate.
        let noticeID = Self.noticeID(message)
        switch notification.kind {
        case .subscription(let subscription):
            let token = subscription.purchaseToken
            let purchase = try await Self.asking { try await api.subscription(token: token) }
            remember(purchase, appKey: appKey, token: token)
            var facts = Self.facts(purchase, token: token, productID: subscription.subscriptionID, now: clock())
            if subscription.type == .revoked {
                facts.payment?.revoked = true
            }
            // A tester's purchase where the app takes none is recorded and changes nothing.
            return StoreNotice(store: .google, id: noticeID, type: Self.name(of: subscription.type),
                               facts: try? accepted(facts, appKey: appKey))

        case .oneTimeProduct(let product):
            let purchase = try await Self.asking { try await api.product(product.sku, token: product.purchaseToken) }
            remember(purchase, appKey: appKey, token: product.purchaseToken)
            var facts: StoreFacts?
            // Pending, or a state not known here: nothing to apply yet; Google notifies again when it settles.
            // A purchase registration would refuse (a tester's where the app takes none, several at once, another
            // product) is recorded and changes nothing.
            if case .facts(let known) = Self.facts(purchase, token: product.purchaseToken, productID: product.sku, now: clock()),
               (try? Self.checkOneTime(purchase, productID: product.sku)) != nil {
                facts = try? accepted(known, appKey: appKey)
            }
            return StoreNotice(store: .google, id: noticeID, type: Self.name(of: product.type), facts: facts)

        case .voidedPurchase(let voided):
            // The order Google took back, once Google's own list of voided purchases says so: the push's bearer
            // vouches for who sent it, not for what it says. The notification names neither the product nor
            // the environment.
            let since = eventTime.addingTimeInterval(-Self.voidedListingSlack)
            let listed = try await Self.asking {
                try await api.voidedPurchase(token: voided.purchaseToken, orderID: voided.orderID, since: since, now: clock())
            }
            guard let listed else {
                throw PurchaseError.unverifiable(
                    "Google Play lists no voided purchase with this token and order \(voided.orderID.prefix(64)): "
                        + "the notification is not applied (Pub/Sub will deliver it again)")
            }
            let voidedAt = listed.voidedTime ?? eventTime
            let payment = StorePayment(
                id: voided.orderID, paidAt: Self.seconds(voidedAt), revoked: true, signedAt: Self.milliseconds(voidedAt))
            let facts = StoreFacts(store: .google, originalID: voided.purchaseToken, storeProductID: "", environment: "", payment: payment)
            let subtype: String =
                switch voided.refundType {
                case 1?: "REFUND_TYPE_FULL_REFUND"
                case 2?: "REFUND_TYPE_QUANTITY_BASED_PARTIAL_REFUND"
                case let other?: "REFUND_TYPE_\(other)"
                case nil: ""
                }
            return StoreNotice(store: .google, id: noticeID, type: "VOIDED_PURCHASE", subtype: subtype, facts: facts)

        case .test:
            return StoreNotice(store: .google, id: noticeID, type: "TEST_NOTIFICATION", facts: nil)

        case .other(let name):
            return StoreNotice(store: .google, id: noticeID, type: name.isEmpty ? "UNKNOWN_NOTIFICATION" : name, facts: nil)
        }
    }

    /// A Pub/Sub message's id joined to a digest of its data, as its notice is stored and told apart from others.
    static func noticeID(_ message: PubSubPushMessage) -> String {
        let digest = SHA256.hash(data: message.data)
        return message.messageID + "." + Base64URL.encode(Array(digest).prefix(9))
    }

    /// Refuses a one-time purchase Google describes as another product's, or as several bought at once.
    static func checkOneTime(_ purchase: GoogleProductPurchase, productID: String) throws(PurchaseError) {
        if let answered = purchase.productID, !answered.isEmpty, answered != productID {
            throw .unverifiable("Google Play says this purchase is of \(answered), not \(productID)")
        }
        if let quantity = purchase.quantity, quantity != 1 {
            throw .unverifiable("Google Play reports \(quantity) bought at once; Kiosk sells one at a time "
                                + "(keep multi-quantity off for this product in the Play Console)")
        }
    }

    /// How long before a voided notification's event time its purchase is looked for in Google's list.
    static let voidedListingSlack: TimeInterval = 86_400

    /// A subscription as Google describes it now, in Kiosk's terms, signed `now`.
    ///
    /// Its latest order pays for [start, expiry) while the subscription is active, canceled (paid until it
    /// expires) or expired; in a grace period that order is not paid yet, and the grace lasts until the
    /// expiry; in any other state (on hold, paused, pending) nothing is paid and there is no grace. A free
    /// trial's order is free: its period opens issues while it lasts and keeps none.
    /// `productID` picks the line item when the subscription has several.
    static func facts(_ purchase: GoogleSubscriptionPurchase, token: String, productID: String?, now: Date) -> StoreFacts {
        let line = productID.flatMap { id in purchase.lineItems.first { $0.productID == id } } ?? purchase.lineItems.first
        let expiry = (line?.expiryTime ?? purchase.expiryTime).map(seconds)
        let signedAt = milliseconds(now)
        var payment: StorePayment?
        var grace = GraceFact(until: nil, signedAt: signedAt)
        switch purchase.state {
        case .active, .canceled, .expired:
            let start = purchase.startTime.map(seconds)
            // Each renewal's order moves the expiry on: a time derived from it keeps the orders in the order paid
            // (Google's renewal order ids, `…..9`, `…..10`, do not sort as text).
            let paidAt: Int64 =
                if let expiry { max(start ?? .min, expiry &- assumedPeriod) } else { start ?? seconds(now) }
            let period = expiry.map { end in PaidPeriod(start: min(start ?? end &- assumedPeriod, end), end: end) }
            let orderID = purchase.latestOrderID.flatMap { $0.isEmpty ? nil : $0 } ?? token
            // A free trial's order opens issues while it lasts but pays for none.
            let price = line?.isFreeTrial == true ? 0 : StorePayment.plausible(line?.price)
            payment = StorePayment(id: orderID, paidAt: paidAt, period: period, price: price, currency: line?.currency,
                                   signedAt: signedAt)
        case .inGracePeriod:
            grace = GraceFact(until: expiry, signedAt: signedAt)
        default:
            break
        }
        return StoreFacts(
            store: .google, originalID: token, storeProductID: line?.productID ?? productID ?? "",
            environment: purchase.isTestPurchase ? "Test" : "Production",
            accountToken: accountToken(purchase.obfuscatedExternalAccountID), payment: payment, grace: grace)
    }

    enum ProductFacts: Equatable {
        case facts(StoreFacts)
        case pending
        case unknownState(Int)
    }

    /// A one-time product's purchase as Google describes it now, in Kiosk's terms, signed `now`: its order,
    /// revoked once canceled (refunded); a pending payment or an unknown state is no fact yet.
    static func facts(_ purchase: GoogleProductPurchase, token: String, productID: String, now: Date) -> ProductFacts {
        switch purchase.purchaseState {
        case .purchased, .canceled: break
        case .pending: return .pending
        default: return .unknownState(purchase.purchaseState.rawValue)
        }
        let orderID = purchase.orderID.flatMap { $0.isEmpty ? nil : $0 } ?? token
        let payment = StorePayment(
            id: orderID, paidAt: seconds(purchase.purchaseTime ?? now), revoked: purchase.purchaseState == .canceled,
            signedAt: milliseconds(now))
        return .facts(StoreFacts(
            store: .google, originalID: token, storeProductID: productID,
            environment: purchase.isTestPurchase ? "Test" : "Production",
            accountToken: accountToken(purchase.obfuscatedExternalAccountID), payment: payment))
    }

    /// Google's name of a subscription notification's type.
    static func name(of type: GoogleDeveloperNotification.SubscriptionNotificationType) -> String {
        switch type.rawValue {
        case 1: "SUBSCRIPTION_RECOVERED"
        case 2: "SUBSCRIPTION_RENEWED"
        case 3: "SUBSCRIPTION_CANCELED"
        case 4: "SUBSCRIPTION_PURCHASED"
        case 5: "SUBSCRIPTION_ON_HOLD"
        case 6: "SUBSCRIPTION_IN_GRACE_PERIOD"
        case 7: "SUBSCRIPTION_RESTARTED"
        case 8: "SUBSCRIPTION_PRICE_CHANGE_CONFIRMED"
        case 9: "SUBSCRIPTION_DEFERRED"
        case 10: "SUBSCRIPTION_PAUSED"
        case 11: "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED"
        case 12: "SUBSCRIPTION_REVOKED"
        case 13: "SUBSCRIPTION_EXPIRED"
        case 19: "SUBSCRIPTION_PRICE_CHANGE_UPDATED"
        case 20: "SUBSCRIPTION_PENDING_PURCHASE_CANCELED"
        case 22: "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED"
        case let other: "SUBSCRIPTION_NOTIFICATION_\(other)"
        }
    }

    /// Google's name of a one-time product notification's type.
    static func name(of type: GoogleDeveloperNotification.OneTimeProductNotificationType) -> String {
        switch type.rawValue {
        case 1: "ONE_TIME_PRODUCT_PURCHASED"
        case 2: "ONE_TIME_PRODUCT_CANCELED"
        case let other: "ONE_TIME_PRODUCT_NOTIFICATION_\(other)"
        }
    }

    /// The account token the app gave Google (`obfuscatedAccountId`), lowercased as Kiosk keeps UUIDs.
    static func accountToken(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text.lowercased()
    }

    /// What Google said, remembered so that `confirm` does not settle again what Google says is settled.
    private func remember(_ purchase: GoogleSubscriptionPurchase, appKey: String, token: String) {
        if purchase.acknowledgementState == .acknowledged {
            settled.insert(.acknowledged, appKey: appKey, token: token)
        }
    }

    private func remember(_ purchase: GoogleProductPurchase, appKey: String, token: String) {
        if purchase.consumptionState == .consumed {
            settled.insert(.consumed, appKey: appKey, token: token)
        }
    }

    // MARK: - Helpers

    /// `call`, its errors in the domain's terms.
    static func asking<T>(_ call: () async throws -> T) async throws -> T {
        do {
            return try await call()
        } catch let error as PurchaseVerificationError {
            throw PurchaseError.unverifiable(error.message)
        } catch let error as GooglePlayUnavailable {
            throw PurchaseError.storeUnavailable(error.message)
        } catch let error as PurchaseError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            throw PurchaseError.storeUnavailable("Google Play could not be asked (\(type(of: error)))")
        }
    }

    /// Unix seconds, rounded down.
    static func seconds(_ date: Date) -> Int64 {
        clamped(date.timeIntervalSince1970.rounded(.down))
    }

    /// Unix milliseconds, rounded to the nearest (the stores' milliseconds come back exactly).
    static func milliseconds(_ date: Date) -> Int64 {
        clamped((date.timeIntervalSince1970 * 1000).rounded())
    }

    private static func clamped(_ value: Double) -> Int64 {
        if let exact = Int64(exactly: value) { return exact }
        return value < 0 ? .min : .max
    }
}

/// Google purchases known to be acknowledged or consumed, by app and token. Bounded: past `capacity`
/// entries it starts again empty, which only costs a call Google answers "already done".
final class SettledPurchases: Sendable {
    enum Kind: UInt8 { case acknowledged, consumed }

    private struct Key: Hashable {
        let kind: Kind
        let appKey: String
        let token: String
    }

    let capacity: Int
    private let keys = Mutex(Set<Key>())

    init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
    }

    func contains(_ kind: Kind, appKey: String, token: String) -> Bool {
        keys.withLock { $0.contains(Key(kind: kind, appKey: appKey, token: token)) }
    }

    func insert(_ kind: Kind, appKey: String, token: String) {
        keys.withLock { keys in
            if keys.count >= capacity { keys.removeAll(keepingCapacity: true) }
            keys.insert(Key(kind: kind, appKey: appKey, token: token))
        }
    }
}
