import GRDB
import KioskModels
import KioskStoreSupport

/// A row of `accounts`: an API client, publisher or operator, kept with the catalogue.
struct AccountRecord: Hashable, FetchableRecord, TableRecord, ListedColumns {
    static let databaseTableName = "accounts"
    enum Columns: String, ColumnExpression, CaseIterable {
        case kind, username, passwordHash = "password_hash", role, scope
    }

    /// An `AccountKind` raw value.
    var kind: String
    var username: String
    var passwordHash: String
    /// An operator's `OperatorRole` raw value.
    var role: String?
    /// A publisher's scope as stored (`PublisherScope.description`).
    var scope: String?

    init(row: Row) {
        kind = row[Columns.kind]; username = row[Columns.username]; passwordHash = row[Columns.passwordHash]
        role = row[Columns.role]; scope = row[Columns.scope]
    }

    /// Nil for an unknown kind.
    var account: Account? { Account(storedKind: kind, username: username, passwordHash: passwordHash, role: role, scope: scope) }
}

/// A row of `audit_log`: one change made in the console.
struct AuditEntryRecord: Hashable, FetchableRecord, TableRecord, ListedColumns {
    static let databaseTableName = "audit_log"
    enum Columns: String, ColumnExpression, CaseIterable { case id, time, actor, action, subject, before, after }

    var id: Int64
    var time: Int64
    var actor: String
    var action: String
    var subject: String
    var before: String
    var after: String

    init(row: Row) {
        id = row[Columns.id]; time = row[Columns.time]; actor = row[Columns.actor]; action = row[Columns.action]
        subject = row[Columns.subject]; before = row[Columns.before]; after = row[Columns.after]
    }

    var entry: AuditEntry { AuditEntry(time: time, actor: actor, action: action, subject: subject, before: before, after: after) }
}

/// The bundle builds of a period, from `bundle_builds`: how many (`builds`) and their bytes (`bytes`).
struct BundleBuildTotalsRow: FetchableRecord {
    var builds: Int
    var bytes: Int64

    init(row: Row) { builds = row["builds"]; bytes = row["bytes"] }
}
