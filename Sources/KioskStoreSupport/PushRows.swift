import KioskModels

/// A push registration's columns as both engines store them: the editions as their ids in order,
/// comma-separated (empty: every edition the device may read).
package enum PushRegistrationColumns {
    package static func editions(_ editions: [Int]) -> String {
        editions.sorted().map(String.init).joined(separator: ",")
    }

    /// Ids that are not numbers are left out.
    package static func editions(stored text: String) -> [Int] {
        text.split(separator: ",").compactMap { Int($0, radix: 10) }
    }

    /// A stored row read back; nil when its platform is not one this version knows.
    package static func registration(id: Int64, appKey: String, deviceKey: String, identityKey: String, userID: Int,
                                     platform: String, token: String, editions: String, language: String,
                                     createdAt: Int64, updatedAt: Int64) -> PushRegistration? {
        guard let platform = PushPlatform(rawValue: platform) else { return nil }
        return PushRegistration(id: id, appKey: appKey, deviceKey: deviceKey, identityKey: identityKey, userID: userID,
                                platform: platform, token: token, editions: Self.editions(stored: editions), language: language,
                                createdAt: createdAt, updatedAt: updatedAt)
    }

    /// The issue a fan-out's event reports, as the target query binds it; nil when it reports none (the
    /// fan-out then has nobody to notify).
    package static func issue(of event: KioskEvent) -> (edition: Int, date: String)? {
        PushAudience.issue(of: event).map { ($0.editionID, $0.date.description) }
    }
}

/// A push registration the database did not give back after storing it.
package enum PushStorageError: Error, CustomStringConvertible {
    case notStored

    package var description: String { "the push registration was not found right after it was stored" }
}
