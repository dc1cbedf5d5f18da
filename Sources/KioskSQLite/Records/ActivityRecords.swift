import GRDB
import KioskModels
import KioskStoreSupport

/// A row of `downloads`: one successful `getEdicio` (the domain's `DownloadRecord`).
struct DownloadLogRecord: Hashable, FetchableRecord, MutablePersistableRecord, ListedColumns {
    static let databaseTableName = "downloads"
    enum Columns: String, ColumnExpression, CaseIterable {
        case id, editionID = "edition_id", date, appKey = "app_key", identityKey = "identity_key", userID = "user_id"
        case claimedUserID = "claimed_user_id", deviceKey = "device_key", os, time
    }

    /// Nil until inserted.
    var id: Int64?
    var editionID: Int
    /// The day, `YYYY-MM-DD`.
    var date: String
    var appKey: String
    var identityKey: String
    var userID: Int
    var claimedUserID: String
    var deviceKey: String
    var os: String
    var time: Int64

    init(_ download: DownloadRecord) {
        id = nil; editionID = download.editionID; date = download.date.description; appKey = download.appKey
        identityKey = download.identityKey; userID = download.userID; claimedUserID = download.claimedUserID
        deviceKey = download.deviceKey; os = download.os; time = download.time
    }

    init(row: Row) {
        id = row[Columns.id]; editionID = row[Columns.editionID]; date = row[Columns.date]; appKey = row[Columns.appKey]
        identityKey = row[Columns.identityKey]; userID = row[Columns.userID]; claimedUserID = row[Columns.claimedUserID]
        deviceKey = row[Columns.deviceKey]; os = row[Columns.os]; time = row[Columns.time]
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = id; container[Columns.editionID] = editionID; container[Columns.date] = date
        container[Columns.appKey] = appKey; container[Columns.identityKey] = identityKey; container[Columns.userID] = userID
        container[Columns.claimedUserID] = claimedUserID; container[Columns.deviceKey] = deviceKey
        container[Columns.os] = os; container[Columns.time] = time
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    /// Inserts the row through one cached statement, without the record's persistence callbacks (about a
    /// third less time than `insert`): the group commit writes up to 256 downloads per transaction.
    func insertCached(_ db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT INTO downloads (edition_id, date, app_key, identity_key, user_id, claimed_user_id, device_key, os, time)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [editionID, date, appKey, identityKey, userID, claimedUserID, deviceKey, os, time])
    }
}

/// A row of `demo_grants`: a free download given to a device, unused while `editionID` is nil and
/// bound for good to one issue once used.
struct DemoGrantRecord: Hashable, FetchableRecord, MutablePersistableRecord, ListedColumns {
    static let databaseTableName = "demo_grants"
    enum Columns: String, ColumnExpression, CaseIterable {
        case id, appKey = "app_key", deviceKey = "device_key", grantedAt = "granted_at", editionID = "edition_id"
        case date, usedAt = "used_at"
    }

    /// Nil until inserted.
    var id: Int64?
    var appKey: String
    var deviceKey: String
    var grantedAt: Int64
    var editionID: Int?
    /// The day once used, `YYYY-MM-DD`.
    var date: String?
    var usedAt: Int64?

    /// An unused grant.
    init(appKey: String, deviceKey: String, grantedAt: Int64) {
        id = nil; self.appKey = appKey; self.deviceKey = deviceKey; self.grantedAt = grantedAt
        editionID = nil; date = nil; usedAt = nil
    }

    init(row: Row) {
        id = row[Columns.id]; appKey = row[Columns.appKey]; deviceKey = row[Columns.deviceKey]
        grantedAt = row[Columns.grantedAt]; editionID = row[Columns.editionID]; date = row[Columns.date]
        usedAt = row[Columns.usedAt]
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = id; container[Columns.appKey] = appKey; container[Columns.deviceKey] = deviceKey
        container[Columns.grantedAt] = grantedAt; container[Columns.editionID] = editionID
        container[Columns.date] = date; container[Columns.usedAt] = usedAt
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// A row of `sign_in_failures`: one failed sign-in, by username and (when known) device.
struct SignInFailureRecord: Hashable, FetchableRecord, MutablePersistableRecord, ListedColumns {
    static let databaseTableName = "sign_in_failures"
    enum Columns: String, ColumnExpression, CaseIterable { case id, username, deviceKey = "device_key", time }

    /// Nil until inserted.
    var id: Int64?
    var username: String
    var deviceKey: String?
    var time: Int64

    init(username: String, deviceKey: String?, time: Int64) {
        id = nil; self.username = username; self.deviceKey = deviceKey; self.time = time
    }

    init(row: Row) {
        id = row[Columns.id]; username = row[Columns.username]; deviceKey = row[Columns.deviceKey]; time = row[Columns.time]
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = id; container[Columns.username] = username
        container[Columns.deviceKey] = deviceKey; container[Columns.time] = time
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// A row of `active_identities`: an identity key an app saw on a UTC day (days since 1970-01-01).
struct ActiveIdentityRecord: Hashable, FetchableRecord, PersistableRecord, ListedColumns {
    static let databaseTableName = "active_identities"
    enum Columns: String, ColumnExpression, CaseIterable { case day, appKey = "app_key", identityKey = "identity_key" }

    var day: Int64
    var appKey: String
    var identityKey: String

    init(_ sighting: IdentitySighting) {
        day = sighting.day; appKey = sighting.appKey; identityKey = sighting.identityKey
    }

    init(row: Row) { day = row[Columns.day]; appKey = row[Columns.appKey]; identityKey = row[Columns.identityKey] }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.day] = day; container[Columns.appKey] = appKey; container[Columns.identityKey] = identityKey
    }
}
