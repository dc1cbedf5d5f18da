import GRDB
import KioskModels
import KioskStoreSupport

/// Publishing's side of the store: each call is one transaction.
extension SQLiteKioskStore {
    public func edition(id: Int) async throws -> Edition? {
        try await longRead { db in
            try EditionRecord.fetchOne(db.cachedStatement(sql: """
                SELECT id, publication_id, name, created_on FROM editions WHERE id = ?
                """), arguments: [id])?.edition
        }
    }

    /// The name of a publication (the bundle's `titol`), nil when unknown.
    public func publicationName(id: Int) async throws -> String? {
        try await longRead { db in
            try String.fetchOne(db.cachedStatement(sql: "SELECT name FROM publications WHERE id = ?"), arguments: [id])
        }
    }

    public func nextRevision(editionID: Int, date: IssueDate) async throws -> Int {
        try await longRead { db in
            IssueRevision.next(after: try Int.fetchOne(db.cachedStatement(sql: """
                SELECT revision FROM issues WHERE edition_id = ? AND date = ?
                """), arguments: [editionID, date.description]))
        }
    }

    public func publishIssue(editionID: Int, date: IssueDate, revision: Int, pages: [PublishedPage],
                             bundle: BundleInfo?, at time: Int64) async throws -> Int? {
        try await write { db in
            let day = date.description
            for section in pages.sectionsByID {
                try db.cachedStatement(sql: """
                    INSERT INTO sections (id, name) VALUES (?, ?)
                    ON CONFLICT (id) DO UPDATE SET name = excluded.name WHERE name <> excluded.name
                    """).execute(arguments: [section.id, section.name])
            }
            let replaced = try Int.fetchOne(db.cachedStatement(sql: """
                SELECT revision FROM issues WHERE edition_id = ? AND date = ?
                """), arguments: [editionID, day])
            try db.cachedStatement(sql: "DELETE FROM pages WHERE edition_id = ? AND date = ?")
                .execute(arguments: [editionID, day])
            let issue = IssueRecord(editionID: editionID, date: date, revision: revision, pageCount: pages.count,
                                    publishedAt: time, bundle: bundle)
            try db.cachedStatement(sql: """
                INSERT INTO issues (edition_id, date, revision, page_count, published_at, withdrawn_at,
                                    bundle_path, bundle_size, bundle_sha256)
                VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?)
                ON CONFLICT (edition_id, date) DO UPDATE SET
                    revision = excluded.revision, page_count = excluded.page_count,
                    published_at = excluded.published_at, withdrawn_at = NULL,
                    bundle_path = excluded.bundle_path, bundle_size = excluded.bundle_size,
                    bundle_sha256 = excluded.bundle_sha256
                """).execute(arguments: [issue.editionID, issue.date, issue.revision, issue.pageCount, issue.publishedAt,
                                         issue.bundlePath, issue.bundleSize, issue.bundleSHA256])
            for page in pages.byNumber {
                var record = PageRecord(editionID: editionID, date: date, page: page)
                try record.insert(db)
            }
            try replacePageTexts(db, editionID: editionID, date: date, pages: pages)
            try db.cachedStatement(sql: "DELETE FROM withdrawn_page_texts WHERE edition_id = ? AND date = ?")
                .execute(arguments: [editionID, day])
            if let bundle { try recordBundleBuild(db, editionID: editionID, date: date, revision: revision, bundle: bundle, at: time) }
            try Self.appendEvents([.published(editionID: editionID, date: date, revision: revision, replaced: replaced)], at: time, db)
            return replaced
        }
    }

    public func withdrawIssue(editionID: Int, date: IssueDate, at time: Int64) async throws -> Bool {
        try await write { db in
            try db.cachedStatement(sql: """
                UPDATE issues SET withdrawn_at = ? WHERE edition_id = ? AND date = ? AND withdrawn_at IS NULL
                """).execute(arguments: [time, editionID, date.description])
            let withdrawn = db.changesCount == 1
            if withdrawn {
                try db.cachedStatement(sql: """
                    INSERT OR REPLACE INTO withdrawn_page_texts (key, edition_id, date, number, text)
                    SELECT key, edition_id, date, number, text FROM page_texts WHERE edition_id = ? AND date = ?
                    """).execute(arguments: [editionID, date.description])
                try deletePageTexts(db, editionID: editionID, date: date)
                try Self.appendEvents([.withdrawn(editionID: editionID, date: date)], at: time, db)
            }
            return withdrawn
        }
    }

    public func issueStanding(editionID: Int, date: IssueDate) async throws -> IssueStanding? {
        try await longRead { db in
            try IssueRecord.fetchOne(db.cachedStatement(sql: """
                SELECT \(IssueRecord.columnList(as: "i")) FROM issues i WHERE i.edition_id = ? AND i.date = ?
                """), arguments: [editionID, date.description]).map { IssueStanding(revision: $0.revision, withdrawn: $0.withdrawnAt != nil) }
        }
    }

    public func restoreIssue(editionID: Int, date: IssueDate, revision: Int) async throws -> Bool {
        try await write { db in
            let day = date.description
            try db.cachedStatement(sql: """
                UPDATE issues SET withdrawn_at = NULL
                WHERE edition_id = ? AND date = ? AND revision = ? AND withdrawn_at IS NOT NULL
                """).execute(arguments: [editionID, day, revision])
            guard db.changesCount == 1 else { return false }
            try deletePageTexts(db, editionID: editionID, date: date)
            try db.cachedStatement(sql: """
                INSERT INTO page_texts (key, edition_id, date, number, text)
                SELECT key, edition_id, date, number, text FROM withdrawn_page_texts WHERE edition_id = ? AND date = ?
                """).execute(arguments: [editionID, day])
            try db.cachedStatement(sql: "DELETE FROM withdrawn_page_texts WHERE edition_id = ? AND date = ?")
                .execute(arguments: [editionID, day])
            try Self.appendEvents([.restored(editionID: editionID, date: date, revision: revision)], at: EventRow.now(), db)
            return true
        }
    }

    public func setBundle(editionID: Int, date: IssueDate, revision: Int, bundle: BundleInfo, at time: Int64) async throws {
        try await write { db in
            try db.cachedStatement(sql: """
                UPDATE issues SET bundle_path = ?, bundle_size = ?, bundle_sha256 = ?
                WHERE edition_id = ? AND date = ? AND revision = ?
                """).execute(arguments: [bundle.path, bundle.size, bundle.sha256, editionID, date.description, revision])
            if db.changesCount == 1 {
                try recordBundleBuild(db, editionID: editionID, date: date, revision: revision, bundle: bundle, at: time)
            }
        }
    }

    private func recordBundleBuild(_ db: Database, editionID: Int, date: IssueDate, revision: Int, bundle: BundleInfo, at time: Int64) throws {
        try db.cachedStatement(sql: """
            INSERT INTO bundle_builds (time, edition_id, date, revision, bytes) VALUES (?, ?, ?, ?, ?)
            """).execute(arguments: [time, editionID, date.description, revision, bundle.size])
    }

    public func storedRevisions() async throws -> [(editionID: Int, date: IssueDate, revision: Int)] {
        try await longRead { db in
            try IssueRecord.fetchAll(db.cachedStatement(sql: """
                SELECT \(IssueRecord.columnList(as: "i")) FROM issues i
                """)).compactMap { issue in
                IssueDate(issue.date).map { (editionID: issue.editionID, date: $0, revision: issue.revision) }
            }
        }
    }
}
