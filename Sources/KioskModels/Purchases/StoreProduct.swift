/// The two stores an app sells through.
public enum Storefront: String, Sendable, Hashable, Codable, CaseIterable {
    case apple
    case google
}

/// What a store product sells (`tipus` on the wire).
public enum ProductKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// One issue, chosen by the reader when the purchase is registered; one consumable product serves every issue.
    case issue
    /// A pack of issues (consumable): each credit is spent on an issue the reader picks, for good.
    case credits
    /// An auto-renewable subscription to the editions it lists.
    case subscription
}

/// Which issues a subscription opens (`abast` on the wire).
public enum SubscriptionScope: String, Sendable, Hashable, Codable, CaseIterable {
    /// Issues dated inside a paid period, as a paper subscription: kept after it lapses.
    case period
    /// Every issue of its editions, while it is active (or in its grace period).
    case all
}

/// A product an app sells in the stores, and what it grants.
public struct StoreProduct: Sendable, Hashable {
    public var appKey: String
    /// The product id, the same in both stores unless `storeIDs` names another for one of them.
    public var id: String
    /// A store's own id for this product when it is not `id`.
    public var storeIDs: [Storefront: String]
    public var kind: ProductKind
    /// A subscription's editions; empty: the app's subscriber lines.
    public var editions: [Int]
    /// A pack's number of issues (`credits` products only).
    public var credits: Int
    /// A subscription's scope.
    public var scope: SubscriptionScope

    public init(appKey: String, id: String, storeIDs: [Storefront: String] = [:], kind: ProductKind,
                editions: [Int] = [], credits: Int = 0, scope: SubscriptionScope = .period) {
        self.appKey = appKey; self.id = id; self.storeIDs = storeIDs; self.kind = kind
        self.editions = editions; self.credits = credits; self.scope = scope
    }

    /// How a sync's report and the audit log name it: `cat.quiosc.pack5 (credits 5)`.
    public var summary: String {
        var words = [kind.rawValue]
        switch kind {
        case .credits: words.append(String(credits))
        case .subscription:
            words.append(scope.rawValue)
            if !editions.isEmpty { words.append("editions " + editions.map(String.init).joined(separator: " ")) }
        case .issue: break
        }
        words += storeIDs.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
        return "\(id) (\(words.joined(separator: " ")))"
    }

    /// The id `store` knows this product by.
    public func storeID(in store: Storefront) -> String { storeIDs[store] ?? id }

    /// The editions a subscription covers in an app whose subscriber lines are `subscriberEditions`.
    public func coveredEditions(subscriberEditions: [Int]) -> Set<Int> {
        kind == .subscription ? Set(editions.isEmpty ? subscriberEditions : editions) : []
    }
}

extension [StoreProduct] {
    /// The product `store` sells as `storeProductID`, if the app sells it.
    public func product(store: Storefront, storeProductID: String) -> StoreProduct? {
        first { $0.storeID(in: store) == storeProductID }
    }
}
