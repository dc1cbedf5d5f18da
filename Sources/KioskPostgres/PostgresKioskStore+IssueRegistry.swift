import KioskModels
import KioskStoreSupport
import PostgresNIO

/// Publishing's side of the store: each call is one transaction.
extension PostgresKioskStore {
    public func edition(id: Int) async throws -> Edition? {
        try await withConnection { [self] c in
            try await c.rows("SELECT id, publication_id, name, created_on FROM editions WHERE id = \(id)",
                             (Int, Int, String, String).self, logger: logger).first.map {
                Edition(id: $0.0, publicationID: $0.1, name: $0.2, storedCreatedOn: $0.3)
            }
        }
    }

    public func publicationName(id: Int) async throws -> String? {
        try await withConnection { [self] c in try await c.value("SELECT name FROM publications WHERE id = \(id)", String.self, logger: logger) }
    }

    public func nextRevision(editionID: Int, date: IssueDate) async throws -> Int {
        let day = date.description
        return try await withConnection { [self] c in
            IssueRevision.next(after: try await c.value("SELECT revision FROM issues WHERE edition_id = \(editionID) AND date = \(day)",
                                                        Int.self, logger: logger))
        }
    }

    public func publishIssue(editionID: Int, date: IssueDate, revision: Int, pages: [PublishedPage],
                             bundle: BundleInfo?, at time: Int64) async throws -> Int? {
        let day = date.description
        let sections = pages.sectionsByID
        let pages = pages.byNumber
        return try await changingCatalogue { [self] c in
            if !sections.isEmpty {
                try await c.run("""
                    INSERT INTO sections (id, name) SELECT * FROM unnest(\(sections.map(\.id)), \(sections.map(\.name)))
                    ON CONFLICT (id) DO UPDATE SET name = excluded.name WHERE sections.name <> excluded.name
                    """, logger: logger)
            }
            let replaced = try await c.value("""
                SELECT revision FROM issues WHERE edition_id = \(editionID) AND date = \(day) FOR UPDATE
                """, Int.self, logger: logger)
            try await c.run("DELETE FROM pages WHERE edition_id = \(editionID) AND date = \(day)", logger: logger)
            try await c.run("""
                INSERT INTO issues (edition_id, date, revision, page_count, published_at, withdrawn_at,
                                    bundle_path, bundle_size, bundle_sha256)
                VALUES (\(editionID), \(day), \(revision), \(pages.count), \(time), NULL,
                        \(bundle?.path), \(bundle?.size), \(bundle?.sha256))
                ON CONFLICT (edition_id, date) DO UPDATE SET
                    revision = excluded.revision, page_count = excluded.page_count,
                    published_at = excluded.published_at, withdrawn_at = NULL,
                    bundle_path = excluded.bundle_path, bundle_size = excluded.bundle_size,
                    bundle_sha256 = excluded.bundle_sha256
                """, logger: logger)
            if !pages.isEmpty {
                try await c.run("""
                    INSERT INTO pages (edition_id, date, number, section_id, pdf_path, jpg_path, jpga_path)
                    SELECT \(editionID), \(day), * FROM unnest(\(pages.map(\.number)), \(pages.map(\.section.id)),
                        \(pages.map(\.files.pdf)), \(pages.map(\.files.jpg)), \(pages.map(\.files.jpgA)))
                    """, logger: logger)
            }
            try await replacePageTexts(c, editionID: editionID, date: date, pages: pages)
            try await c.run("DELETE FROM withdrawn_page_texts WHERE edition_id = \(editionID) AND date = \(day)", logger: logger)
            if let bundle { try await recordBundleBuild(c, editionID: editionID, date: date, revision: revision, bundle: bundle, at: time) }
            try await appendEvents([.published(editionID: editionID, date: date, revision: revision, replaced: replaced)], at: time, on: c)
            return replaced
        }
    }

    public func withdrawIssue(editionID: Int, date: IssueDate, at time: Int64) async throws -> Bool {
        let day = date.description
        return try await changingCatalogue { [self] c in
            let withdrawn = try await c.run("""
                UPDATE issues SET withdrawn_at = \(time)
                WHERE edition_id = \(editionID) AND date = \(day) AND withdrawn_at IS NULL RETURNING 1
                """, logger: logger) == 1
            if withdrawn {
                try await c.run("""
                    INSERT INTO withdrawn_page_texts (edition_id, date, number, text)
                    SELECT edition_id, date, number, text FROM page_texts WHERE edition_id = \(editionID) AND date = \(day)
                    ON CONFLICT (edition_id, date, number) DO UPDATE SET text = excluded.text
                    """, logger: logger)
                try await c.run("DELETE FROM page_texts WHERE edition_id = \(editionID) AND date = \(day)", logger: logger)
                try await appendEvents([.withdrawn(editionID: editionID, date: date)], at: time, on: c)
            }
            return withdrawn
        }
    }

    public func issueStanding(editionID: Int, date: IssueDate) async throws -> IssueStanding? {
        try await withConnection { [self] c in
            try await c.rows("""
                SELECT revision, withdrawn_at IS NOT NULL FROM issues WHERE edition_id = \(editionID) AND date = \(date.description)
                """, (Int, Bool).self, logger: logger).first.map { IssueStanding(revision: $0.0, withdrawn: $0.1) }
        }
    }

    public func restoreIssue(editionID: Int, date: IssueDate, revision: Int) async throws -> Bool {
        let day = date.description
        return try await changingCatalogue { [self] c in
            guard try await c.run("""
                UPDATE issues SET withdrawn_at = NULL
                WHERE edition_id = \(editionID) AND date = \(day) AND revision = \(revision) AND withdrawn_at IS NOT NULL RETURNING 1
                """, logger: logger) == 1 else { return false }
            try await c.run("DELETE FROM page_texts WHERE edition_id = \(editionID) AND date = \(day)", logger: logger)
            try await c.run("""
                INSERT INTO page_texts (edition_id, date, number, text)
                SELECT edition_id, date, number, text FROM withdrawn_page_texts WHERE edition_id = \(editionID) AND date = \(day)
                """, logger: logger)
            try await c.run("DELETE FROM withdrawn_page_texts WHERE edition_id = \(editionID) AND date = \(day)", logger: logger)
            try await appendEvents([.restored(editionID: editionID, date: date, revision: revision)], at: EventRow.now(), on: c)
            return true
        }
    }

    public func setBundle(editionID: Int, date: IssueDate, revision: Int, bundle: BundleInfo, at time: Int64) async throws {
        let day = date.description
        try await changingCatalogue { [self] c in
            let updated = try await c.run("""
                UPDATE issues SET bundle_path = \(bundle.path), bundle_size = \(bundle.size), bundle_sha256 = \(bundle.sha256)
                WHERE edition_id = \(editionID) AND date = \(day) AND revision = \(revision) RETURNING revision
                """, logger: logger)
            if updated == 1 {
                try await recordBundleBuild(c, editionID: editionID, date: date, revision: revision, bundle: bundle, at: time)
            }
        }
    }

    private func recordBundleBuild(_ c: PostgresConnection, editionID: Int, date: IssueDate, revision: Int, bundle: BundleInfo,
                                   at time: Int64) async throws {
        try await c.run("""
            INSERT INTO bundle_builds (time, edition_id, date, revision, bytes)
            VALUES (\(time), \(editionID), \(date.description), \(revision), \(bundle.size))
            """, logger: logger)
    }

    public func storedRevisions() async throws -> [(editionID: Int, date: IssueDate, revision: Int)] {
        try await withConnection { [self] c in
            try await c.rows("SELECT edition_id, date, revision FROM issues", (Int, String, Int).self, logger: logger)
                .compactMap { row in IssueDate(row.1).map { (editionID: row.0, date: $0, revision: row.2) } }
        }
    }
}
