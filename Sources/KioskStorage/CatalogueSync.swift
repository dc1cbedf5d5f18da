import GRDB
import KioskModels

/// Makes the database's catalogue match the configuration, idempotently, reporting each change.
///
/// Publications and editions are upserted and never deleted (issues refer to them); apps and their
/// tariff lines are made exactly as configured, so an app removed from the configuration is unknown.
struct CatalogueSync {
    let db: Database

    func apply(_ catalogue: Catalogue) throws -> [String] {
        var changes: [String] = []
        for publication in catalogue.publications {
            let current = try String.fetchOne(db, sql: "SELECT name FROM publications WHERE id = ?", arguments: [publication.id])
            if current != publication.name {
                try db.execute(sql: """
                    INSERT INTO publications (id, name) VALUES (?, ?)
                    ON CONFLICT (id) DO UPDATE SET name = excluded.name
                    """, arguments: [publication.id, publication.name])
                changes.append(current == nil ? "add publication \(publication.id) \"\(publication.name)\""
                                              : "rename publication \(publication.id) to \"\(publication.name)\"")
            }
        }
        for edition in catalogue.editions {
            let row = try Row.fetchOne(db, sql: "SELECT publication_id, name, created_on FROM editions WHERE id = ?",
                                       arguments: [edition.id])
            let wanted: [DatabaseValue] = [edition.publicationID.databaseValue, edition.name.databaseValue,
                                           edition.createdOn.description.databaseValue]
            if row.map({ [$0[0], $0[1], $0[2]] as [DatabaseValue] }) != wanted {
                try db.execute(sql: """
                    INSERT INTO editions (id, publication_id, name, created_on) VALUES (?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET publication_id = excluded.publication_id, name = excluded.name,
                                                   created_on = excluded.created_on
                    """, arguments: [edition.id, edition.publicationID, edition.name, edition.createdOn.description])
                changes.append("\(row == nil ? "add" : "update") edition \(edition.id) \"\(edition.name)\"")
            }
        }
        let configuredApps = Set(catalogue.apps.map(\.key))
        for key in try String.fetchAll(db, sql: "SELECT key FROM apps ORDER BY key") where !configuredApps.contains(key) {
            try db.execute(sql: "DELETE FROM apps WHERE key = ?", arguments: [key])
            changes.append("remove app \(key)")
        }
        for app in catalogue.apps {
            let row = try Row.fetchOne(db, sql: "SELECT name, demo_quota FROM apps WHERE key = ?", arguments: [app.key])
            if row == nil || row![0] != app.name || row![1] != app.demoQuota {
                try db.execute(sql: """
                    INSERT INTO apps (key, name, demo_quota) VALUES (?, ?, ?)
                    ON CONFLICT (key) DO UPDATE SET name = excluded.name, demo_quota = excluded.demo_quota
                    """, arguments: [app.key, app.name, app.demoQuota])
                changes.append("\(row == nil ? "add" : "update") app \(app.key) (demo quota \(app.demoQuota))")
            }
            let lines = catalogue.tariffLines.filter { $0.appKey == app.key }
            let current = try Row.fetchAll(db, sql: """
                SELECT edition_id, sort_order, access FROM tariff_lines WHERE app_key = ? ORDER BY edition_id
                """, arguments: [app.key]).map { "\($0[0] as Int):\($0[1] as Int):\($0[2] as String)" }
            let wanted = lines.sorted { $0.editionID < $1.editionID }
                .map { "\($0.editionID):\($0.order):\($0.access.rawValue)" }
            if current != wanted {
                try db.execute(sql: "DELETE FROM tariff_lines WHERE app_key = ?", arguments: [app.key])
                for line in lines {
                    try db.execute(sql: """
                        INSERT INTO tariff_lines (app_key, edition_id, sort_order, access) VALUES (?, ?, ?, ?)
                        """, arguments: [line.appKey, line.editionID, line.order, line.access.rawValue])
                }
                changes.append("set tariff lines of app \(app.key): " + wanted.joined(separator: ", "))
            }
        }
        return changes
    }
}
