import GRDB
import KioskModels

/// Makes the database's catalogue match the configuration, idempotently, reporting each change.
///
/// Publications and editions are upserted and never deleted (issues refer to them); apps and their
/// tariff lines and web kiosks are made exactly as configured, so an app removed from the configuration
/// is unknown; so are the accounts (API clients, publishers, operators).
struct CatalogueSync {
    let db: Database

    func apply(_ catalogue: Catalogue) throws -> [String] {
        var changes: [String] = []
        for publication in catalogue.publications.map(PublicationRecord.init) {
            let current = try PublicationRecord.fetchOne(db, key: publication.id)
            if current != publication {
                try current == nil ? publication.insert(db) : publication.update(db)
                changes.append(current == nil ? "add publication \(publication.id) \"\(publication.name)\""
                                              : "rename publication \(publication.id) to \"\(publication.name)\"")
            }
        }
        for edition in catalogue.editions.map(EditionRecord.init) {
            let current = try EditionRecord.fetchOne(db, key: edition.id)
            if current != edition {
                try current == nil ? edition.insert(db) : edition.update(db)
                changes.append("\(current == nil ? "add" : "update") edition \(edition.id) \"\(edition.name)\"")
            }
        }
        let configuredApps = Set(catalogue.apps.map(\.key))
        for stored in try AppRecord.order(AppRecord.Columns.key).fetchAll(db) where !configuredApps.contains(stored.key) {
            try stored.delete(db)
            changes.append("remove app \(stored.key)")
        }
        for app in catalogue.apps.map(AppRecord.init) {
            let current = try AppRecord.fetchOne(db, key: app.key)
            if current != app {
                try current == nil ? app.insert(db) : app.update(db)
                changes.append("\(current == nil ? "add" : "update") app \(app.key) (demo quota \(app.demoQuota))")
            }
            let lines = catalogue.tariffLines.filter { $0.appKey == app.key }.map(TariffLineRecord.init)
            let currentLines = try TariffLineRecord.filter(TariffLineRecord.Columns.appKey == app.key)
                .order(TariffLineRecord.Columns.editionID).fetchAll(db)
            let wantedLines = lines.sorted { $0.editionID < $1.editionID }
            if currentLines != wantedLines {
                try TariffLineRecord.filter(TariffLineRecord.Columns.appKey == app.key).deleteAll(db)
                for line in lines { try line.insert(db) }
                changes.append("set tariff lines of app \(app.key): "
                               + wantedLines.map { "\($0.editionID):\($0.sortOrder):\($0.access)" }.joined(separator: ", "))
            }
            let kiosk = catalogue.webKiosk(of: app.key)
            if try WebKioskRecord.fetchOne(db, key: app.key)?.webKiosk() != kiosk {
                if let kiosk {
                    try WebKioskRecord(kiosk).save(db)
                    changes.append(WebKioskChange.set(kiosk))
                } else {
                    try WebKioskRecord.deleteOne(db, key: app.key)
                    changes.append(WebKioskChange.remove(appKey: app.key))
                }
            }
        }
        return changes + (try applyAccounts(catalogue.sortedAccounts))
    }

    /// Makes the stored accounts exactly the catalogue's.
    private func applyAccounts(_ wanted: [Account]) throws -> [String] {
        let current = try SQLiteKioskStore.accounts(db)
        let changes = AccountChanges.describe(from: current, to: wanted)
        guard !changes.isEmpty else { return [] }
        let kept = Set(wanted.map(\.label))
        for account in current where !kept.contains(account.label) {
            try db.execute(sql: "DELETE FROM accounts WHERE kind = ? AND username = ?", arguments: [account.kind.rawValue, account.username])
        }
        let stored = Set(current)
        for account in wanted where !stored.contains(account) {
            try db.execute(sql: """
                INSERT INTO accounts (kind, username, password_hash, role, scope) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (kind, username) DO UPDATE
                SET password_hash = excluded.password_hash, role = excluded.role, scope = excluded.scope
                """, arguments: [account.kind.rawValue, account.username, account.passwordHash, account.role?.rawValue,
                                 account.scope?.description])
        }
        return changes
    }
}
