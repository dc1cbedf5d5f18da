import GRDB
import KioskModels
import KioskStoreSupport

/// Makes the database's catalogue match the configuration, idempotently: the changes `CatalogueDiff`
/// finds from the stored catalogue, made in SQL, reported in its lines.
struct CatalogueSync {
    let db: Database

    /// Applies the changes; their events are appended unless `dryRun` (whose transaction is rolled back anyway).
    func apply(_ catalogue: Catalogue, dryRun: Bool = false) throws -> [String] {
        let diff = CatalogueDiff(from: try SQLiteKioskStore.catalogue(db), to: catalogue)
        for change in diff.changes {
            switch change {
            case .savePublication(let publication):
                try PublicationRecord(publication).save(db)
            case .saveEdition(let edition):
                try EditionRecord(edition).save(db)
            case .removeApp(let key):
                try AppRecord.deleteOne(db, key: key)
            case .saveApp(let app):
                try AppRecord(app).save(db)
            case .setTariffLines(let appKey, let lines):
                try TariffLineRecord.filter(TariffLineRecord.Columns.appKey == appKey).deleteAll(db)
                for line in lines { try TariffLineRecord(line).insert(db) }
            case .saveWebKiosk(let kiosk):
                try WebKioskRecord(kiosk).save(db)
            case .removeWebKiosk(let appKey):
                try WebKioskRecord.deleteOne(db, key: appKey)
            case .setProducts(let appKey, let products):
                try StoreProductRecord.filter(StoreProductRecord.Columns.appKey == appKey).deleteAll(db)
                for (position, product) in products.enumerated() { try StoreProductRecord(product, position: position).insert(db) }
            case .removeAccount(let account):
                try db.execute(sql: "DELETE FROM accounts WHERE kind = ? AND username = ?",
                               arguments: [account.kind.rawValue, account.username])
            case .saveAccount(let account):
                try db.execute(sql: """
                    INSERT INTO accounts (kind, username, password_hash, role, scope) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (kind, username) DO UPDATE
                    SET password_hash = excluded.password_hash, role = excluded.role, scope = excluded.scope
                    """, arguments: [account.kind.rawValue, account.username, account.passwordHash, account.role?.rawValue,
                                     account.scope?.description])
            }
        }
        if !dryRun { try SQLiteKioskStore.appendEvents(diff.events, at: EventRow.now(), db) }
        return diff.lines
    }
}
