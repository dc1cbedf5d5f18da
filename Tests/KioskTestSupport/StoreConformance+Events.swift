import Foundation
import KioskModels
import Testing

/// What a `changePurchase` closure throws to refuse a change.
private struct Refused: Error {}

/// A clock reading of the machine, for events whose change is given no time (a restore, a sync, a subscription).
private func wallClock() -> Int64 { Int64(Date().timeIntervalSince1970) }

extension StoreConformance {
    /// The events appended after `mark`, as the changes made them (type and body), each timed within
    /// `time`; `mark` moves past them.
    func appended(_ store: any KioskDatabase, after mark: inout Int64, at time: ClosedRange<Int64>,
                  sourceLocation: SourceLocation = #_sourceLocation) async throws -> [NewEvent] {
        let events = try await store.events(after: mark, types: nil, limit: 1_000)
        for event in events {
            #expect(time.contains(event.time), "\(event.type) at \(event.time), not in \(time)", sourceLocation: sourceLocation)
        }
        #expect(events.map(\.id) == events.map(\.id).sorted(), sourceLocation: sourceLocation)
        mark = events.last?.id ?? mark
        return events.map { NewEvent($0.type, $0.body) }
    }

    /// Each change appends exactly its events, with its time, in its transaction: a catalogue sync (not a
    /// dry run) its diff's; a publish, republish, withdrawal and restore theirs (none when nothing changed);
    /// a reader added; subscriptions set (none when unchanged), by `subscribe` and `importUsers` (none for
    /// an import that fails); a store purchase granted and revoked, none for a change that changes nothing,
    /// a refused change or a move to a reader.
    func changeEvents() async throws {
        let store = try await makeStore()
        let t = Self.t0
        var mark: Int64 = 0
        func wall(_ start: Int64) -> ClosedRange<Int64> { start...(wallClock() + 1) }

        #expect(try await store.syncCatalogue(SampleCatalogue.catalogue, dryRun: true) == Self.firstSyncReport)
        #expect(try await store.eventBounds() == nil, "a dry run appends no event")
        var started = wallClock()
        _ = try await store.syncCatalogue(SampleCatalogue.catalogue, dryRun: false)
        let report = Self.firstSyncReport
        #expect(try await appended(store, after: &mark, at: wall(started)) == [
            NewEvent(.editionAdded, EventBody(edition: 1, summary: report[2])),
            NewEvent(.editionAdded, EventBody(edition: 2, summary: report[3])),
            NewEvent(.editionAdded, EventBody(edition: 8, summary: report[4])),
            NewEvent(.appAdded, EventBody(app: "quiosc", summary: report[5...7].joined(separator: "; "))),
            NewEvent(.appAdded, EventBody(app: "presencia", summary: report[8...9].joined(separator: "; "))),
        ])
        _ = try await store.syncCatalogue(SampleCatalogue.catalogue, dryRun: false)
        var changed = SampleCatalogue.catalogue
        changed.editions[1].name = "Girona"
        changed.apps[0].demoQuota = 5
        _ = try await store.syncCatalogue(changed, dryRun: true)
        #expect(try await appended(store, after: &mark, at: wall(started)) == [], "an unchanged sync and a dry run append none")
        started = wallClock()
        _ = try await store.syncCatalogue(changed, dryRun: false)
        #expect(try await appended(store, after: &mark, at: wall(started)) == [
            NewEvent(.editionChanged, EventBody(edition: 2, summary: "update edition 2 \"Girona\"")),
            NewEvent(.appChanged, EventBody(app: "quiosc", summary: "update app quiosc (demo quota 5)")),
        ])

        // Publishing: first, again (a republish), withdrawn once, restored once.
        let day = Self.date("2025-05-30")
        let first = try await store.publishTestIssue(edition: 1, date: "2025-05-30", at: t)
        let second = try await store.publishTestIssue(edition: 1, date: "2025-05-30", at: t + 1)
        #expect(try await appended(store, after: &mark, at: t...(t + 1)) == [
            NewEvent(.issuePublished, EventBody(edition: 1, date: "2025-05-30", revision: first)),
            NewEvent(.issueRepublished, EventBody(edition: 1, date: "2025-05-30", revision: second)),
        ])
        #expect(try await store.withdrawIssue(editionID: 1, date: day, at: t + 2))
        #expect(try await store.withdrawIssue(editionID: 1, date: day, at: t + 3) == false)
        #expect(try await appended(store, after: &mark, at: (t + 2)...(t + 2)) == [
            NewEvent(.issueWithdrawn, EventBody(edition: 1, date: "2025-05-30")),
        ])
        started = wallClock()
        #expect(try await store.restoreIssue(editionID: 1, date: day, revision: second))
        #expect(try await store.restoreIssue(editionID: 1, date: day, revision: second) == false)
        #expect(try await appended(store, after: &mark, at: wall(started)) == [
            NewEvent(.issueRestored, EventBody(edition: 1, date: "2025-05-30", revision: second)),
        ])

        // Readers and subscriptions.
        let anna = try await store.addUser(username: "anna", name: "", email: "", passwordHash: "x", at: t + 10)
        #expect(try await appended(store, after: &mark, at: (t + 10)...(t + 10)) == [NewEvent(.readerAdded, EventBody(reader: anna))])
        started = wallClock()
        try await store.subscribe(username: "anna", editionID: 1, until: Self.date("2025-12-31"))
        try await store.subscribe(username: "anna", editionID: 1, until: Self.date("2025-12-31"))
        try await store.subscribe(username: "anna", editionID: 1, until: Self.date("2026-03-31"))
        await #expect(throws: UserAdministrationError.unknownEdition(99)) {
            try await store.subscribe(username: "anna", editionID: 99, until: Self.date("2026-01-01"))
        }
        #expect(try await appended(store, after: &mark, at: wall(started)) == [
            NewEvent(.subscriptionGranted, EventBody(edition: 1, reader: anna, until: "2025-12-31")),
            NewEvent(.subscriptionRenewed, EventBody(edition: 1, reader: anna, until: "2026-03-31")),
        ], "setting the same end again changes nothing")
        let summary = try await store.importUsers([
            UserImport(username: "anna", name: "Anna", email: "", passwordHash: "x",
                       subscriptions: [(editionID: 1, until: Self.date("2026-03-31")), (editionID: 8, until: Self.date("2026-01-31"))]),
            UserImport(username: "bernat", name: "", email: "", passwordHash: "y",
                       subscriptions: [(editionID: 2, until: Self.date("2026-02-28"))]),
            UserImport(username: "carme", name: "", email: "", passwordHash: "z"),
        ], at: t + 20)
        #expect(summary.added == 2 && summary.updated == 1 && summary.subscriptions == 3)
        let bernat = try #require(try await store.user(username: "bernat")).id
        let carme = try #require(try await store.user(username: "carme")).id
        #expect(try await appended(store, after: &mark, at: (t + 20)...(t + 20)) == [
            NewEvent(.subscriptionGranted, EventBody(edition: 8, reader: anna, until: "2026-01-31")),
            NewEvent(.readerAdded, EventBody(reader: bernat)),
            NewEvent(.subscriptionGranted, EventBody(edition: 2, reader: bernat, until: "2026-02-28")),
            NewEvent(.readerAdded, EventBody(reader: carme)),
        ])
        await #expect(throws: UserAdministrationError.unknownEdition(99)) {
            _ = try await store.importUsers([
                UserImport(username: "dolors", name: "", email: "", passwordHash: "x",
                           subscriptions: [(editionID: 1, until: Self.date("2026-01-31"))]),
                UserImport(username: "anna", name: "", email: "", passwordHash: "x",
                           subscriptions: [(editionID: 99, until: Self.date("2026-01-31"))]),
            ], at: t + 30)
        }
        #expect(try await appended(store, after: &mark, at: t...t) == [], "a failed import appends none")

        // Store purchases: granted to a reader, a change that changes nothing, a refused change, revoked by an
        // operator; a device's moved to a reader (a change of holder alone) appends none.
        let facts = StoreFacts(store: .apple, originalID: "5000", storeProductID: "cat.quiosc.exemplar", environment: "Production",
                               payment: StorePayment(id: "t-5", paidAt: t + 40, price: 1_490, currency: "EUR", signedAt: (t + 40) * 1_000))
        var bought = HeldPurchase(appKey: "quiosc", facts: facts, product: Self.single, at: t + 40)
        let claimedByAnna = try bought.claim(by: PurchaseClaimant(userID: anna, deviceKey: "dev-a", accountTokens: []), deviceLimit: 2, at: t + 41)
        #expect(claimedByAnna)
        let stored = bought
        _ = try await store.changePurchase(appKey: "quiosc", store: .apple, originalID: "5000", recording: nil) { held in held = stored }
        let grantBody = EventBody(app: "quiosc", reader: anna, store: "apple", purchase: "5000", product: "cat.quiosc.exemplar")
        #expect(try await appended(store, after: &mark, at: (t + 41)...(t + 41)) == [NewEvent(.purchaseGranted, grantBody)])
        _ = try await store.changePurchase(appKey: "quiosc", store: .apple, originalID: "5000", recording: nil) { _ in }
        await #expect(throws: Refused.self) {
            _ = try await store.changePurchase(appKey: "quiosc", store: .apple, originalID: "5000", recording: nil) { held in
                held?.setRevokedByOperator(true, at: t + 50)
                throw Refused()
            }
        }
        await #expect(throws: Refused.self) {
            _ = try await store.changePurchase(appKey: "quiosc", store: .apple, originalID: "5001",
                                               recording: Self.notice("n-refused", originalID: "5001", at: t + 50)) { held in
                var other = stored
                other.purchase.originalID = "5001"
                held = other
                throw Refused()
            }
        }
        #expect(try await appended(store, after: &mark, at: t...t) == [], "unchanged and refused changes append none")
        _ = try await store.changePurchase(appKey: "quiosc", store: .apple, originalID: "5000", recording: nil) { held in
            held?.setRevokedByOperator(true, at: t + 60)
        }
        #expect(try await appended(store, after: &mark, at: (t + 60)...(t + 60)) == [NewEvent(.purchaseRevoked, grantBody)])

        var device = HeldPurchase(appKey: "quiosc", facts: StoreFacts(store: .apple, originalID: "6000", storeProductID: "cat.quiosc.exemplar",
                                                                      environment: "Production",
                                                                      payment: StorePayment(id: "t-6", paidAt: t + 70, signedAt: (t + 70) * 1_000)),
                                  product: Self.single, at: t + 70)
        let claimedOnDevice = try device.claim(by: PurchaseClaimant(userID: 0, deviceKey: "dev-b", accountTokens: []), deviceLimit: 2, at: t + 70)
        #expect(claimedOnDevice)
        let onDevice = device
        _ = try await store.changePurchase(appKey: "quiosc", store: .apple, originalID: "6000", recording: nil) { held in held = onDevice }
        #expect(try await appended(store, after: &mark, at: (t + 70)...(t + 70)) == [
            NewEvent(.purchaseGranted, EventBody(app: "quiosc", store: "apple", purchase: "6000", product: "cat.quiosc.exemplar")),
        ])
        try await store.movePurchases(appKey: "quiosc", deviceKey: "dev-b", toUser: anna, at: t + 80)
        #expect(try await store.purchase(appKey: "quiosc", store: .apple, originalID: "6000")?.holder == .reader(userID: anna))
        #expect(try await appended(store, after: &mark, at: t...t) == [], "a move to the reader appends none")
    }

    /// `events(after:types:limit:)` in id order, after a position, filtered by type, limited; `eventBounds`;
    /// `appendEvent`; `pruneEvents` removes only old events already offered with no delivery waiting, and
    /// an id is never given again, even the newest's once pruned.
    func eventLog() async throws {
        let store = try await makeStore()
        let t = Self.t0
        #expect(try await store.eventBounds() == nil)
        #expect(try await store.events(after: 0, types: nil, limit: 10) == [])
        let made = [
            NewEvent(.readerAdded, EventBody(reader: 1)),
            NewEvent(.webhookTest, EventBody()),
            NewEvent(.issueWithdrawn, EventBody(edition: 1, date: "2025-05-30")),
            NewEvent(.readerAdded, EventBody(reader: 2)),
            NewEvent(.issueWithdrawn, EventBody(edition: 8, date: "2025-05-31")),
        ]
        var events: [KioskEvent] = []
        for (n, event) in made.enumerated() {
            let appended = try await store.appendEvent(event, at: t + Int64(n))
            #expect(appended.type == event.type && appended.body == event.body && appended.time == t + Int64(n))
            #expect(appended.id > (events.last?.id ?? 0))
            events.append(appended)
        }
        let ids = events.map(\.id)
        #expect(try await store.events(after: 0, types: nil, limit: 100) == events)
        #expect(try await store.events(after: ids[1], types: nil, limit: 100) == Array(events[2...]))
        #expect(try await store.events(after: 0, types: nil, limit: 2) == Array(events[..<2]))
        #expect(try await store.events(after: ids[4], types: nil, limit: 100) == [])
        #expect(try await store.events(after: 0, types: [.readerAdded], limit: 100) == [events[0], events[3]])
        #expect(try await store.events(after: ids[0], types: [.readerAdded, .webhookTest], limit: 100) == [events[1], events[3]])
        #expect(try await store.events(after: 0, types: [.issueWithdrawn], limit: 1) == [events[2]])
        #expect(try await store.events(after: 0, types: [], limit: 100) == [])
        #expect(try await store.events(after: 0, types: nil, limit: 0) == [])
        #expect(try await store.eventBounds() == ids[0]...ids[4])

        // Nothing offered yet: nothing pruned.
        #expect(try await store.pruneEvents(before: t + 1_000) == 0)
        let endpoint = try await store.saveWebhookEndpoint(WebhookEndpoint(source: .console, name: "crm", owner: "ops",
                                                                           url: "https://crm.example/hook", types: [.readerAdded],
                                                                           secrets: ["whsec_a"], createdAt: t))
        #expect(try await store.dispatchEvents(limit: 3, at: t + 10) == 3)
        // Offered: 0 (its delivery waits), 1 and 2 (none for them). Older than t + 2: 0 and 1.
        #expect(try await store.pruneEvents(before: t + 2) == 1)
        #expect(try await store.events(after: 0, types: nil, limit: 100).map(\.id) == [ids[0], ids[2], ids[3], ids[4]])
        #expect(try await store.pruneEvents(before: t + 1_000) == 1, "3 and 4 were not offered; 0 waits")
        #expect(try await store.eventBounds() == ids[0]...ids[4])
        let claimed = try await store.claimDeliveries(worker: "w", now: t + 10, leaseUntil: t + 70, limit: 10)
        #expect(claimed.map(\.event) == [events[0]] && claimed.map(\.endpoint) == [endpoint])
        #expect(try await store.pruneEvents(before: t + 1_000) == 0, "leased, still waiting")
        let attempt = DeliveryAttempt(deliveryID: claimed[0].id, endpointID: endpoint.id, eventID: ids[0], eventType: .readerAdded,
                                      attempt: 1, time: t + 11, status: 204, latencyMilliseconds: 12, answer: "")
        #expect(try await store.finishDelivery(claimed[0], worker: "w", attempt: attempt, next: .done, endpoint: .none))
        #expect(try await store.pruneEvents(before: t + 1_000) == 1, "delivered")
        #expect(try await store.eventBounds() == ids[3]...ids[4])
        #expect(try await store.deliveryLog(endpointID: endpoint.id, limit: 10) == [], "a pruned event's log goes with it")

        // The newest pruned: the next event still gets a new id.
        #expect(try await store.dispatchEvents(limit: 10, at: t + 20) == 2)
        #expect(try await store.pruneEvents(before: t + 1_000) == 1, "4 went; 3 waits")
        #expect(try await store.eventBounds() == ids[3]...ids[3])
        let next = try await store.appendEvent(NewEvent(.webhookTest, EventBody()), at: t + 30)
        #expect(next.id > ids[4], "\(next.id) after \(ids[4])")
        #expect(try await store.events(after: ids[3], types: nil, limit: 10) == [next])
    }

    static func endpoint(_ name: String, source: WebhookEndpoint.Source = .console, owner: String = "ops",
                         types: Set<EventType> = [], enabled: Bool = true) -> WebhookEndpoint {
        WebhookEndpoint(source: source, name: name, owner: owner, url: "https://\(name).example/hooks", types: types,
                        secrets: ["whsec_\(name)1", "whsec_\(name)2"], enabled: enabled, createdAt: t0)
    }

    /// Endpoints saved and read back, by owner, updated, deleted with their deliveries and log; an update of
    /// none refused; an operator's change (`changeWebhookEndpoint`) keeps what deliveries recorded;
    /// `syncFileEndpoints` adds, removes and updates the file's by name, keeping an updated one's id, state
    /// and log, and never touching the console's.
    func webhookEndpoints() async throws {
        let store = try await makeStore()
        let t = Self.t0
        #expect(try await store.webhookEndpoints(owner: nil) == [])
        var a = try await store.saveWebhookEndpoint(Self.endpoint("a", types: [.issuePublished, .issueWithdrawn]))
        let b = try await store.saveWebhookEndpoint(Self.endpoint("b", owner: "anna"))
        #expect(a.id > 0 && b.id > a.id)
        var expectedA = Self.endpoint("a", types: [.issuePublished, .issueWithdrawn])
        expectedA.id = a.id
        #expect(a == expectedA)
        #expect(try await store.webhookEndpoint(id: a.id) == a)
        #expect(try await store.webhookEndpoint(id: b.id + 100) == nil)
        #expect(try await store.webhookEndpoints(owner: nil) == [a, b])
        #expect(try await store.webhookEndpoints(owner: "anna") == [b])
        #expect(try await store.webhookEndpoints(owner: "nobody") == [])
        a.url = "https://a.example/other"
        a.types = []
        a.secrets = ["whsec_new"]
        a.enabled = false
        a.disabledReason = "by an operator"
        a.failingSince = t + 5
        #expect(try await store.saveWebhookEndpoint(a) == a)
        #expect(try await store.webhookEndpoint(id: a.id) == a)
        var ghost = a
        ghost.id = b.id + 100
        await #expect(throws: WebhookStoreError.unknownEndpoint(ghost.id)) { _ = try await store.saveWebhookEndpoint(ghost) }

        // The file's endpoints; one gets a log and a failure before the file changes.
        try await store.syncFileEndpoints([Self.endpoint("f1", source: .file), Self.endpoint("f2", source: .file, types: [.readerAdded])])
        let files = try await store.webhookEndpoints(owner: nil).filter { $0.source == .file }
        #expect(files.map(\.name) == ["f1", "f2"])
        let f1 = try #require(files.first)
        let f2 = files[1]
        _ = try await store.appendEvent(NewEvent(.readerAdded, EventBody(reader: 1)), at: t)
        #expect(try await store.dispatchEvents(limit: 10, at: t) == 1)
        let claimed = try await store.claimDeliveries(worker: "w", now: t, leaseUntil: t + 60, limit: 10)
        #expect(Set(claimed.map(\.endpoint.name)) == ["b", "f1", "f2"], "a is disabled")
        let toF1 = try #require(claimed.first { $0.endpoint.id == f1.id })
        let tried = DeliveryAttempt(deliveryID: toF1.id, endpointID: f1.id, eventID: toF1.event.id, eventType: .readerAdded, attempt: 1,
                                    time: t + 1, status: 500, latencyMilliseconds: 30, answer: "oops")
        #expect(try await store.finishDelivery(toF1, worker: "w", attempt: tried, next: .retry(at: t + 6), endpoint: .startedFailing))
        #expect(try await store.webhookEndpoint(id: f1.id)?.failingSince == t + 1)

        var changedF1 = Self.endpoint("f1", source: .file, owner: "ops2", types: [.issueRestored])
        changedF1.url = "https://f1.example/v2"
        changedF1.createdAt = t + 99
        try await store.syncFileEndpoints([changedF1, Self.endpoint("f3", source: .file)])
        let synced = try await store.webhookEndpoints(owner: nil)
        #expect(synced.map(\.name) == ["a", "b", "f1", "f3"], "f2 went; the console's stay")
        let newF1 = try #require(synced.first { $0.name == "f1" })
        #expect(newF1.id == f1.id && newF1.url == "https://f1.example/v2" && newF1.owner == "ops2" && newF1.types == [.issueRestored])
        #expect(newF1.failingSince == t + 1 && newF1.enabled && newF1.createdAt == f1.createdAt, "its state is kept")
        #expect(try await store.deliveryLog(endpointID: f1.id, limit: 10) == [tried], "and its log")
        #expect(try await store.webhookEndpoint(id: f2.id) == nil)
        #expect(try await store.deliveryBacklog(at: t + 10).waiting == 2, "f2's delivery went with it; b's (leased) and f1's wait")
        try await store.syncFileEndpoints([changedF1, Self.endpoint("f3", source: .file)])
        #expect(try await store.webhookEndpoints(owner: nil) == synced, "a sync without changes changes nothing")

        // An operator's change touches its own columns alone: what the deliveries recorded stays.
        var rotated = newF1
        rotated.secrets = ["whsec_next", "whsec_f1"]
        #expect(try await store.changeWebhookEndpoint(id: f1.id, .secrets(rotated.secrets)) == rotated, "failing_since kept")
        var off = rotated
        off.enabled = false
        off.disabledReason = "paused"
        #expect(try await store.changeWebhookEndpoint(id: f1.id, .disable(reason: "paused")) == off)
        var on = off
        on.enabled = true
        on.disabledReason = nil
        on.failingSince = nil
        #expect(try await store.changeWebhookEndpoint(id: f1.id, .enable) == on, "a fresh start forgets its failures")
        #expect(try await store.changeWebhookEndpoint(id: b.id + 100, .enable) == nil)
        #expect(try await store.deliveryLog(endpointID: f1.id, limit: 10) == [tried])
        #expect(try await store.changeWebhookEndpoint(id: f1.id, .secrets(["whsec_f1"]))?.secrets == ["whsec_f1"])

        // Deleting an endpoint takes its deliveries and log: its worker's lease is lost.
        #expect(try await store.deleteWebhookEndpoint(id: f1.id))
        #expect(try await store.deleteWebhookEndpoint(id: f1.id) == false)
        #expect(try await store.deliveryLog(endpointID: f1.id, limit: 10) == [])
        let toB = try #require(claimed.first { $0.endpoint.id == b.id })
        #expect(try await store.deleteWebhookEndpoint(id: b.id))
        let late = DeliveryAttempt(deliveryID: toB.id, endpointID: b.id, eventID: toB.event.id, eventType: .readerAdded, attempt: 1,
                                   time: t + 2, status: 200, latencyMilliseconds: 5, answer: "")
        #expect(try await store.finishDelivery(toB, worker: "w", attempt: late, next: .done, endpoint: .none) == false)
        #expect(try await store.deliveryLog(endpointID: b.id, limit: 10) == [])
        #expect(try await store.deliveryBacklog(at: t + 10).waiting == 0)
        try await store.syncFileEndpoints([])
        #expect(try await store.webhookEndpoints(owner: nil).map(\.name) == ["a"])
    }

    /// Each event is offered once, to the endpoints enabled then that receive its type, even with four
    /// dispatchers at once; later events are offered after them; the deliveries are due at the dispatch.
    func webhookDispatch() async throws {
        let store = try await makeStore()
        let t = Self.t0
        let all = try await store.saveWebhookEndpoint(Self.endpoint("all"))
        let issues = try await store.saveWebhookEndpoint(Self.endpoint("issues", types: [.issuePublished, .issueWithdrawn]))
        _ = try await store.saveWebhookEndpoint(Self.endpoint("off", enabled: false))
        let kinds: [NewEvent] = [NewEvent(.readerAdded, EventBody(reader: 1)), NewEvent(.issuePublished, EventBody(edition: 1)),
                                 NewEvent(.webhookTest, EventBody())]
        var events: [KioskEvent] = []
        for n in 0..<42 { events.append(try await store.appendEvent(kinds[n % 3], at: t + Int64(n))) }

        let offered = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var total = 0
                    while true {
                        let count = try await store.dispatchEvents(limit: 5, at: t + 100)
                        if count == 0 { return total }
                        total += count
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(offered == 42, "each event offered once")
        #expect(try await store.dispatchEvents(limit: 5, at: t + 100) == 0)

        struct Pair: Hashable { var event: Int64, endpoint: Int64 }
        func expected(_ events: [KioskEvent]) -> [Pair] {
            events.flatMap { event -> [Pair] in
                switch event.type {
                case .readerAdded: [Pair(event: event.id, endpoint: all.id)]
                case .issuePublished: [Pair(event: event.id, endpoint: all.id), Pair(event: event.id, endpoint: issues.id)]
                default: []
                }
            }
        }
        #expect(try await store.claimDeliveries(worker: "w", now: t + 99, leaseUntil: t + 200, limit: 100) == [], "due at the dispatch")
        #expect(try await store.deliveryBacklog(at: t + 100) == (waiting: 42, oldestDue: t + 100) as (waiting: Int, oldestDue: Int64?))
        let claimed = try await store.claimDeliveries(worker: "w", now: t + 100, leaseUntil: t + 1_000, limit: 100)
        #expect(claimed.map { Pair(event: $0.event.id, endpoint: $0.endpoint.id) }.sorted { ($0.event, $0.endpoint) < ($1.event, $1.endpoint) }
                == expected(events))
        #expect(claimed.allSatisfy { $0.attempts == 0 })
        #expect(claimed.first { $0.event.id == events[1].id }?.event == events[1], "the event read back whole")

        // Later events: offered after those, to the endpoints enabled then.
        var off = try #require(try await store.webhookEndpoints(owner: nil).first { $0.name == "off" })
        off.enabled = true
        off = try await store.saveWebhookEndpoint(off)
        let later = [try await store.appendEvent(kinds[0], at: t + 300), try await store.appendEvent(kinds[1], at: t + 301)]
        #expect(try await store.dispatchEvents(limit: 1, at: t + 400) == 1)
        #expect(try await store.dispatchEvents(limit: 10, at: t + 400) == 1)
        let more = try await store.claimDeliveries(worker: "w", now: t + 400, leaseUntil: t + 500, limit: 100)
        #expect(Set(more.map { Pair(event: $0.event.id, endpoint: $0.endpoint.id) })
                == Set(expected(later) + [Pair(event: later[0].id, endpoint: off.id), Pair(event: later[1].id, endpoint: off.id)]))
    }

    /// Claims are exclusive (four claimers at once never lease one delivery twice) and take only due
    /// deliveries of enabled endpoints, oldest due first; a lease that ran out is taken again; a try finished
    /// by a worker who lost the lease writes nothing; done, retry and given up are stored with the log and
    /// the endpoint's change (failing, recovered, disabled); `redeliver`; `deliveryBacklog`.
    func webhookDeliveries() async throws {
        let store = try await makeStore()
        let t = Self.t0
        let endpoint = try await store.saveWebhookEndpoint(Self.endpoint("crm"))
        var events: [KioskEvent] = []
        for n in 0..<30 { events.append(try await store.appendEvent(NewEvent(.readerAdded, EventBody(reader: n)), at: t)) }
        #expect(try await store.dispatchEvents(limit: 100, at: t) == 30)
        #expect(try await store.deliveryBacklog(at: t - 1) == (waiting: 30, oldestDue: nil) as (waiting: Int, oldestDue: Int64?))

        let claims = try await withThrowingTaskGroup(of: [WebhookDelivery].self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var mine: [WebhookDelivery] = []
                    while true {
                        let claimed = try await store.claimDeliveries(worker: "w\(worker)", now: t, leaseUntil: t + 60, limit: 3)
                        if claimed.isEmpty { return mine }
                        mine += claimed
                    }
                }
            }
            return try await group.reduce(into: [[WebhookDelivery]]()) { $0.append($1) }
        }
        let leased = claims.flatMap { $0 }
        #expect(leased.count == 30 && Set(leased.map(\.id)).count == 30, "no delivery leased twice: \(claims.map { $0.map(\.id) })")
        #expect(Set(leased.map(\.event)) == Set(events))
        #expect(try await store.claimDeliveries(worker: "w9", now: t + 59, leaseUntil: t + 120, limit: 100) == [], "leases run")
        let retaken = try await store.claimDeliveries(worker: "w9", now: t + 60, leaseUntil: t + 120, limit: 100)
        #expect(retaken.map(\.id) == leased.map(\.id).sorted(), "run out at their end: taken again, oldest due first")

        func attempt(_ delivery: WebhookDelivery, _ n: Int, at time: Int64, status: Int?) -> DeliveryAttempt {
            DeliveryAttempt(deliveryID: delivery.id, endpointID: endpoint.id, eventID: delivery.event.id, eventType: .readerAdded,
                            attempt: n, time: time, status: status, latencyMilliseconds: 40, answer: status.map { "status \($0)" } ?? "refused")
        }
        let lost = try #require(leased.first { $0.id == retaken[0].id })
        let lostWorker = try #require(claims.indices.first { claims[$0].contains(lost) }).description
        #expect(try await store.finishDelivery(lost, worker: "w" + lostWorker, attempt: attempt(lost, 1, at: t + 61, status: 200),
                                               next: .done, endpoint: .none) == false, "the lease was lost")
        #expect(try await store.deliveryLog(endpointID: endpoint.id, limit: 10) == [], "and nothing was written")

        let (d0, d1, d2, d3) = (retaken[0], retaken[1], retaken[2], retaken[3])
        let log0 = attempt(d0, 1, at: t + 61, status: 204)
        #expect(try await store.finishDelivery(d0, worker: "w9", attempt: log0, next: .done, endpoint: .none))
        #expect(try await store.finishDelivery(d0, worker: "w9", attempt: log0, next: .done, endpoint: .none) == false, "finished once")
        let log1 = attempt(d1, 1, at: t + 62, status: nil)
        #expect(try await store.finishDelivery(d1, worker: "w9", attempt: log1, next: .retry(at: t + 100), endpoint: .startedFailing))
        #expect(try await store.webhookEndpoint(id: endpoint.id)?.failingSince == t + 62)
        let log2 = attempt(d2, 1, at: t + 63, status: 500)
        #expect(try await store.finishDelivery(d2, worker: "w9", attempt: log2, next: .givenUp, endpoint: .startedFailing))
        #expect(try await store.webhookEndpoint(id: endpoint.id)?.failingSince == t + 62, "failing since the first failure")

        // Only the retry is due (the others are still leased to w9 until t + 120); it comes back with its try counted.
        #expect(try await store.claimDeliveries(worker: "w8", now: t + 99, leaseUntil: t + 200, limit: 100) == [])
        let again = try await store.claimDeliveries(worker: "w8", now: t + 100, leaseUntil: t + 200, limit: 100)
        #expect(again.map(\.id) == [d1.id] && again.first?.attempts == 1)
        let log1b = attempt(d1, 2, at: t + 101, status: 200)
        #expect(try await store.finishDelivery(again[0], worker: "w8", attempt: log1b, next: .done, endpoint: .recovered))
        #expect(try await store.webhookEndpoint(id: endpoint.id)?.failingSince == nil)
        #expect(try await store.deliveryLog(endpointID: endpoint.id, limit: 10) == [log1b, log2, log1, log0], "newest first")
        #expect(try await store.deliveryLog(endpointID: endpoint.id, limit: 2) == [log1b, log2])

        // Disabled: its deliveries are not claimed, nor counted as waiting.
        let log3 = attempt(d3, 1, at: t + 102, status: 410)
        #expect(try await store.finishDelivery(d3, worker: "w9", attempt: log3, next: .givenUp,
                                               endpoint: .disable(reason: "the endpoint answered 410 Gone")))
        let disabled = try #require(try await store.webhookEndpoint(id: endpoint.id))
        #expect(!disabled.enabled && disabled.disabledReason == "the endpoint answered 410 Gone")
        #expect(try await store.claimDeliveries(worker: "w8", now: t + 1_000, leaseUntil: t + 1_100, limit: 100) == [])
        #expect(try await store.deliveryBacklog(at: t + 1_000).waiting == 0)

        // Enabled again: the 26 still waiting, and a delivered one sent again.
        var enabled = disabled
        enabled.enabled = true
        enabled.disabledReason = nil
        _ = try await store.saveWebhookEndpoint(enabled)
        #expect(try await store.deliveryBacklog(at: t + 1_000) == (waiting: 26, oldestDue: t) as (waiting: Int, oldestDue: Int64?))
        #expect(try await store.redeliver(eventID: d0.event.id, endpointID: endpoint.id, at: t + 2_000))
        #expect(try await store.redeliver(eventID: events.map(\.id).max()! + 1, endpointID: endpoint.id, at: t + 2_000) == false,
                "no such event")
        #expect(try await store.redeliver(eventID: d0.event.id, endpointID: endpoint.id + 1, at: t + 2_000) == false,
                "no such endpoint")
        #expect(try await store.deliveryBacklog(at: t + 1_000).waiting == 27)
        let resent = try await store.claimDeliveries(worker: "w7", now: t + 2_000, leaseUntil: t + 3_000, limit: 100)
        #expect(resent.count == 27)
        let copy = try #require(resent.first { $0.event.id == d0.event.id })
        #expect(copy.id != d0.id && copy.attempts == 0, "a new delivery of the same event")
        // A waiting one is made due at once rather than queued twice.
        let retry = try #require(resent.first { $0.event.id != d0.event.id })
        #expect(try await store.finishDelivery(retry, worker: "w7", attempt: attempt(retry, 1, at: t + 2_001, status: 503),
                                               next: .retry(at: t + 9_000), endpoint: .none))
        #expect(try await store.redeliver(eventID: retry.event.id, endpointID: endpoint.id, at: t + 2_100))
        #expect(try await store.claimDeliveries(worker: "w6", now: t + 2_100, leaseUntil: t + 2_200, limit: 100).map(\.id) == [retry.id])
    }

    /// At most `perEndpoint` of one endpoint leased to a worker at once: an endpoint with the oldest backlog
    /// that does not answer holds its own places of the worker's only, and the others' deliveries go on;
    /// another worker's leases (perhaps of a worker that died) do not count.
    func webhookFairness() async throws {
        let t = Self.t0
        let fair = try await makeStore()
        let slow = try await fair.saveWebhookEndpoint(Self.endpoint("slow"))
        for n in 0..<6 { _ = try await fair.appendEvent(NewEvent(.readerAdded, EventBody(reader: n)), at: t) }
        #expect(try await fair.dispatchEvents(limit: 100, at: t) == 6)
        let quick = try await fair.saveWebhookEndpoint(Self.endpoint("quick"))
        for n in 6..<12 { _ = try await fair.appendEvent(NewEvent(.readerAdded, EventBody(reader: n)), at: t + 1) }
        #expect(try await fair.dispatchEvents(limit: 100, at: t + 1) == 6)
        let first = try await fair.claimDeliveries(worker: "w1", now: t + 1, leaseUntil: t + 60, limit: 6, perEndpoint: 2)
        #expect(first.map(\.endpoint.id) == [slow.id, slow.id, quick.id, quick.id], "oldest due first, two of each")
        #expect(try await fair.claimDeliveries(worker: "w1", now: t + 1, leaseUntil: t + 60, limit: 6, perEndpoint: 2) == [],
                "both full of w1's leases")
        for delivery in first where delivery.endpoint.id == quick.id {
            let done = DeliveryAttempt(deliveryID: delivery.id, endpointID: quick.id, eventID: delivery.event.id, eventType: .readerAdded,
                                       attempt: 1, time: t + 2, status: 204, latencyMilliseconds: 3, answer: "")
            #expect(try await fair.finishDelivery(delivery, worker: "w1", attempt: done, next: .done, endpoint: .none))
        }
        let next = try await fair.claimDeliveries(worker: "w1", now: t + 2, leaseUntil: t + 60, limit: 6, perEndpoint: 2)
        #expect(next.map(\.endpoint.id) == [quick.id, quick.id], "the quick one's places came free; the slow one's did not")
        #expect(Set(next.map(\.id)).isDisjoint(with: first.map(\.id)))
        let other = try await fair.claimDeliveries(worker: "w2", now: t + 2, leaseUntil: t + 60, limit: 6, perEndpoint: 2)
        #expect(other.map(\.endpoint.id) == [slow.id, slow.id, quick.id, quick.id], "w1's leases do not take w2's places")
        #expect(Set(other.map(\.id)).isDisjoint(with: (first + next).map(\.id)))
        // A failing endpoint gets one try in flight, a probe, until one succeeds.
        let probe = try #require(other.first { $0.endpoint.id == slow.id })
        let timedOut = DeliveryAttempt(deliveryID: probe.id, endpointID: slow.id, eventID: probe.event.id, eventType: .readerAdded,
                                       attempt: 1, time: t + 3, status: nil, latencyMilliseconds: 15_000, answer: "no answer")
        #expect(try await fair.finishDelivery(probe, worker: "w2", attempt: timedOut, next: .retry(at: t + 100), endpoint: .startedFailing))
        #expect(try await fair.claimDeliveries(worker: "w4", now: t + 3, leaseUntil: t + 60, limit: 6, perEndpoint: 2)
                    .filter { $0.endpoint.id == slow.id }.count == 1, "one probe of the failing endpoint")
    }
}
