import KioskModels
import KioskSQLite
import Testing

/// What every store must do, whatever its database: each `Check` covers some operations of
/// `KioskStore` and `IssueRegistry`, on a fresh store from `makeStore`. A store's test target runs
/// them all, e.g. `@Test(arguments: StoreConformance.Check.allCases)`.
public struct StoreConformance: Sendable {
    public typealias StoreFactory = @Sendable () async throws -> any KioskDatabase

    /// One area of the stores' behaviour; `run` checks it.
    public enum Check: String, CaseIterable, Sendable {
        case catalogueSync, catalogueLookups, editionListings, issueListings, issueContents, publishing
        case users, subscriptions, identities, importedIdentities, activity, downloads
        case demoQuota, demoGrants, signInFailures, statistics, catalogueVersion, search
        case console, accounts, editionIssues, restoring, webKiosks, storeProducts
        case purchases, purchaseRaces
        case changeEvents, eventLog, webhookEndpoints, webhookDispatch, webhookDeliveries, webhookFairness
        case pushRegistrations, pushFanOut
    }

    let makeStore: StoreFactory

    /// `makeStore` gives an empty, migrated store each time it is called.
    public init(makeStore: @escaping StoreFactory) { self.makeStore = makeStore }

    public func run(_ check: Check) async throws {
        switch check {
        case .catalogueSync: try await catalogueSync()
        case .catalogueLookups: try await catalogueLookups()
        case .editionListings: try await editionListings()
        case .issueListings: try await issueListings()
        case .issueContents: try await issueContents()
        case .publishing: try await publishing()
        case .users: try await users()
        case .subscriptions: try await subscriptions()
        case .identities: try await identities()
        case .importedIdentities: try await importedIdentities()
        case .activity: try await activity()
        case .downloads: try await downloads()
        case .demoQuota: try await demoQuota()
        case .demoGrants: try await demoGrants()
        case .signInFailures: try await signInFailures()
        case .statistics: try await statistics()
        case .catalogueVersion: try await catalogueVersion()
        case .console: try await console()
        case .accounts: try await accounts()
        case .editionIssues: try await editionIssues()
        case .restoring: try await restoring()
        case .search: try await search()
        case .webKiosks: try await webKiosks()
        case .storeProducts: try await storeProducts()
        case .purchases: try await purchases()
        case .purchaseRaces: try await purchaseRaces()
        case .changeEvents: try await changeEvents()
        case .eventLog: try await eventLog()
        case .webhookEndpoints: try await webhookEndpoints()
        case .webhookDispatch: try await webhookDispatch()
        case .webhookDeliveries: try await webhookDeliveries()
        case .webhookFairness: try await webhookFairness()
        case .pushRegistrations: try await pushRegistrations()
        case .pushFanOut: try await pushFanOut()
        }
    }

    /// A fresh store with the sample catalogue.
    func store() async throws -> any KioskDatabase {
        let store = try await makeStore()
        try await store.syncCatalogue(SampleCatalogue.catalogue, dryRun: false)
        return store
    }

    static func date(_ text: String) -> IssueDate { IssueDate(text)! }
    static let t0 = SampleCatalogue.startTime

    // MARK: Catalogue

    static let firstSyncReport = [
        "add publication 1 \"El Punt Avui\"", "add publication 3 \"Presència\"",
        "add edition 1 \"Nacional\"", "add edition 2 \"Comarques Gironines\"", "add edition 8 \"Presència\"",
        "add app quiosc (demo quota 3)",
        "set tariff lines of app quiosc: 1:10:subscribers, 2:20:subscribers, 8:30:free",
        "set web kiosk of app quiosc: base https://quiosc.example.cat; sections portada /?hash=, compte /compte?hash= (fitxa, usuari); default portada",
        "add app presencia (demo quota 1)",
        "set tariff lines of app presencia: 8:1:subscribers",
    ]

    /// Idempotent; a dry run reports exactly what a real one does and changes nothing; lines reordered,
    /// lines and apps removed; publications and editions are never deleted.
    func catalogueSync() async throws {
        let store = try await makeStore()
        let catalogue = SampleCatalogue.catalogue
        #expect(try await store.syncCatalogue(catalogue, dryRun: true) == Self.firstSyncReport)
        #expect(try await store.app(key: "quiosc") == nil)
        #expect(try await store.edition(id: 1) == nil)
        #expect(try await store.syncCatalogue(catalogue, dryRun: false) == Self.firstSyncReport)
        #expect(try await store.app(key: "quiosc") == App(key: "quiosc", name: "El Quiosc", demoQuota: 3))
        #expect(try await store.edition(id: 8) == catalogue.editions[2])
        #expect(try await store.syncCatalogue(catalogue, dryRun: false) == [])
        #expect(try await store.syncCatalogue(catalogue, dryRun: true) == [])

        try await store.publishTestIssue(edition: 1, date: "2025-05-30")
        try await store.publishTestIssue(edition: 8, date: "2025-05-30")
        #expect(try await store.editionListings(appKey: "quiosc").map(\.offered.edition.id) == [1, 8])

        // Reordered: 8 before 1.
        var reordered = catalogue
        reordered.tariffLines[2].order = 5
        #expect(try await store.syncCatalogue(reordered, dryRun: false)
                == ["set tariff lines of app quiosc: 1:10:subscribers, 2:20:subscribers, 8:5:free"])
        #expect(try await store.editionListings(appKey: "quiosc").map(\.offered.edition.id) == [8, 1])

        var changed = reordered
        changed.publications[0].name = "El Punt Avui+"
        changed.editions[1].name = "Girona"
        changed.apps[0].demoQuota = 5
        changed.apps.removeAll { $0.key == "presencia" }
        changed.tariffLines.removeAll { $0.appKey == "presencia" || $0.editionID == 2 }
        let report = [
            "rename publication 1 to \"El Punt Avui+\"",
            "update edition 2 \"Girona\"",
            "remove app presencia",
            "update app quiosc (demo quota 5)",
            "set tariff lines of app quiosc: 1:10:subscribers, 8:5:free",
        ]
        #expect(try await store.syncCatalogue(changed, dryRun: true) == report)
        #expect(try await store.app(key: "presencia") != nil)
        #expect(try await store.app(key: "quiosc")?.demoQuota == 3)
        #expect(try await store.edition(id: 2)?.name == "Comarques Gironines")
        #expect(try await store.offeredEdition(appKey: "quiosc", editionID: 2) != nil)
        #expect(try await store.offeredEdition(appKey: "quiosc", editionID: 1)?.publicationName == "El Punt Avui")

        #expect(try await store.syncCatalogue(changed, dryRun: false) == report)
        #expect(try await store.app(key: "presencia") == nil)
        #expect(try await store.offeredEdition(appKey: "presencia", editionID: 8) == nil)
        #expect(try await store.editionListings(appKey: "presencia") == [])
        #expect(try await store.app(key: "quiosc")?.demoQuota == 5)
        #expect(try await store.edition(id: 2)?.name == "Girona")
        #expect(try await store.offeredEdition(appKey: "quiosc", editionID: 2) == nil)
        #expect(try await store.offeredEdition(appKey: "quiosc", editionID: 1)?.publicationName == "El Punt Avui+")
        #expect(try await store.syncCatalogue(changed, dryRun: false) == [])

        var shrunk = changed
        shrunk.editions.removeAll { $0.id == 2 }
        #expect(try await store.syncCatalogue(shrunk, dryRun: false) == [])
        #expect(try await store.edition(id: 2)?.name == "Girona", "editions are never deleted")
    }

    /// `app`, `edition` and `offeredEdition`; app keys are exact.
    func catalogueLookups() async throws {
        let store = try await store()
        #expect(try await store.app(key: "quiosc") == App(key: "quiosc", name: "El Quiosc", demoQuota: 3))
        #expect(try await store.app(key: "presencia") == App(key: "presencia", name: "Presència", demoQuota: 1))
        #expect(try await store.app(key: "QUIOSC") == nil)
        #expect(try await store.app(key: "") == nil)
        #expect(try await store.edition(id: 2) == Edition(id: 2, publicationID: 1, name: "Comarques Gironines",
                                                          createdOn: Self.date("2010-03-01")))
        #expect(try await store.edition(id: 99) == nil)
        let nacional = Edition(id: 1, publicationID: 1, name: "Nacional", createdOn: Self.date("2010-03-01"))
        let presencia = Edition(id: 8, publicationID: 3, name: "Presència", createdOn: Self.date("2011-10-02"))
        #expect(try await store.offeredEdition(appKey: "quiosc", editionID: 1) == OfferedEdition(
            line: TariffLine(appKey: "quiosc", editionID: 1, order: 10, access: .subscribers), edition: nacional,
            publicationName: "El Punt Avui"))
        #expect(try await store.offeredEdition(appKey: "quiosc", editionID: 8) == OfferedEdition(
            line: TariffLine(appKey: "quiosc", editionID: 8, order: 30, access: .free), edition: presencia,
            publicationName: "Presència"))
        #expect(try await store.offeredEdition(appKey: "presencia", editionID: 8)?.line
                == TariffLine(appKey: "presencia", editionID: 8, order: 1, access: .subscribers))
        #expect(try await store.offeredEdition(appKey: "presencia", editionID: 1) == nil)
        #expect(try await store.offeredEdition(appKey: "nope", editionID: 1) == nil)
        #expect(try await store.offeredEdition(appKey: "quiosc", editionID: 99) == nil)
    }

    // MARK: Issues

    /// Offered editions with a visible issue, by line order, each with its newest visible issue and cover.
    func editionListings() async throws {
        let store = try await store()
        #expect(try await store.editionListings(appKey: "quiosc") == [])
        try await store.publishTestIssue(edition: 1, date: "2025-05-28")
        try await store.publishTestIssue(edition: 1, date: "2025-05-30")
        try await store.publishTestIssue(edition: 8, date: "2025-05-25")
        let listings = try await store.editionListings(appKey: "quiosc")
        #expect(listings.map(\.offered.edition.id) == [1, 8], "edition 2 has no issue")
        #expect(listings.first?.newest == IssueSummary(date: Self.date("2025-05-30"), coverPath: "1/2025-05-30/r1/jpg/001.jpg"))
        #expect(listings.last?.newest == IssueSummary(date: Self.date("2025-05-25"), coverPath: "8/2025-05-25/r1/jpg/001.jpg"))
        for listing in listings {
            #expect(try await store.offeredEdition(appKey: "quiosc", editionID: listing.offered.edition.id) == listing.offered)
        }
        #expect(try await store.editionListings(appKey: "presencia").map(\.offered.line)
                == [TariffLine(appKey: "presencia", editionID: 8, order: 1, access: .subscribers)])
        #expect(try await store.editionListings(appKey: "nope") == [])

        // The newest visible issue; the cover is the lowest page number whatever the order given.
        #expect(try await store.withdrawIssue(editionID: 1, date: Self.date("2025-05-30"), at: Self.t0))
        #expect(try await store.editionListings(appKey: "quiosc").first?.newest.date == Self.date("2025-05-28"))
        let pages = TestIssues.pages(edition: 2, date: Self.date("2025-05-29"), revision: 1, count: 4).reversed()
        _ = try await store.publishIssue(editionID: 2, date: Self.date("2025-05-29"), revision: 1, pages: Array(pages),
                                         bundle: nil, at: Self.t0)
        try await store.publishTestIssue(edition: 8, date: "2025-05-26", pages: 0)
        let after = try await store.editionListings(appKey: "quiosc")
        #expect(after.map(\.offered.edition.id) == [1, 2, 8])
        #expect(after.map(\.newest) == [
            IssueSummary(date: Self.date("2025-05-28"), coverPath: "1/2025-05-28/r1/jpg/001.jpg"),
            IssueSummary(date: Self.date("2025-05-29"), coverPath: "2/2025-05-29/r1/jpg/001.jpg"),
            IssueSummary(date: Self.date("2025-05-26"), coverPath: nil),
        ])
        #expect(try await store.withdrawIssue(editionID: 1, date: Self.date("2025-05-28"), at: Self.t0))
        #expect(try await store.editionListings(appKey: "quiosc").map(\.offered.edition.id) == [2, 8])
    }

    /// Both directions from a date (inclusive) or from the newest, with limits; withdrawn issues and
    /// other editions' issues never appear.
    func issueListings() async throws {
        let store = try await store()
        for day in 26...31 { try await store.publishTestIssue(edition: 1, date: "2025-05-\(day)") }
        try await store.publishTestIssue(edition: 2, date: "2025-05-30")
        #expect(try await store.withdrawIssue(editionID: 1, date: Self.date("2025-05-29"), at: Self.t0))
        func dates(from date: String?, _ direction: ListingDirection, limit: Int = 7) async throws -> [String] {
            try await store.issues(editionID: 1, from: date.map(Self.date), direction: direction, limit: limit)
                .map(\.date.description)
        }
        #expect(try await dates(from: nil, .descending) == ["2025-05-31", "2025-05-30", "2025-05-28", "2025-05-27", "2025-05-26"])
        #expect(try await dates(from: nil, .descending, limit: 2) == ["2025-05-31", "2025-05-30"])
        #expect(try await dates(from: nil, .ascending, limit: 2) == ["2025-05-31", "2025-05-30"], "no date: the newest, newest first")
        #expect(try await dates(from: "2025-05-30", .descending, limit: 2) == ["2025-05-30", "2025-05-28"])
        #expect(try await dates(from: "2025-05-29", .descending) == ["2025-05-28", "2025-05-27", "2025-05-26"])
        #expect(try await dates(from: "2025-05-27", .ascending, limit: 2) == ["2025-05-27", "2025-05-28"])
        #expect(try await dates(from: "2025-05-28", .ascending) == ["2025-05-28", "2025-05-30", "2025-05-31"])
        #expect(try await dates(from: "2025-06-10", .descending, limit: 1) == ["2025-05-31"])
        #expect(try await dates(from: "2025-06-10", .ascending) == [])
        #expect(try await dates(from: "2025-05-01", .descending) == [])
        let covers = try await store.issues(editionID: 1, from: Self.date("2025-05-27"), direction: .ascending, limit: 1)
        #expect(covers == [IssueSummary(date: Self.date("2025-05-27"), coverPath: "1/2025-05-27/r1/jpg/001.jpg")])
        #expect(try await store.issues(editionID: 8, from: nil, direction: .descending, limit: 7) == [])
    }

    /// A visible issue's pages in number order with their sections and files, its revision and bundle.
    func issueContents() async throws {
        let store = try await store()
        let day = Self.date("2025-05-30")
        let pages = TestIssues.pages(edition: 1, date: day, revision: 1, count: 3)
        let bundle = TestIssues.bundle(edition: 1, date: day, revision: 1)
        _ = try await store.publishIssue(editionID: 1, date: day, revision: 1, pages: [pages[2], pages[0], pages[1]],
                                         bundle: bundle, at: Self.t0)
        let contents = try #require(try await store.issueContents(editionID: 1, date: day))
        #expect(contents.editionID == 1 && contents.date == day && contents.revision == 1 && contents.bundle == bundle)
        #expect(contents.pages.map(\.number) == [1, 2, 3])
        #expect(contents.pages.map(\.section) == [Section(id: 1, name: "Portada"), Section(id: 2, name: "Política"),
                                                  Section(id: 2, name: "Política")])
        #expect(contents.pages.map(\.files) == pages.map(\.files))
        #expect(Set(contents.pages.map(\.id)).count == 3 && contents.pages.allSatisfy { $0.id > 0 })
        #expect(try await store.issueContents(editionID: 1, date: Self.date("2025-05-31")) == nil)
        #expect(try await store.issueContents(editionID: 2, date: day) == nil)

        // A republication replaces the pages and the bundle.
        _ = try await store.publishIssue(editionID: 1, date: day, revision: 2,
                                         pages: TestIssues.pages(edition: 1, date: day, revision: 2, count: 2),
                                         bundle: nil, at: Self.t0 + 60)
        let second = try #require(try await store.issueContents(editionID: 1, date: day))
        #expect(second.revision == 2 && second.bundle == nil)
        #expect(second.pages.map(\.files.pdf) == ["1/2025-05-30/r2/pdf/001.pdf", "1/2025-05-30/r2/pdf/002.pdf"])

        // A section's name is the one last published, in every issue.
        let renamed = [PublishedPage(number: 1, section: Section(id: 2, name: "Política i Societat"),
                                     files: PageFiles(pdf: "a.pdf", jpg: "a.jpg", jpgA: "aA.jpg"))]
        _ = try await store.publishIssue(editionID: 2, date: day, revision: 1, pages: renamed, bundle: nil, at: Self.t0)
        #expect(try await store.issueContents(editionID: 1, date: day)?.pages.last?.section.name == "Política i Societat")

        #expect(try await store.withdrawIssue(editionID: 1, date: day, at: Self.t0 + 120))
        #expect(try await store.issueContents(editionID: 1, date: day) == nil)
    }

    /// `nextRevision`, `publishIssue`, `withdrawIssue`, `setBundle` and `storedRevisions`.
    func publishing() async throws {
        let store = try await store()
        let day = Self.date("2025-05-30")
        #expect(try await store.nextRevision(editionID: 1, date: day) == 1)
        #expect(try await store.publishIssue(editionID: 1, date: day, revision: 1,
                                             pages: TestIssues.pages(edition: 1, date: day, revision: 1, count: 2),
                                             bundle: nil, at: Self.t0) == nil)
        #expect(try await store.nextRevision(editionID: 1, date: day) == 2)
        #expect(try await store.nextRevision(editionID: 2, date: day) == 1)
        #expect(try await store.publishIssue(editionID: 1, date: day, revision: 2,
                                             pages: TestIssues.pages(edition: 1, date: day, revision: 2, count: 2),
                                             bundle: nil, at: Self.t0) == 1, "returns the revision it replaced")

        #expect(try await store.withdrawIssue(editionID: 1, date: day, at: Self.t0))
        #expect(try await store.withdrawIssue(editionID: 1, date: day, at: Self.t0) == false, "already withdrawn")
        #expect(try await store.withdrawIssue(editionID: 2, date: day, at: Self.t0) == false, "never published")
        #expect(try await store.nextRevision(editionID: 1, date: day) == 3, "a withdrawn issue keeps its revision")
        try await store.publishTestIssue(edition: 8, date: "2025-05-25")
        func stored() async throws -> Set<String> {
            Set(try await store.storedRevisions().map { "\($0.editionID) \($0.date) \($0.revision)" })
        }
        #expect(try await stored() == ["1 2025-05-30 2", "8 2025-05-25 1"], "withdrawn issues included")

        #expect(try await store.publishIssue(editionID: 1, date: day, revision: 3,
                                             pages: TestIssues.pages(edition: 1, date: day, revision: 3, count: 1),
                                             bundle: nil, at: Self.t0) == 2)
        #expect(try await store.issueContents(editionID: 1, date: day)?.revision == 3, "republished: visible again")
        #expect(try await stored() == ["1 2025-05-30 3", "8 2025-05-25 1"])

        let stale = TestIssues.bundle(edition: 1, date: day, revision: 2)
        try await store.setBundle(editionID: 1, date: day, revision: 2, bundle: stale, at: SampleCatalogue.startTime)
        #expect(try await store.issueContents(editionID: 1, date: day)?.bundle == nil, "a bundle of an old revision is ignored")
        let current = TestIssues.bundle(edition: 1, date: day, revision: 3)
        try await store.setBundle(editionID: 1, date: day, revision: 3, bundle: current, at: SampleCatalogue.startTime)
        #expect(try await store.issueContents(editionID: 1, date: day)?.bundle == current)
    }

    /// The version moves with every change catalogue answers show (sync, publish, withdraw, a bundle
    /// recorded), and only with those: readers' traffic (downloads, identities, demos) leaves it alone.
    func catalogueVersion() async throws {
        let store = try await makeStore()
        var last = try await store.catalogueVersion()
        func changed(_ what: String, _ expected: Bool = true) async throws {
            let now = try await store.catalogueVersion()
            #expect((now != last) == expected, "\(what): version \(last) -> \(now)")
            let atOnce = store.catalogueVersionAtOnce()
            #expect(atOnce == nil || atOnce == now, "\(what): read at once \(atOnce.map(String.init) ?? "nil"), read \(now)")
            last = now
        }
        try await store.syncCatalogue(SampleCatalogue.catalogue, dryRun: false)
        try await changed("first sync")
        try await store.syncCatalogue(SampleCatalogue.catalogue, dryRun: false)
        try await changed("a sync without changes", false)
        var lowered = SampleCatalogue.catalogue
        lowered.apps[0].demoQuota -= 1
        try await store.syncCatalogue(lowered, dryRun: true)
        try await changed("a dry run", false)
        try await store.syncCatalogue(lowered, dryRun: false)
        try await changed("a demo quota lowered")
        let day = Self.date("2025-05-30")
        _ = try await store.publishIssue(editionID: 1, date: day, revision: 1,
                                         pages: TestIssues.pages(edition: 1, date: day, revision: 1, count: 2), bundle: nil, at: Self.t0)
        try await changed("publish")
        try await store.setBundle(editionID: 1, date: day, revision: 1, bundle: TestIssues.bundle(edition: 1, date: day, revision: 1),
                                 at: SampleCatalogue.startTime)
        try await changed("bundle recorded")
        try await store.recordDownload(DownloadRecord(editionID: 1, date: day, appKey: "quiosc", identityKey: "k", userID: 0,
                                                      claimedUserID: "", deviceKey: "d", os: "iOS", time: Self.t0))
        _ = try await store.consumeDemo(appKey: "quiosc", deviceKey: "d", quota: 3, at: Self.t0)
        try await changed("a download and a demo", false)
        #expect(try await store.withdrawIssue(editionID: 1, date: day, at: Self.t0))
        try await changed("withdraw")
    }
}
