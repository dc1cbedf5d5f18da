extension [StoreProduct] {
    /// The first rule the products of `catalogue`'s apps break: ids the stores accept, used once per app
    /// and store; a pack's size; a subscription's editions among its app's lines, a scope only for one.
    public func validate(in catalogue: Catalogue) throws(CatalogueProblem) {
        var seen = Set<[String]>()
        var counts: [String: Int] = [:]
        for product in self {
            let index = counts[product.appKey, default: 0]
            counts[product.appKey] = index + 1
            func problem(_ field: String, _ rule: String) -> CatalogueProblem {
                CatalogueProblem(.product(appKey: product.appKey, index: index), field: field,
                                 subject: "product \(product.id) of app \(product.appKey)", rule: rule)
            }
            for store in Storefront.allCases {
                let id = product.storeID(in: store)
                guard StoreProductID.isValid(id) else {
                    throw problem(product.storeIDs[store] == nil ? "id" : "\(store.rawValue)_id", StoreProductID.rule)
                }
                guard seen.insert([product.appKey, store.rawValue, id]).inserted else {
                    throw problem(product.storeIDs[store] == nil ? "id" : "\(store.rawValue)_id",
                                  "\"\(id)\" is sold twice by app \(product.appKey) in the \(store.rawValue) store")
                }
            }
            switch product.kind {
            case .credits:
                guard (1...1_000).contains(product.credits) else { throw problem("credits", "a pack must hold 1 to 1000 issues") }
            case .issue, .subscription:
                guard product.credits == 0 else { throw problem("credits", "only a credits product holds credits") }
            }
            if product.kind == .subscription {
                let offered = Set(catalogue.tariffLines.filter { $0.appKey == product.appKey }.map(\.editionID))
                for edition in product.editions where !offered.contains(edition) {
                    throw problem("editions", "edition \(edition) is not one of app \(product.appKey)'s lines")
                }
            } else {
                guard product.editions.isEmpty else { throw problem("editions", "only a subscription lists editions") }
                guard product.scope == .period else { throw problem("scope", "only a subscription has a scope") }
            }
        }
    }
}

/// A product id as both stores accept it: 1 to 150 of ASCII letters, digits, `.` and `_`.
public enum StoreProductID {
    public static func isValid(_ id: String) -> Bool {
        (1...150).contains(id.utf8.count) && id.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
        }
    }
    public static let rule = "must be 1-150 characters of A-Z, a-z, 0-9, '.' and '_' (what both stores accept)"
}
