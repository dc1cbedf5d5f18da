import KioskModels

// How both stores read their columns back into the domain's values, where a stored value could be one
// the domain does not know.

extension Edition {
    /// An edition as stored: an unreadable creation day reads as 1970-01-01.
    package init(id: Int, publicationID: Int, name: String, storedCreatedOn: String) {
        self.init(id: id, publicationID: publicationID, name: name,
                  createdOn: IssueDate(storedCreatedOn) ?? IssueDate(daysSinceEpoch: 0))
    }
}

extension TariffLine {
    /// A tariff line as stored: an unknown access reads as `subscribers`, the stricter one.
    package init(appKey: String, editionID: Int, order: Int, storedAccess: String) {
        self.init(appKey: appKey, editionID: editionID, order: order, access: LineAccess(rawValue: storedAccess) ?? .subscribers)
    }
}

extension BundleInfo {
    /// An issue's bundle as stored: none without a path; a missing size or hash reads as 0 or empty.
    package init?(storedPath: String?, size: Int64?, sha256: String?) {
        guard let storedPath else { return nil }
        self.init(path: storedPath, size: size ?? 0, sha256: sha256 ?? "")
    }
}

extension Account {
    /// An account as stored; nil for an unknown kind. An unknown role reads as the kind's default, and an
    /// unreadable scope as an empty one (nothing in scope).
    package init?(storedKind: String, username: String, passwordHash: String, role: String?, scope: String?) {
        guard let kind = AccountKind(rawValue: storedKind) else { return nil }
        self.init(kind: kind, username: username, passwordHash: passwordHash, role: role.flatMap(OperatorRole.init),
                  scope: scope.map { PublisherScope(stored: $0) ?? PublisherScope() })
    }
}

extension StoreProduct {
    /// A product as stored: kind and scope by name, editions as `1,2,3`. An unknown kind reads as `issue`
    /// and an unknown scope as `period` (each grants the least), an unreadable edition is left out.
    package init(appKey: String, id: String, appleID: String?, googleID: String?, storedKind: String,
                 storedEditions: String, credits: Int, storedScope: String) {
        var storeIDs: [Storefront: String] = [:]
        if let appleID { storeIDs[.apple] = appleID }
        if let googleID { storeIDs[.google] = googleID }
        self.init(appKey: appKey, id: id, storeIDs: storeIDs, kind: ProductKind(rawValue: storedKind) ?? .issue,
                  editions: storedEditions.split(separator: ",").compactMap { Int($0, radix: 10) }, credits: credits,
                  scope: SubscriptionScope(rawValue: storedScope) ?? .period)
    }

    /// `editions` as stored.
    package var storedEditions: String { editions.map(String.init).joined(separator: ",") }
}
