import Foundation

extension KioskStore {
    /// Whether a purchase held by the reader (`userID` other than 0) or opening on the device grants `issue`.
    func purchasesGrant(_ issue: IssueRef, appKey: String, userID: Int, deviceKey: String, at time: Int64) async throws -> Bool {
        let held = try await purchases(appKey: appKey, userID: userID, deviceKey: deviceKey)
        guard !held.isEmpty else { return false }
        // A subscription listing no editions covers the app's subscriber lines: read them only then.
        var subscriberEditions: [Int] = []
        if held.contains(where: { $0.purchase.product.kind == .subscription && $0.purchase.product.editions.isEmpty }) {
            subscriberEditions = try await self.subscriberEditions(appKey: appKey)
        }
        return held.contains { $0.purchase.grants(issue, at: time, subscriberEditions: subscriberEditions) }
    }

    /// The editions the app sells to subscribers (its `subscribers` lines).
    func subscriberEditions(appKey: String) async throws -> [Int] {
        try await editionListings(appKey: appKey).map(\.offered.line).filter { $0.access == .subscribers }.map(\.editionID)
    }
}

/// Store purchases: what `getProductes`, `registrarCompra`, `restaurarCompres`, `bescanviarCredit` and the
/// stores' notifications mean, whatever the wire.
extension KioskService {
    // MARK: Entitlement

    /// The editions the app sells to subscribers (its `subscribers` lines).
    public func subscriberEditions(appKey: String) async throws -> [Int] {
        try await store.subscriberEditions(appKey: appKey)
    }

    /// Per edition, the last issue date the purchased subscriptions open (for `registrar`'s `fins`): a
    /// `period` one the last day paid (or in grace), kept after it lapses; an `all` one while it is active.
    func purchasedSubscriptions(appKey: String, userID: Int, deviceKey: String,
                                subscriberEditions: [Int]) async throws -> [Int: IssueDate] {
        let held = try await store.purchases(appKey: appKey, userID: userID, deviceKey: deviceKey)
        let now = clock.now
        var until: [Int: IssueDate] = [:]
        for purchase in held.map(\.purchase) where purchase.product.kind == .subscription && !purchase.revoked {
            let active = purchase.state(at: now) == .active
            if purchase.product.scope == .all && !active { continue }
            // Once lapsed, a `period` subscription keeps its paid periods only, not a free trial's.
            let end = active ? purchase.accessEnd : purchase.paidEnd
            guard end > 0 else { continue }
            let last = IssueDate(unixTime: end - 1)
            for edition in purchase.product.coveredEditions(subscriberEditions: subscriberEditions) {
                until[edition] = max(until[edition] ?? last, last)
            }
        }
        return until
    }

    // MARK: The app's calls

    /// `getProductes`: the identity's store account token (a lowercase UUID) and what the app sells.
    public func products(appKey: String, identityKey: String) async throws -> (accountToken: String, products: [StoreProduct]) {
        try await requireApp(appKey)
        let identity = try await trustedIdentity(appKey: appKey, deviceKey: nil, identityKey: identityKey)
        let token = identityKeys.storeAccountToken(appKey: appKey, deviceKey: identity.deviceKey, userID: identity.userID)
        return (token.uuidString.lowercased(), try await store.storeProducts(appKey: appKey))
    }

    /// `registrarCompra`: verifies a purchase with its store, binds it to the identity's reader (or device)
    /// and, for an `issue` product, to `issue`. Registering it again changes nothing and answers the same.
    public func registerPurchase(appKey: String, deviceKey: String, identityKey: String, evidence: PurchaseEvidence,
                                 issue: IssueRef?) async throws -> (Registration, HeldPurchase) {
        try await requireApp(appKey)
        let identity = try await trustedIdentity(appKey: appKey, deviceKey: deviceKey, identityKey: identityKey)
        if let issue, try await requirePublished(issue, appKey: appKey).line.access == .free {
            throw KioskError.invalidArgument(parameter: "edicio_id", problem: "edition \(issue.editionID) is free in this app: name an issue that is not")
        }
        let held = try await register(evidence, issue: issue, identity: identity)
        return (try await registration(of: identity), held)
    }

    /// `restaurarCompres`: registers each purchase a new device sends after "Restore purchases". Those the
    /// store does not vouch for, or that belong to another account, are left out; when none is restored
    /// the first refusal is the answer.
    public func restorePurchases(appKey: String, deviceKey: String, identityKey: String,
                                 evidence: [PurchaseEvidence]) async throws -> (Registration, [HeldPurchase]) {
        try await requireApp(appKey)
        let identity = try await trustedIdentity(appKey: appKey, deviceKey: deviceKey, identityKey: identityKey)
        guard evidence.count <= Self.restoreLimit else {
            throw KioskError.invalidArgument(
                parameter: "compres", problem: "\(evidence.count) purchases sent; at most \(Self.restoreLimit) a call: send the rest in another")
        }
        var restored: [HeldPurchase] = []
        var firstRefusal: (any Error)?
        for item in evidence {
            do {
                restored.append(try await register(item, issue: nil, identity: identity))
            } catch let error as PurchaseError {
                if case .storeUnavailable = error { throw error }
                firstRefusal = firstRefusal ?? error
            } catch let error as KioskError {
                if case .tooManyPurchaseChecks = error { throw error }
                firstRefusal = firstRefusal ?? error
            }
        }
        if restored.isEmpty, let firstRefusal { throw firstRefusal }
        return (try await registration(of: identity), restored)
    }

    /// At most this many purchases are restored by one call. StoreKit and Play Billing restore what is still
    /// owned (subscriptions, unconsumed purchases), a handful for a reader.
    public static let restoreLimit = 20

    /// `bescanviarCredit`: opens `issue` with one credit of the identity's oldest pack that has one left.
    /// An issue it may already open (a free line, a subscription, a purchase) costs nothing; the answer's
    /// purchase is then the pack that would have paid, if any.
    public func spendCredit(appKey: String, deviceKey: String, identityKey: String,
                            issue: IssueRef) async throws -> (Registration, HeldPurchase?) {
        try await requireApp(appKey)
        let identity = try await trustedIdentity(appKey: appKey, deviceKey: deviceKey, identityKey: identityKey)
        let offered = try await requirePublished(issue, appKey: appKey)
        let time = clock.now
        let held = try await store.purchases(appKey: appKey, userID: identity.userID, deviceKey: identity.deviceKey)
        let packs = held.filter { $0.purchase.product.kind == .credits && !$0.purchase.revoked }
        let subscriptions = identity.userID == 0 ? [] : try await store.subscriptions(userID: identity.userID)
        var alreadyOpen = Entitlement.withoutDemo(line: offered.line, subscriptions: subscriptions, issueDate: issue.date) != nil
        if !alreadyOpen {
            alreadyOpen = try await store.purchasesGrant(issue, appKey: appKey, userID: identity.userID, deviceKey: identity.deviceKey, at: time)
        }
        if alreadyOpen {
            let pack = packs.first { $0.purchase.issues.contains(issue) } ?? packs.first { $0.purchase.unspentCredits > 0 } ?? packs.first
            return (try await registration(of: identity), pack)
        }
        let claimant = claimant(identity)
        for pack in packs where pack.purchase.unspentCredits > 0 {
            // Spent under the store's lock: another device of the reader may have spent the last credit meanwhile.
            let spent = try await store.changePurchase(appKey: appKey, store: pack.purchase.store, originalID: pack.purchase.originalID,
                                                       recording: nil) { held -> HeldPurchase? in
                guard var current = held, current.isHeld(by: claimant) else { return nil }
                do { try current.purchase.spendCredit(on: issue) } catch { return nil }
                current.updatedAt = time
                held = current
                return current
            }
            if let spent = spent ?? nil {
                observer.creditSpent(appKey: appKey)
                return (try await registration(of: identity), spent)
            }
        }
        throw PurchaseError.noCreditLeft
    }

    // MARK: The stores' notifications

    /// What came of a store's notification.
    public enum NoticeOutcome: String, Sendable, Hashable {
        /// It changed a purchase.
        case applied
        /// Stored; it changed nothing (an older word, a test, a purchase Kiosk does not sell).
        case recorded
        /// Already had: dropped.
        case duplicate
    }

    /// A notification `store` posted for `appKey`: verified, stored with what it changes in one transaction,
    /// and dropped when it was already stored. Throws `PurchaseError.unverifiable` when it does not verify
    /// and `storeUnavailable` when the store could not be asked about it (the store then tries again).
    public func applyNotice(store kind: Storefront, appKey: String, body: [UInt8], authorization: String?) async throws -> NoticeOutcome {
        try await requireApp(appKey)
        let notice = try await stores.notice(store: kind, appKey: appKey, body: body, authorization: authorization)
        let time = clock.now
        var record = StoreNoticeRecord(store: kind, id: notice.id, appKey: appKey, type: notice.type, subtype: notice.subtype,
                                       originalID: notice.facts?.originalID ?? "", receivedAt: time, outcome: "recorded")
        guard var facts = notice.facts else {
            let outcome: NoticeOutcome = try await store.recordNotice(record) ? .recorded : .duplicate
            observer.storeNoticeApplied(appKey: appKey, store: kind, outcome: outcome)
            return outcome
        }
        let product = facts.storeProductID.isEmpty
            ? nil : try await store.storeProducts(appKey: appKey).product(store: kind, storeProductID: facts.storeProductID)
        if let product, product.kind != .subscription { facts.payment?.period = nil }
        record.outcome = Self.describe(facts)
        let recorded = facts
        let changed = try await store.changePurchase(appKey: appKey, store: kind, originalID: facts.originalID,
                                                     recording: record) { held -> HeldPurchase? in
            if held == nil {
                // A refund of a purchase no app has registered yet (Google's voided notice names no product) is
                // kept as a purchase known only from its refund, which the registration then completes.
                guard let product = product ?? (recorded.payment?.revoked == true ? HeldPurchase.unknownProduct(appKey: appKey) : nil)
                else { return nil }
                held = HeldPurchase(appKey: appKey, facts: recorded, product: product, at: time)
                return held
            }
            return held?.apply(recorded, at: time) == true ? held : nil
        }
        let outcome: NoticeOutcome
        switch changed {
        case nil: outcome = .duplicate
        case .some(nil): outcome = .recorded
        case .some(let held?):
            outcome = .applied
            if recorded.payment?.revoked != true { await confirm(recorded, held: held) }
        }
        observer.storeNoticeApplied(appKey: appKey, store: kind, outcome: outcome)
        return outcome
    }

    static func describe(_ facts: StoreFacts) -> String {
        var words: [String] = []
        if let payment = facts.payment { words.append("payment \(payment.id)" + (payment.revoked ? " revoked" : "")) }
        if let grace = facts.grace { words.append(grace.until.map { "grace until \($0)" } ?? "no grace") }
        return words.isEmpty ? "recorded" : words.joined(separator: ", ")
    }

    // MARK: Rules shared by the calls

    /// The identity behind `identityKey`, issued by this server for the app (and, when given, this device).
    func trustedIdentity(appKey: String, deviceKey: String?, identityKey: String) async throws -> DeviceIdentity {
        guard !identityKey.isEmpty, let identity = try await store.identity(key: identityKey), identity.appKey == appKey,
              deviceKey.map({ $0 == identity.deviceKey }) ?? true,
              identity.imported || identityKeys.isValid(identityKey, appKey: appKey, deviceKey: identity.deviceKey, userID: identity.userID)
        else { throw KioskError.invalidIdentity }
        return identity
    }

    /// The app's offer of the issue's edition, when the issue is published; refused as `getEdicio` refuses.
    @discardableResult
    func requirePublished(_ issue: IssueRef, appKey: String) async throws -> OfferedEdition {
        guard let offered = try await store.offeredEdition(appKey: appKey, editionID: issue.editionID) else {
            throw KioskError.editionNotOffered(editionID: issue.editionID, appKey: appKey)
        }
        guard try await store.issueContents(editionID: issue.editionID, date: issue.date) != nil else {
            throw KioskError.noPublishedIssue(editionID: issue.editionID, date: issue.date)
        }
        return offered
    }

    func claimant(_ identity: DeviceIdentity) -> PurchaseClaimant {
        var tokens: Set<String> = [identityKeys.storeAccountToken(appKey: identity.appKey, deviceKey: identity.deviceKey, userID: 0)
            .uuidString.lowercased()]
        if identity.userID != 0 {
            tokens.insert(identityKeys.storeAccountToken(appKey: identity.appKey, deviceKey: identity.deviceKey, userID: identity.userID)
                .uuidString.lowercased())
        }
        return PurchaseClaimant(userID: identity.userID, deviceKey: identity.deviceKey, accountTokens: tokens)
    }

    func registration(of identity: DeviceIdentity) async throws -> Registration {
        let user = identity.userID == 0 ? nil : try await store.user(id: identity.userID)
        return try await registration(identity: identity, user: user)
    }

    /// Verifies, binds and stores one purchase; confirms it to its store once stored.
    private func register(_ evidence: PurchaseEvidence, issue: IssueRef?, identity: DeviceIdentity) async throws -> HeldPurchase {
        let appKey = identity.appKey
        if let wait = purchaseCheckBudget.take(client: RequestClient.address, now: Double(clock.now)) {
            throw KioskError.tooManyPurchaseChecks(retryAfterSeconds: wait)
        }
        let products = try await store.storeProducts(appKey: appKey)
        var kind = ProductKind.subscription
        if case .google(let productID, _) = evidence {
            guard let product = products.product(store: .google, storeProductID: productID) else {
                throw PurchaseError.unverifiable("product \(productID) is not sold by app \(appKey) in the google store")
            }
            kind = product.kind
        }
        var facts = try await stores.verify(evidence, appKey: appKey, kind: kind)
        guard let product = products.product(store: evidence.store, storeProductID: facts.storeProductID) else {
            throw PurchaseError.unverifiable("product \(facts.storeProductID) is not sold by app \(appKey) in the \(evidence.store.rawValue) store")
        }
        if product.kind != .subscription { facts.payment?.period = nil }
        let claimant = claimant(identity), limit = anonymousDeviceLimit, time = clock.now, verified = facts
        let held = try await store.changePurchase(appKey: appKey, store: evidence.store, originalID: facts.originalID,
                                                  recording: nil) { held throws -> HeldPurchase in
            var current = held ?? HeldPurchase(appKey: appKey, facts: verified, product: product, at: time)
            if current.isKnownOnlyFromARefund { current.adopt(product, at: time) }
            current.apply(verified, at: time)
            try current.claim(by: claimant, deviceLimit: limit, at: time)
            if current.purchase.product.kind == .issue && current.purchase.issues.isEmpty {
                guard let issue else {
                    throw KioskError.invalidArgument(parameter: "edicio_id", problem: "an issue purchase must name the issue it buys (edicio_id and data)")
                }
                current.purchase.issues = [issue]
            }
            held = current
            return current
        }
        guard let held else { throw PurchaseError.unverifiable("the purchase could not be stored") }
        observer.purchaseRegistered(appKey: appKey, store: evidence.store, kind: product.kind)
        if !held.purchase.revoked { await confirm(verified, held: held) }
        return held
    }

    /// Tells the store a stored grant happened. A failure is only reported: the next registration,
    /// restore or notification of the purchase confirms it again.
    private func confirm(_ facts: StoreFacts, held: HeldPurchase) async {
        do {
            try await stores.confirm(facts, appKey: held.appKey, kind: held.purchase.product.kind)
        } catch {
            observer.storeConfirmationFailed(appKey: held.appKey, store: facts.store, error: "\(error)")
        }
    }
}
