/// Who a purchase belongs to.
public enum PurchaseHolder: Sendable, Hashable {
    /// Known from a store's notification before any app registered it.
    case unclaimed
    /// A signed-in reader: it opens on every device and in the web kiosk.
    case reader(userID: Int)
    /// An anonymous device (`HeldPurchase.devices` lists it first); it moves to the reader who signs in there.
    case device(deviceKey: String)
}

/// Who registers or restores a purchase: an identity of an app.
public struct PurchaseClaimant: Sendable, Hashable {
    /// 0 when anonymous.
    public var userID: Int
    public var deviceKey: String
    /// The account tokens this identity may have given the store: the reader's and this device's.
    public var accountTokens: Set<String>
    public init(userID: Int, deviceKey: String, accountTokens: Set<String>) {
        self.userID = userID; self.deviceKey = deviceKey; self.accountTokens = accountTokens
    }
}

/// A store purchase as Kiosk keeps it: what it grants (`purchase`), who holds it, and the store's ledger
/// of payments it was derived from.
public struct HeldPurchase: Sendable, Hashable {
    public var appKey: String
    public var purchase: StorePurchase
    public var holder: PurchaseHolder
    /// The account token the store recorded with it (lowercase UUID); nil when none.
    public var accountToken: String?
    /// The devices an anonymous purchase opens on: the buyer's, then those it was restored on.
    public var devices: [String]
    public var environment: String
    /// Every payment the stores reported, by time paid.
    public var payments: [StorePayment]
    /// When the grace period was last reported (Unix milliseconds); 0: never.
    public var graceSignedAt: Int64
    /// Revoked by an operator in the console (audited); a store's reversal does not undo it.
    public var revokedByOperator: Bool
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(appKey: String, purchase: StorePurchase, holder: PurchaseHolder = .unclaimed, accountToken: String? = nil,
                devices: [String] = [], environment: String, payments: [StorePayment] = [], graceSignedAt: Int64 = 0,
                revokedByOperator: Bool = false, createdAt: Int64, updatedAt: Int64) {
        self.appKey = appKey; self.purchase = purchase; self.holder = holder; self.accountToken = accountToken
        self.devices = devices; self.environment = environment; self.payments = payments; self.graceSignedAt = graceSignedAt
        self.revokedByOperator = revokedByOperator; self.createdAt = createdAt; self.updatedAt = updatedAt
        refresh()
    }

    /// A purchase first heard of through `facts`, of `product`.
    public init(appKey: String, facts: StoreFacts, product: StoreProduct, at time: Int64) {
        self.init(appKey: appKey, purchase: StorePurchase(store: facts.store, originalID: facts.originalID, product: product),
                  environment: facts.environment, createdAt: time, updatedAt: time)
        apply(facts, at: time)
    }

    /// Takes in what a store said. Of two words about one payment, or about the grace, the later signed
    /// wins whatever order they arrive in; a payment is never counted twice. Returns whether anything changed.
    @discardableResult
    public mutating func apply(_ facts: StoreFacts, at time: Int64) -> Bool {
        let before = self
        if accountToken == nil, let token = facts.accountToken { accountToken = token }
        if let payment = facts.payment {
            if let index = payments.firstIndex(where: { $0.id == payment.id }) {
                if payment.signedAt > payments[index].signedAt {
                    var payment = payment
                    // Google answers a lookup with the purchase as it stands, with no word of a refund: only its
                    // voided-purchase notice says so, and nothing reverses that.
                    if purchase.store == .google && payments[index].revoked { payment.revoked = true }
                    payments[index] = payment
                    payments.sort { ($0.paidAt, $0.id) < ($1.paidAt, $1.id) }
                }
            } else {
                payments.append(payment)
                payments.sort { ($0.paidAt, $0.id) < ($1.paidAt, $1.id) }
            }
        }
        if let grace = facts.grace, grace.signedAt > graceSignedAt {
            purchase.graceUntil = grace.until
            graceSignedAt = grace.signedAt
        }
        refresh()
        guard self != before else { return false }
        updatedAt = time
        return true
    }

    /// Derives what it grants from the ledger: periods of payments not revoked; a one-time product revoked
    /// once its payment is, a subscription once its latest is, or by an operator.
    mutating func refresh() {
        purchase.paidPeriods = payments.filter { !$0.revoked && !$0.isFree }.compactMap(\.period)
        purchase.freePeriods = payments.filter { !$0.revoked && $0.isFree }.compactMap(\.period)
        let byStore: Bool
        switch purchase.product.kind {
        // A one-time product has one order: any word of its refund (under whatever order id) refunds it.
        case .issue, .credits: byStore = payments.contains(where: \.revoked)
        case .subscription: byStore = payments.last?.revoked ?? false
        }
        purchase.revoked = byStore || revokedByOperator
    }

    /// The stand-in product of a purchase known only from a refund: it grants nothing (`isKnownOnlyFromARefund`).
    public static func unknownProduct(appKey: String) -> StoreProduct {
        StoreProduct(appKey: appKey, id: "", kind: .issue)
    }

    /// Whether the store told of it only by a refund, before any app registered it.
    public var isKnownOnlyFromARefund: Bool { purchase.product.id.isEmpty }

    /// Completes a purchase known only from a refund with the product an app registered it as.
    public mutating func adopt(_ product: StoreProduct, at time: Int64) {
        purchase.product = product
        refresh()
        updatedAt = time
    }

    /// Revokes or restores it by hand (the console).
    public mutating func setRevokedByOperator(_ revoked: Bool, at time: Int64) {
        revokedByOperator = revoked
        refresh()
        updatedAt = time
    }

    /// Whether `claimant` may use it now, without changing anything.
    public func isHeld(by claimant: PurchaseClaimant) -> Bool {
        switch holder {
        case .unclaimed: false
        case .reader(let userID): userID == claimant.userID
        case .device: devices.contains(claimant.deviceKey)
        }
    }

    /// Lets `claimant` hold or open it, by the rules of whose a purchase is:
    /// - an unclaimed one goes to the first claimant, if its account token (when it has one) is the claimant's;
    /// - a reader's stays the reader's: anyone else is refused;
    /// - a device's moves to the reader who signs in on the device that bought it (not on one it was restored
    ///   on: whoever restored a copy of the transaction must not take it from its buyer), and opens on up to
    ///   `deviceLimit` devices; beyond, the claimant is asked to sign in.
    /// Throws `PurchaseError.anotherAccount`; returns whether anything changed.
    @discardableResult
    public mutating func claim(by claimant: PurchaseClaimant, deviceLimit: Int, at time: Int64) throws(PurchaseError) -> Bool {
        let before = self
        switch holder {
        case .unclaimed:
            if let accountToken, !claimant.accountTokens.contains(accountToken) {
                throw .anotherAccount("this purchase was made for another account; sign in with the account that bought it")
            }
            if claimant.userID != 0 {
                holder = .reader(userID: claimant.userID)
            } else {
                holder = .device(deviceKey: claimant.deviceKey)
                devices = [claimant.deviceKey]
            }
        case .reader(let userID):
            guard userID == claimant.userID else {
                throw .anotherAccount("this purchase belongs to another reader; sign in with the account that bought it")
            }
        case .device(let buyer):
            if claimant.userID != 0 && claimant.deviceKey == buyer {
                holder = .reader(userID: claimant.userID)
                devices = []
            } else if !devices.contains(claimant.deviceKey) {
                guard devices.count < deviceLimit else {
                    throw .anotherAccount("this purchase is already restored on \(deviceLimit) devices; sign in to read it on more")
                }
                devices.append(claimant.deviceKey)
            }
        }
        guard self != before else { return false }
        updatedAt = time
        return true
    }

    /// The device binding released by an operator: it no longer opens on `deviceKey`.
    public mutating func release(deviceKey: String, at time: Int64) -> Bool {
        guard case .device = holder, let index = devices.firstIndex(of: deviceKey) else { return false }
        devices.remove(at: index)
        holder = devices.first.map { .device(deviceKey: $0) } ?? .unclaimed
        updatedAt = time
        return true
    }

    /// Revenue by currency, in thousandths: payments not revoked.
    public var revenue: [String: Int64] {
        var totals: [String: Int64] = [:]
        for payment in payments where !payment.revoked {
            guard let price = payment.price, let currency = payment.currency else { continue }
            totals[currency, default: 0] &+= price
        }
        return totals
    }
}
