/// A subscriber account (*usuari*). `id` 0 is reserved for "anonymous".
public struct User: Sendable, Hashable {
    public var id: Int
    public var username: String
    public var name: String
    public var email: String
    /// A slow hash, never a plain password: bcrypt, or until the first sign-in a legacy one (`StoredPasswordHash`).
    public var passwordHash: String
    public init(id: Int, username: String, name: String, email: String, passwordHash: String) {
        self.id = id; self.username = username; self.name = name; self.email = email; self.passwordHash = passwordHash
    }
}

/// A user's right to download an edition's issues dated up to and including `until`.
public struct Subscription: Sendable, Hashable {
    public var userID: Int
    public var editionID: Int
    public var until: IssueDate
    public init(userID: Int, editionID: Int, until: IssueDate) {
        self.userID = userID; self.editionID = editionID; self.until = until
    }

    /// Whether the subscription covers an issue of `date`.
    public func covers(_ date: IssueDate) -> Bool { date <= until }
}

/// The identity of (app, device, user) issued by `registrar` (`IDEN_KEY`, a row of the seed's USERS_MOBILS).
public struct DeviceIdentity: Sendable, Hashable {
    public var key: String
    public var appKey: String
    /// The device id the app sent (`DISP_KEY`).
    public var deviceKey: String
    /// 0 when anonymous.
    public var userID: Int
    /// The device facts (`DISP_INFO`), kept as the app sent them.
    public var deviceInfo: [String: String]
    public var os: String
    /// Imported from the 2012 system (`identity import`): the key is the old one, not derived by
    /// `IdentityKeyIssuer`, and the device's next `registrar` replaces it.
    public var imported: Bool
    public init(key: String, appKey: String, deviceKey: String, userID: Int, deviceInfo: [String: String], os: String,
                imported: Bool = false) {
        self.key = key; self.appKey = appKey; self.deviceKey = deviceKey; self.userID = userID
        self.deviceInfo = deviceInfo; self.os = os; self.imported = imported
    }
}

/// One successful `getEdicio`, as recorded.
public struct DownloadRecord: Sendable, Hashable {
    public var editionID: Int
    public var date: IssueDate
    public var appKey: String
    /// The identity key presented, as sent (may be empty or foreign on free lines).
    public var identityKey: String
    /// The user behind the identity (0 if anonymous or none).
    public var userID: Int
    /// The `usuari_id` the client claimed; recorded only, never trusted.
    public var claimedUserID: String
    public var deviceKey: String
    public var os: String
    /// Unix time in seconds.
    public var time: Int64
    public init(editionID: Int, date: IssueDate, appKey: String, identityKey: String, userID: Int,
                claimedUserID: String, deviceKey: String, os: String, time: Int64) {
        self.editionID = editionID; self.date = date; self.appKey = appKey; self.identityKey = identityKey
        self.userID = userID; self.claimedUserID = claimedUserID; self.deviceKey = deviceKey; self.os = os; self.time = time
    }
}

/// The answer of an atomic demo check-and-increment.
public struct DemoOutcome: Sendable, Hashable {
    public var granted: Bool
    /// Demos consumed on this app and device after the call.
    public var consumed: Int
    public init(granted: Bool, consumed: Int) { self.granted = granted; self.consumed = consumed }

    /// Asking for a demo on a device that consumed `consumed` of `quota`: granted, and counted, while
    /// fewer were consumed.
    public init(asking consumed: Int, quota: Int) {
        self.init(granted: consumed < quota, consumed: consumed < quota ? consumed + 1 : consumed)
    }
}

/// What became of a sighting an app reported (`KioskStore.recordActivity`).
public enum SightingOutcome: Sendable, Hashable {
    /// Queued for writing.
    case queued
    /// Already written (or queued) today by this process, or the queue is full.
    case known
    /// The app already has `ActivityLog.perAppDayLimit` keys today: counted, not kept.
    case overLimit
}
