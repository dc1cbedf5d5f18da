import GRDB
import KioskIntegers
import KioskModels
import KioskStoreSupport

/// A row of `users`: a subscriber account.
struct UserRecord: Hashable, FetchableRecord, MutablePersistableRecord, ListedColumns {
    static let databaseTableName = "users"
    enum Columns: String, ColumnExpression, CaseIterable {
        case id, username, name, email, passwordHash = "password_hash", createdAt = "created_at"
    }

    /// Nil until inserted.
    var id: Int?
    var username: String
    var name: String
    var email: String
    var passwordHash: String
    var createdAt: Int64

    init(username: String, name: String, email: String, passwordHash: String, createdAt: Int64) {
        id = nil; self.username = username; self.name = name; self.email = email
        self.passwordHash = passwordHash; self.createdAt = createdAt
    }

    init(row: Row) {
        id = row[Columns.id]; username = row[Columns.username]; name = row[Columns.name]; email = row[Columns.email]
        passwordHash = row[Columns.passwordHash]; createdAt = row[Columns.createdAt]
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = id; container[Columns.username] = username; container[Columns.name] = name
        container[Columns.email] = email; container[Columns.passwordHash] = passwordHash
        container[Columns.createdAt] = createdAt
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = Int(widening: inserted.rowID) }

    /// A user read back always has its id.
    var user: User { User(id: id ?? 0, username: username, name: name, email: email, passwordHash: passwordHash) }
}

/// A row of `subscriptions`: a user's right to an edition's issues up to a day.
struct SubscriptionRecord: Hashable, FetchableRecord, PersistableRecord, ListedColumns {
    static let databaseTableName = "subscriptions"
    enum Columns: String, ColumnExpression, CaseIterable { case userID = "user_id", editionID = "edition_id", until }

    var userID: Int
    var editionID: Int
    /// `YYYY-MM-DD`.
    var until: String

    init(userID: Int, editionID: Int, until: IssueDate) {
        self.userID = userID; self.editionID = editionID; self.until = until.description
    }

    init(row: Row) { userID = row[Columns.userID]; editionID = row[Columns.editionID]; until = row[Columns.until] }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.userID] = userID; container[Columns.editionID] = editionID; container[Columns.until] = until
    }

    /// Nil when the day is unreadable.
    var subscription: Subscription? {
        IssueDate(until).map { Subscription(userID: userID, editionID: editionID, until: $0) }
    }
}

/// A row of `identities`: an identity key issued to (app, device, user), or imported from the 2012 system.
struct IdentityRecord: Hashable, FetchableRecord, PersistableRecord, ListedColumns {
    static let databaseTableName = "identities"
    enum Columns: String, ColumnExpression, CaseIterable {
        case key, appKey = "app_key", deviceKey = "device_key", userID = "user_id", deviceInfo = "device_info", os
        case firstSeen = "first_seen", lastSeen = "last_seen", imported
    }

    var key: String
    var appKey: String
    var deviceKey: String
    var userID: Int
    /// The device facts as a JSON object of strings (`DeviceInfoCoding`).
    var deviceInfo: String
    var os: String
    var firstSeen: Int64
    var lastSeen: Int64
    var imported: Bool

    /// The identity as first seen (and last seen) at `time`.
    init(_ identity: DeviceIdentity, seenAt time: Int64) {
        key = identity.key; appKey = identity.appKey; deviceKey = identity.deviceKey; userID = identity.userID
        deviceInfo = DeviceInfoCoding.encode(identity.deviceInfo); os = identity.os
        firstSeen = time; lastSeen = time; imported = identity.imported
    }

    init(row: Row) {
        key = row[Columns.key]; appKey = row[Columns.appKey]; deviceKey = row[Columns.deviceKey]
        userID = row[Columns.userID]; deviceInfo = row[Columns.deviceInfo]; os = row[Columns.os]
        firstSeen = row[Columns.firstSeen]; lastSeen = row[Columns.lastSeen]; imported = row[Columns.imported]
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.key] = key; container[Columns.appKey] = appKey; container[Columns.deviceKey] = deviceKey
        container[Columns.userID] = userID; container[Columns.deviceInfo] = deviceInfo; container[Columns.os] = os
        container[Columns.firstSeen] = firstSeen; container[Columns.lastSeen] = lastSeen
        container[Columns.imported] = imported
    }

    var identity: DeviceIdentity {
        DeviceIdentity(key: key, appKey: appKey, deviceKey: deviceKey, userID: userID,
                       deviceInfo: DeviceInfoCoding.decode(deviceInfo), os: os, imported: imported)
    }
}
