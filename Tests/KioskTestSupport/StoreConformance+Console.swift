import KioskModels
import Testing

extension StoreConformance {
    /// The console's reads and writes: the stored catalogue round-trips through a sync; users are found by
    /// any part of their name, username or e-mail (LIKE's wildcards taken literally); a password is reset;
    /// a lock-out is cleared; the audit log keeps entries, newest first.
    func console() async throws {
        let store = try await store()
        let stored = try await store.catalogue()
        #expect(stored.apps.map(\.key) == ["presencia", "quiosc"])
        #expect(stored.publications.map(\.id) == [1, 3] && stored.editions.map(\.id) == [1, 2, 8])
        #expect(stored.tariffLines.filter { $0.appKey == "quiosc" }.map(\.editionID) == [1, 2, 8], "by order")
        #expect(try await store.syncCatalogue(stored, dryRun: true).isEmpty, "what is read is what is there")
        var lowered = stored
        lowered.apps = lowered.apps.map { App(key: $0.key, name: $0.name, demoQuota: $0.key == "quiosc" ? 1 : $0.demoQuota) }
        #expect(try await store.syncCatalogue(lowered, dryRun: false) == ["update app quiosc (demo quota 1)"])
        #expect(try await store.catalogue().apps.first { $0.key == "quiosc" }?.demoQuota == 1)

        _ = try await store.addUser(username: "anna", name: "Anna Puig", email: "anna@example.cat", passwordHash: "h1", at: Self.t0)
        _ = try await store.addUser(username: "bernat_50", name: "Bernat", email: "b@100%.cat", passwordHash: "h2", at: Self.t0)
        _ = try await store.addUser(username: "carla", name: "Carla Vila", email: "carla@example.org", passwordHash: "h3", at: Self.t0)
        #expect(try await store.findUsers(matching: "PUIG", limit: 10).map(\.username) == ["anna"])
        #expect(try await store.findUsers(matching: "example", limit: 10).map(\.username) == ["anna", "carla"])
        #expect(try await store.findUsers(matching: "example", limit: 1).map(\.username) == ["anna"])
        #expect(try await store.findUsers(matching: "_5", limit: 10).map(\.username) == ["bernat_50"], "_ is literal")
        #expect(try await store.findUsers(matching: "%", limit: 10).map(\.username) == ["bernat_50"], "% is literal")
        #expect(try await store.findUsers(matching: "", limit: 10).count == 3)

        #expect(try await store.setPasswordHash(username: "Carla", to: "h4"), "usernames match in any case")
        #expect(try await store.user(username: "carla")?.passwordHash == "h4")
        #expect(try await store.setPasswordHash(username: "nobody", to: "h5") == false)

        for offset in 0..<3 {
            _ = try await store.beginSignInAttempt(username: "anna", deviceKey: "d\(offset)", since: Self.t0,
                                                   maxFailures: 10, at: Self.t0 + Int64(offset))
        }
        #expect(try await store.signInFailures(username: "anna", deviceKey: nil, since: Self.t0).username == 3)
        #expect(try await store.clearSignInFailures(username: "ANNA") == 3)
        let counts = try await store.signInFailures(username: "anna", deviceKey: "d1", since: Self.t0)
        #expect(counts.username == 0 && counts.device == 0)

        #expect(try await store.auditEntries(limit: 10).isEmpty)
        try await store.recordAudit(AuditEntry(time: Self.t0, actor: "marta", action: "app.demo_quota", subject: "quiosc",
                                               before: "3", after: "1"))
        try await store.recordAudit(AuditEntry(time: Self.t0 + 5, actor: "marta", action: "reader.add", subject: "anna", after: "Anna Puig"))
        let entries = try await store.auditEntries(limit: 10)
        #expect(entries.map(\.action) == ["reader.add", "app.demo_quota"], "newest first")
        #expect(entries[1] == AuditEntry(time: Self.t0, actor: "marta", action: "app.demo_quota", subject: "quiosc", before: "3", after: "1"))
        #expect(try await store.auditEntries(limit: 1).count == 1)

        // A period's activity, by UTC day: failed sign-ins on record, bundles built at publish and on demand.
        let next = IssueDate(unixTime: Self.t0).adding(days: 1)
        let day = try #require(DayPeriod(first: next, last: next))
        let start = day.seconds.lowerBound
        let none = ConsoleActivity(signInFailures: 0, bundleBuilds: 0, bundleBytes: 0)
        #expect(try await store.activity(in: day) == none)
        _ = try await store.beginSignInAttempt(username: "carla", deviceKey: "x", since: start, maxFailures: 10, at: start + 10)
        let date = IssueDate("2031-03-01")!
        let revision = try await store.publishTestIssue(edition: 1, date: date.description, at: start + 20)
        let bundle = TestIssues.bundle(edition: 1, date: date, revision: revision)
        try await store.setBundle(editionID: 1, date: date, revision: revision, bundle: bundle, at: start + 30)
        try await store.setBundle(editionID: 1, date: date, revision: revision + 1, bundle: bundle, at: start + 40)
        #expect(try await store.activity(in: day)
                == ConsoleActivity(signInFailures: 1, bundleBuilds: 2, bundleBytes: 2 * bundle.size),
                "the publish's bundle and the rebuild; not a bundle for a revision the issue is not at")
        #expect(try await store.activity(in: try #require(DayPeriod(first: next.adding(days: 1), last: next.adding(days: 30)))) == none)
        #expect(try await store.activity(in: try #require(DayPeriod(first: next.adding(days: -1), last: next))).bundleBuilds == 2)
    }
}

extension StoreConformance {
    /// Accounts are kept like the catalogue: a sync makes them exactly the catalogue's (added, password
    /// and role changed, removed), reported without a hash, read back by kind and username, and every
    /// change bumps the catalogue version (what makes each instance's authentication reread them).
    func accounts() async throws {
        let store = try await store()
        #expect(try await store.accounts().isEmpty)
        var catalogue = try await store.catalogue()
        catalogue.accounts = [
            Account(kind: .publisher, username: "premsa", passwordHash: "$2b$04$publisher"),
            Account(kind: .operator, username: "marta", passwordHash: "$2b$04$marta", role: .operator),
            Account(kind: .apiClient, username: "kiosk", passwordHash: "$2b$04$kiosk"),
            Account(kind: .operator, username: "edi", passwordHash: "$2b$04$edi", role: .editor),
        ]
        let version = try await store.catalogueVersion()
        #expect(try await store.syncCatalogue(catalogue, dryRun: true).count == 4)
        #expect(try await store.accounts().isEmpty, "a dry run changes nothing")
        #expect(try await store.syncCatalogue(catalogue, dryRun: false)
                == ["add account api_client:kiosk", "add account operator:edi (editor)", "add account operator:marta (operator)",
                    "add account publisher:premsa"], "by kind and username")
        #expect(try await store.catalogueVersion() > version)
        let stored = try await store.accounts()
        #expect(stored.map(\.label) == ["api_client:kiosk", "operator:edi", "operator:marta", "publisher:premsa"])
        #expect(stored.map(\.role) == [nil, .editor, .operator, nil])
        #expect(try await store.catalogue().accounts == stored)
        #expect(try await store.syncCatalogue(catalogue, dryRun: false).isEmpty, "idempotent")

        let unchanged = try await store.catalogueVersion()
        catalogue.accounts = [
            Account(kind: .apiClient, username: "kiosk", passwordHash: "$2b$04$new-kiosk"),
            Account(kind: .operator, username: "edi", passwordHash: "$2b$04$edi", role: .operator),
            Account(kind: .operator, username: "marta", passwordHash: "$2b$04$marta", role: .operator),
        ]
        let changes = try await store.syncCatalogue(catalogue, dryRun: false)
        #expect(changes == ["remove account publisher:premsa", "set password of account api_client:kiosk",
                            "set role of account operator:edi to operator"])
        #expect(!changes.joined().contains("$2b$"), "no hash in the report")
        #expect(try await store.catalogueVersion() > unchanged)
        #expect(try await store.accounts().map(\.passwordHash) == ["$2b$04$new-kiosk", "$2b$04$edi", "$2b$04$marta"])
        #expect(try await store.accounts().map(\.role) == [nil, .operator, .operator])
    }
}

extension StoreConformance {
    /// The console's issues page in one read: an edition's issues newest first, withdrawn ones included
    /// and marked, each with its revision, page count and bundle.
    func editionIssues() async throws {
        let store = try await store()
        for day in 27...30 { try await store.publishTestIssue(edition: 1, date: "2025-05-\(day)", pages: day - 25, bundle: day != 28) }
        try await store.publishTestIssue(edition: 2, date: "2025-05-31")
        try await store.publishTestIssue(edition: 1, date: "2025-05-30", pages: 2)
        #expect(try await store.withdrawIssue(editionID: 1, date: Self.date("2025-05-29"), at: Self.t0 + 7))
        let issues = try await store.editionIssues(editionID: 1, limit: 3)
        #expect(issues.map(\.date.description) == ["2025-05-30", "2025-05-29", "2025-05-28"], "newest first, withdrawn included")
        #expect(issues.map(\.revision) == [2, 1, 1] && issues.map(\.pageCount) == [2, 4, 3])
        #expect(issues.map(\.withdrawnAt) == [nil, Self.t0 + 7, nil])
        #expect(issues[0].bundle == TestIssues.bundle(edition: 1, date: Self.date("2025-05-30"), revision: 2))
        #expect(issues[2].bundle == nil)
        #expect(try await store.editionIssues(editionID: 1, limit: 10).count == 4)
        #expect(try await store.editionIssues(editionID: 8, limit: 10).isEmpty)
    }
}
