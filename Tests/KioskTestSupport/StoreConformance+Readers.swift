import Foundation
import KioskModels
import KioskSQLite
import Testing

extension StoreConformance {
    // MARK: Readers

    /// Users by name (in any case) and id; the password hash replaced only while it is the expected one.
    func users() async throws {
        let store = try await store()
        let anna = try await store.addUser(username: "anna", name: "Anna Puig", email: "anna@example.cat",
                                           passwordHash: "hash-1", at: Self.t0)
        let joan = try await store.addUser(username: "Joan", name: "", email: "", passwordHash: "hash-2", at: Self.t0)
        #expect(anna > 0 && joan > 0 && anna != joan)
        let expected = User(id: anna, username: "anna", name: "Anna Puig", email: "anna@example.cat", passwordHash: "hash-1")
        #expect(try await store.user(username: "anna") == expected)
        #expect(try await store.user(username: "ANNA") == expected)
        #expect(try await store.user(username: "joan")?.id == joan)
        #expect(try await store.user(id: anna) == expected)
        #expect(try await store.user(username: "nobody") == nil)
        #expect(try await store.user(username: "") == nil)
        #expect(try await store.user(id: 0) == nil)
        #expect(try await store.user(id: 9999) == nil)
        await #expect(throws: UserAdministrationError.usernameTaken("Anna")) {
            try await store.addUser(username: "Anna", name: "", email: "", passwordHash: "x", at: Self.t0)
        }

        try await store.replacePasswordHash(userID: anna, from: "not-the-hash", to: "hash-3")
        #expect(try await store.user(id: anna)?.passwordHash == "hash-1")
        try await store.replacePasswordHash(userID: anna, from: "hash-1", to: "hash-3")
        #expect(try await store.user(id: anna)?.passwordHash == "hash-3")
        try await store.replacePasswordHash(userID: anna, from: "hash-1", to: "hash-4")
        #expect(try await store.user(id: anna)?.passwordHash == "hash-3", "a concurrent sign-in replaced it first")
        #expect(try await store.user(id: joan)?.passwordHash == "hash-2")
    }

    /// A user's subscriptions by edition; subscribing again moves the end.
    func subscriptions() async throws {
        let store = try await store()
        let anna = try await store.addUser(username: "anna", name: "", email: "", passwordHash: "x", at: Self.t0)
        let joan = try await store.addUser(username: "joan", name: "", email: "", passwordHash: "x", at: Self.t0)
        #expect(try await store.subscriptions(userID: anna) == [])
        try await store.subscribe(username: "anna", editionID: 2, until: Self.date("2025-12-31"))
        try await store.subscribe(username: "anna", editionID: 1, until: Self.date("2025-06-30"))
        try await store.subscribe(username: "joan", editionID: 1, until: Self.date("2026-01-31"))
        #expect(try await store.subscriptions(userID: anna) == [
            Subscription(userID: anna, editionID: 1, until: Self.date("2025-06-30")),
            Subscription(userID: anna, editionID: 2, until: Self.date("2025-12-31")),
        ])
        try await store.subscribe(username: "ANNA", editionID: 1, until: Self.date("2026-03-31"))
        #expect(try await store.subscriptions(userID: anna).map(\.until.description) == ["2026-03-31", "2025-12-31"])
        #expect(try await store.subscriptions(userID: joan) == [Subscription(userID: joan, editionID: 1, until: Self.date("2026-01-31"))])
        #expect(try await store.subscriptions(userID: 9999) == [])
        await #expect(throws: UserAdministrationError.unknownUser("nobody")) {
            try await store.subscribe(username: "nobody", editionID: 1, until: Self.date("2026-01-01"))
        }
        await #expect(throws: UserAdministrationError.unknownEdition(99)) {
            try await store.subscribe(username: "anna", editionID: 99, until: Self.date("2026-01-01"))
        }
    }

    /// Saved identities read back as saved; saving again refreshes only the device facts; with
    /// `retiringImported`, the imported identities of the same app and device go, and nothing else.
    func identities() async throws {
        let store = try await store()
        #expect(try await store.identity(key: "k1") == nil)
        let first = DeviceIdentity(key: "k1", appKey: "quiosc", deviceKey: "d1", userID: 0,
                                   deviceInfo: ["model": "iPhone", "versió": "17.2 «beta»"], os: "iOS")
        try await store.saveIdentity(first, at: Self.t0, retiringImported: false)
        #expect(try await store.identity(key: "k1") == first)
        #expect(try await store.identity(key: "K1") == nil)

        var again = first
        again.deviceInfo = [:]
        again.os = "iPadOS"
        again.userID = 7
        try await store.saveIdentity(again, at: Self.t0 + 60, retiringImported: false)
        #expect(try await store.identity(key: "k1") == DeviceIdentity(key: "k1", appKey: "quiosc", deviceKey: "d1", userID: 0,
                                                                      deviceInfo: [:], os: "iPadOS"))

        _ = try await store.importIdentities([
            IdentityImport(key: "old-d1", appKey: "quiosc", deviceKey: "d1", username: "", demosConsumed: 0),
            IdentityImport(key: "old-d2", appKey: "quiosc", deviceKey: "d2", username: "", demosConsumed: 0),
            IdentityImport(key: "old-presencia-d1", appKey: "presencia", deviceKey: "d1", username: "", demosConsumed: 0),
        ], at: Self.t0, progress: { _, _ in })
        let second = DeviceIdentity(key: "k2", appKey: "quiosc", deviceKey: "d1", userID: 0, deviceInfo: [:], os: "iOS")
        try await store.saveIdentity(second, at: Self.t0, retiringImported: false)
        #expect(try await store.identity(key: "old-d1")?.imported == true, "kept without retiringImported")
        try await store.saveIdentity(second, at: Self.t0, retiringImported: true)
        #expect(try await store.identity(key: "old-d1") == nil)
        #expect(try await store.identity(key: "old-d2") != nil, "another device")
        #expect(try await store.identity(key: "old-presencia-d1") != nil, "another app")
        #expect(try await store.identity(key: "k1") != nil, "not imported")
        #expect(try await store.identity(key: "k2") == second)

        // An imported identity saved itself is not retired by its own save.
        let old = try #require(try await store.identity(key: "old-d2"))
        try await store.saveIdentity(old, at: Self.t0, retiringImported: true)
        #expect(try await store.identity(key: "old-d2")?.imported == true)
    }

    /// 2012 identities keep their key and user, marked imported, all or nothing; a device's demo count
    /// becomes the largest given.
    func importedIdentities() async throws {
        let store = try await store()
        let anna = try await store.addUser(username: "anna", name: "", email: "", passwordHash: "x", at: Self.t0)
        let summary = try await store.importIdentities([
            IdentityImport(key: "old-1", appKey: "quiosc", deviceKey: "ipad", username: "anna", demosConsumed: 2),
            IdentityImport(key: "old-2", appKey: "quiosc", deviceKey: "iphone", username: "", demosConsumed: 0),
        ], at: Self.t0, progress: { _, _ in })
        #expect(summary.added == 2 && summary.updated == 0)
        #expect(try await store.identity(key: "old-1") == DeviceIdentity(key: "old-1", appKey: "quiosc", deviceKey: "ipad",
                                                                         userID: anna, deviceInfo: [:], os: "", imported: true))
        #expect(try await store.identity(key: "old-2")?.userID == 0)
        #expect(try await store.demosConsumed(appKey: "quiosc", deviceKey: "ipad") == 2)
        #expect(try await store.demosConsumed(appKey: "quiosc", deviceKey: "iphone") == 0)

        let again = try await store.importIdentities([
            IdentityImport(key: "old-1", appKey: "quiosc", deviceKey: "ipad", username: "", demosConsumed: 1),
            IdentityImport(key: "old-3", appKey: "quiosc", deviceKey: "iphone", username: "", demosConsumed: 3),
        ], at: Self.t0, progress: { _, _ in })
        #expect(again.added == 1 && again.updated == 1)
        #expect(try await store.identity(key: "old-1")?.userID == 0)
        #expect(try await store.demosConsumed(appKey: "quiosc", deviceKey: "ipad") == 2, "the largest count is kept")
        #expect(try await store.demosConsumed(appKey: "quiosc", deviceKey: "iphone") == 3)

        for (rows, reason) in [
            ([IdentityImport(key: "new-1", appKey: "quiosc", deviceKey: "x", username: "", demosConsumed: 0),
              IdentityImport(key: "new-2", appKey: "nowhere", deviceKey: "x", username: "", demosConsumed: 0)],
             UserAdministrationError.unknownApp("nowhere")),
            ([IdentityImport(key: "new-1", appKey: "quiosc", deviceKey: "x", username: "", demosConsumed: 0),
              IdentityImport(key: "new-3", appKey: "quiosc", deviceKey: "y", username: "nobody", demosConsumed: 0)],
             .unknownUser("nobody")),
            ([IdentityImport(key: "new-1", appKey: "quiosc", deviceKey: "x", username: "", demosConsumed: 0),
              IdentityImport(key: "old-1", appKey: "quiosc", deviceKey: "another", username: "", demosConsumed: 0)],
             .identityKeyTaken("old-1")),
        ] {
            let error = await #expect(throws: ImportRowError.self) {
                try await store.importIdentities(rows, at: Self.t0, progress: { _, _ in })
            }
            #expect(error?.index == 1 && error?.reason == reason)
            #expect(try await store.identity(key: "new-1") == nil, "nothing of a refused import is written")
        }
    }

    /// Sightings become visible in the background, counted once per key, app and day.
    func activity() async throws {
        let store = try await store()
        let day = Self.t0 / 86_400 * 86_400
        store.recordActivity(appKey: "quiosc", identityKey: "k1", at: day + 10)
        store.recordActivity(appKey: "quiosc", identityKey: "k1", at: day + 20)
        store.recordActivity(appKey: "quiosc", identityKey: "k2", at: day + 30)
        store.recordActivity(appKey: "presencia", identityKey: "k1", at: day + 40)
        store.recordActivity(appKey: "quiosc", identityKey: "k1", at: day + 86_400)
        store.recordActivity(appKey: "quiosc", identityKey: "k1", at: day + 86_400 + 3_600)
        let today = IssueDate(unixTime: day), tomorrow = today.adding(days: 1)
        let expected = [
            KioskStatistics.ActiveDevices(day: today, appKey: "presencia", appName: "Presència", devices: 1),
            KioskStatistics.ActiveDevices(day: today, appKey: "quiosc", appName: "El Quiosc", devices: 2),
            KioskStatistics.ActiveDevices(day: tomorrow, appKey: "quiosc", appName: "El Quiosc", devices: 1),
        ]
        var seen: [KioskStatistics.ActiveDevices] = []
        for _ in 0..<100 {
            seen = try await store.statistics(StatisticsQuery()).activeDevices
            if seen == expected { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(seen == expected)
    }

    /// Every download acknowledged is recorded: 200 at once, all counted.
    func downloads() async throws {
        let store = try await store()
        let issue = Self.date("2025-05-30")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try await store.recordDownload(DownloadRecord(
                        editionID: 1, date: issue, appKey: "quiosc", identityKey: "key-\(index)", userID: 0,
                        claimedUserID: "", deviceKey: "device-\(index)", os: index % 2 == 0 ? "iOS" : "Android",
                        time: Self.t0 + Int64(index / 100) * 86_400 + Int64(index)))
                }
            }
            try await group.waitForAll()
        }
        let statistics = try await store.statistics(StatisticsQuery())
        #expect(statistics.totalDownloads == 200)
        #expect(statistics.byOS == [KioskStatistics.OSDownloads(os: "Android", downloads: 100),
                                    KioskStatistics.OSDownloads(os: "iOS", downloads: 100)])
        let today = IssueDate(unixTime: Self.t0)
        #expect(statistics.byEditionAndDay == [
            KioskStatistics.EditionDay(editionID: 1, editionName: "Nacional", day: today, downloads: 100),
            KioskStatistics.EditionDay(editionID: 1, editionName: "Nacional", day: today.adding(days: 1), downloads: 100),
        ])
        #expect(statistics.topIssues == [KioskStatistics.IssueDownloads(editionID: 1, editionName: "Nacional", date: issue, downloads: 200)])
    }

    // MARK: Demos

    /// Demos counted per (app, device) up to the quota given, atomically: of 200 calls at once on a
    /// quota of 3, exactly 3 are granted, and exactly 3 grants exist.
    func demoQuota() async throws {
        let store = try await store()
        #expect(try await store.demosConsumed(appKey: "quiosc", deviceKey: "d1") == 0)
        #expect(try await store.consumeDemo(appKey: "quiosc", deviceKey: "d1", quota: 2, at: Self.t0) == DemoOutcome(granted: true, consumed: 1))
        #expect(try await store.consumeDemo(appKey: "quiosc", deviceKey: "d1", quota: 2, at: Self.t0) == DemoOutcome(granted: true, consumed: 2))
        #expect(try await store.consumeDemo(appKey: "quiosc", deviceKey: "d1", quota: 2, at: Self.t0) == DemoOutcome(granted: false, consumed: 2))
        #expect(try await store.consumeDemo(appKey: "quiosc", deviceKey: "d1", quota: 1, at: Self.t0) == DemoOutcome(granted: false, consumed: 2))
        #expect(try await store.demosConsumed(appKey: "quiosc", deviceKey: "d1") == 2)
        #expect(try await store.consumeDemo(appKey: "presencia", deviceKey: "d1", quota: 1, at: Self.t0) == DemoOutcome(granted: true, consumed: 1))
        #expect(try await store.consumeDemo(appKey: "quiosc", deviceKey: "d2", quota: 0, at: Self.t0) == DemoOutcome(granted: false, consumed: 0))
        #expect(try await store.demosConsumed(appKey: "quiosc", deviceKey: "d2") == 0)

        let outcomes = try await withThrowingTaskGroup(of: DemoOutcome.self) { group in
            for _ in 0..<200 {
                group.addTask { try await store.consumeDemo(appKey: "quiosc", deviceKey: "race", quota: 3, at: Self.t0) }
            }
            return try await group.reduce(into: [DemoOutcome]()) { $0.append($1) }
        }
        #expect(outcomes.filter(\.granted).map(\.consumed).sorted() == [1, 2, 3])
        #expect(outcomes.filter { !$0.granted }.count == 197)
        #expect(outcomes.allSatisfy { $0.granted || $0.consumed == 3 })
        #expect(try await store.demosConsumed(appKey: "quiosc", deviceKey: "race") == 3)
        var opened = 0
        for day in 1...5 {
            if try await store.useDemoGrant(appKey: "quiosc", deviceKey: "race", editionID: 1,
                                            date: Self.date("2025-05-0\(day)"), at: Self.t0) { opened += 1 }
        }
        #expect(opened == 3, "one grant per demo granted")
    }

    /// A grant is bound to the first issue it opens, for good; it opens that issue again without using
    /// another, and belongs to its (app, device).
    func demoGrants() async throws {
        let store = try await store()
        let first = Self.date("2025-05-30"), second = Self.date("2025-05-31")
        func use(_ date: IssueDate, app: String = "quiosc", device: String = "d1", edition: Int = 1) async throws -> Bool {
            try await store.useDemoGrant(appKey: app, deviceKey: device, editionID: edition, date: date, at: Self.t0)
        }
        #expect(try await use(first) == false, "no grant yet")
        _ = try await store.consumeDemo(appKey: "quiosc", deviceKey: "d1", quota: 3, at: Self.t0)
        #expect(try await use(first, device: "d2") == false, "another device's grant")
        #expect(try await use(first, app: "presencia", edition: 8) == false, "another app's grant")
        #expect(try await use(first))
        #expect(try await use(first), "the same issue again")
        #expect(try await use(second) == false, "the grant is bound to the first issue")
        #expect(try await use(first, edition: 2) == false, "the same day of another edition is another issue")
        _ = try await store.consumeDemo(appKey: "quiosc", deviceKey: "d1", quota: 3, at: Self.t0)
        #expect(try await use(second))
        #expect(try await use(first))
        #expect(try await use(second))
        let demos = try await store.statistics(StatisticsQuery(appKey: "quiosc")).demos
        #expect(demos == [KioskStatistics.DemoUse(appKey: "quiosc", appName: "El Quiosc", devices: 1, grants: 2, used: 2, converted: 0)])
    }

    // MARK: Sign-in throttling

    /// Failures since a time (inclusive), by username in any case and by device.
    func signInFailures() async throws {
        let store = try await store()
        func failures(_ username: String, _ device: String?, since: Int64) async throws -> [Int] {
            let counts = try await store.signInFailures(username: username, deviceKey: device, since: since)
            return [counts.username, counts.device]
        }
        func attempt(_ username: String, _ device: String?, at time: Int64, max: Int = .max) async throws -> Int64? {
            try await store.beginSignInAttempt(username: username, deviceKey: device, since: Self.t0, maxFailures: max, at: time)
        }
        #expect(try await failures("anna", "d1", since: 0) == [0, 0])
        #expect(try await attempt("anna", "d1", at: Self.t0) != nil)
        #expect(try await attempt("ANNA", "d2", at: Self.t0 + 10) != nil)
        #expect(try await attempt("anna", nil, at: Self.t0 + 20) != nil)
        #expect(try await attempt("bob", "d1", at: Self.t0 + 30) != nil)
        #expect(try await failures("anna", "d1", since: Self.t0) == [3, 2])
        #expect(try await failures("Anna", "d2", since: Self.t0) == [3, 1])
        #expect(try await failures("anna", nil, since: Self.t0) == [3, 0])
        #expect(try await failures("anna", "d1", since: Self.t0 + 20) == [1, 1])
        #expect(try await failures("anna", "d1", since: Self.t0 + 21) == [0, 1])
        #expect(try await failures("carla", "d3", since: 0) == [0, 0])

        // The limit: by username in any case, and by device; a forgotten (successful) attempt frees its place.
        #expect(try await attempt("Anna", "d9", at: Self.t0 + 40, max: 3) == nil, "3 failures of anna recorded")
        #expect(try await attempt("carla", "d1", at: Self.t0 + 40, max: 2) == nil, "2 failures on d1 recorded")
        let carla = try #require(try await attempt("carla", "d3", at: Self.t0 + 40, max: 1))
        #expect(try await attempt("carla", "d4", at: Self.t0 + 41, max: 1) == nil)
        try await store.forgetSignInAttempt(carla)
        #expect(try await attempt("carla", "d4", at: Self.t0 + 42, max: 1) != nil)

        // Concurrent attempts never get past the limit.
        let admitted = try await withThrowingTaskGroup(of: Bool.self) { group in
            for n in 0..<30 {
                group.addTask { try await attempt("dani", "d-\(n)", at: Self.t0 + 50, max: 5) != nil }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(admitted == 5)
    }
}
