import Foundation
import KioskModels
import KioskPush
import KioskPushFanOut
import KioskPushStandIn
import KioskPostgres
import KioskSQLite
import KioskTestPostgres
import KioskTestSupport
import Logging
import Testing

/// The publish fan-out end to end below HTTP: a real SQLite file, and a PostgreSQL database when
/// `KIOSK_TEST_POSTGRES` names a server (failing, not skipped, under `KIOSK_REQUIRE_POSTGRES=1`), the APNs stand-in
/// over loopback HTTP/2 and
/// `google_standin.py` for FCM. A published issue reaches exactly the devices that may read it or asked for its
/// edition, once, with the app's topic, collapse id and texts; dead tokens are removed; a second pass and a
/// second worker send nothing again; quiet hours send the background push only.
@Suite("The publish fan-out to the APNs and FCM stand-ins", .serialized)
struct PushFanOutTests {
    static let now = SampleCatalogue.startTime   // 2025-06-01 12:00 UTC
    static let policy = AppPushPolicy(
        alerts: ["ca": PushAlertTemplate(title: "{edition}", body: "El número del {iso_date} ja és aquí"),
                 "es": PushAlertTemplate(title: "{edition}", body: "Ya está aquí el número del {iso_date}")],
        defaultLanguage: "ca", background: true)

    /// Signs nothing: the cover's path under a fixed base.
    struct PlainLinks: LinkSigning {
        func link(to relativePath: String, now: Int64) -> String { "https://kiosk.test/files/" + relativePath }
        func linkBucket(now: Int64) -> Int64 { now }
    }

    /// The databases the tests run on: SQLite always, PostgreSQL when configured.
    enum Engine: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        static var available: [Engine] { TestPostgres.configured ? [.sqlite, .postgres] : [.sqlite] }
        var testDescription: String { rawValue }
    }

    /// Runs `body` with `instances` stores on one fresh database of `engine` (several instances sharing it),
    /// holding the sample catalogue and a reader subscribed to edition 1 until 2025-06-30 (her id given too).
    static func withStores(_ engine: Engine, instances: Int = 1,
                           _ body: @escaping @Sendable ([any KioskDatabase], Int) async throws -> Void) async throws {
        func prepare(_ stores: [any KioskDatabase]) async throws {
            let store = stores[0]
            try await store.syncCatalogue(SampleCatalogue.catalogue, dryRun: false)
            let reader = try await store.addUser(username: "lectora", name: "", email: "", passwordHash: "x", at: now)
            try await store.subscribe(username: "lectora", editionID: 1, until: IssueDate("2025-06-30")!)
            try await body(stores, reader)
        }
        switch engine {
        case .sqlite:
            let first = try TestStores.sqlite()
            var stores: [any KioskDatabase] = [first]
            for _ in 1..<max(instances, 1) { stores.append(try SQLiteKioskStore(path: first.path)) }
            try await prepare(stores)
        case .postgres:
            try await TestPostgres.withDatabase { configuration in
                var stores: [PostgresKioskStore] = []
                for _ in 0..<max(instances, 1) {
                    stores.append(try await PostgresKioskStore.connect(configuration, logger: Logger(label: "test")))
                }
                do { try await prepare(stores) } catch {
                    for store in stores { await store.close() }
                    throw error
                }
                for store in stores { await store.close() }
            }
        }
    }

    @discardableResult
    static func register(_ store: any KioskDatabase, _ device: String, token: String, platform: PushPlatform = .apns,
                         app: String = "quiosc", editions: [Int] = [], userID: Int = 0, language: String = "ca") async throws -> PushRegistration {
        try await store.savePushRegistration(PushRegistration(
            appKey: app, deviceKey: device, identityKey: "iden-\(device)", userID: userID, platform: platform, token: token,
            editions: editions, language: language, createdAt: now, updatedAt: now))
    }

    /// `count` devices asking for edition 8, then an issue of it published.
    static func registerAndPublish(_ store: any KioskDatabase, devices count: Int) async throws {
        for n in 1...count {
            try await register(store, "device-\(n)", token: APNsFixture.token(n), editions: [8])
        }
        try await store.publishTestIssue(edition: 8, date: "2025-06-01", at: now)
    }

    static func worker(_ store: any KioskDatabase, _ apns: APNsSender?, fcm: (any PushSender)? = nil, policy: AppPushPolicy = policy,
                       batchSize: Int = 500) -> PushWorker {
        PushWorker(store: store,
                   apps: ["quiosc": PushApp(policy: policy, apnsTopic: APNsFixture.topic, fcmPackage: FCMStandIn.packageName),
                          "presencia": PushApp(policy: policy, apnsTopic: APNsFixture.topic, fcmPackage: FCMStandIn.packageName)],
                   senders: PushSenders(apnsProduction: apns, fcm: fcm), links: PlainLinks(),
                   options: .init(batchSize: batchSize), clock: TestClock(now))
    }

    @Test("exactly one push per eligible device, with the app's topic, collapse id and texts; none for the others; dead tokens removed", arguments: Engine.available)
    func publishReachesTheEligible(_ engine: Engine) async throws {
        try await Self.withStores(engine) { stores, reader in
            let store = stores[0]
            let dead = APNsFixture.token(6)
            try await FCMStandIn.run { fcmStandIn in
                try await APNsFixture.run(standIn: { $0.unregistered = [dead] }) { standIn, apns in
                    try await Self.register(store, "not-entitled", token: APNsFixture.token(1))
                    try await Self.register(store, "subscriber", token: APNsFixture.token(2), userID: reader, language: "es")
                    try await Self.register(store, "asked", token: APNsFixture.token(3), editions: [1])
                    try await Self.register(store, "asked-other", token: APNsFixture.token(4), editions: [2])
                    try await Self.register(store, "subscriber-other", token: APNsFixture.token(5), editions: [2], userID: reader)
                    try await Self.register(store, "gone", token: dead, editions: [1])
                    try await Self.register(store, "android", token: "fcm-token-1", platform: .fcm, editions: [1])
                    try await Self.register(store, "other-app", token: APNsFixture.token(7), app: "presencia")
                    try await store.publishTestIssue(edition: 1, date: "2025-06-01", at: Self.now)

                    let worker = Self.worker(store, apns, fcm: try FCMSenderTests.sender(fcmStandIn))
                    let pass = await worker.runPass()
                    #expect(pass.errors == 0 && pass.removed == 1)
                    let snapshot = standIn.snapshot()
                    #expect(snapshot.answered == [APNsFixture.token(2): 1, APNsFixture.token(3): 1, dead: 1],
                            "the subscriber, the device that asked for edition 1 and the dead one; no other")
                    #expect(snapshot.delivered.keys.sorted() == [APNsFixture.token(2), APNsFixture.token(3)])
                    for request in snapshot.recorded {
                        #expect(request.headers["apns-topic"] == APNsFixture.topic)
                        #expect(request.headers["apns-collapse-id"] == "edition-1")
                        #expect(request.headers["apns-push-type"] == "alert")
                        #expect(request.headers["apns-expiration"] == String(Self.now + 86_400), "kept for offline devices a day")
                    }
                    let alerts = try Dictionary(uniqueKeysWithValues: snapshot.recorded.map { request in
                        let object = try JSONSerialization.jsonObject(with: Data(request.payload)) as? [String: Any]
                        let aps = object?["aps"] as? [String: Any]
                        return (request.deviceToken, aps?["alert"] as? [String: String] ?? [:])
                    })
                    #expect(alerts[APNsFixture.token(2)] == ["title": "Nacional", "body": "Ya está aquí el número del 2025-06-01"])
                    #expect(alerts[APNsFixture.token(3)] == ["title": "Nacional", "body": "El número del 2025-06-01 ja és aquí"])
                    let payload = try #require(snapshot.recorded.first.flatMap {
                        try JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any]
                    })
                    #expect((payload["cover"] as? String)?.hasPrefix("https://kiosk.test/files/1/2025-06-01/") == true)
                    #expect(payload["edition"] as? String == "1" && payload["date"] as? String == "2025-06-01")

                    let android = try fcmStandIn.messages()
                    #expect(android.count == 1)
                    #expect(android.first?["token"] as? String == "fcm-token-1")
                    let fields = try #require(android.first?["android"] as? [String: String])
                    #expect(fields["collapse_key"] == "edition-1" && fields["restricted_package_name"] == FCMStandIn.packageName)
                    #expect((android.first?["notification"] as? [String: String])?["body"] == "El número del 2025-06-01 ja és aquí")

                    #expect(try await store.pushRegistration(appKey: "quiosc", deviceKey: "gone") == nil, "the dead token is removed")
                    #expect(try await store.pushRegistration(appKey: "quiosc", deviceKey: "asked") != nil)

                    let again = await worker.runPass()
                    #expect(again.batches == 0 && standIn.snapshot().requests == snapshot.requests, "a second pass sends nothing")
                    #expect(try fcmStandIn.messages().count == 1)
                }
            }
        }
    }

    @Test("two workers on two instances of one database, in batches of one, tell each device once", arguments: Engine.available)
    func twoWorkersSendNoDuplicate(_ engine: Engine) async throws {
        try await Self.withStores(engine, instances: 2) { stores, _ in
            let store = stores[0]
            try await APNsFixture.run { standIn, apns in
                try await Self.registerAndPublish(store, devices: 20)
                let first = Self.worker(store, apns, batchSize: 1)
                let second = Self.worker(stores[1], apns, batchSize: 1)
                async let a = first.runPass()
                async let b = second.runPass()
                let passes = await [a, b]
                #expect(passes.map(\.sent).reduce(0, +) == 20)
                let answered = standIn.snapshot().answered
                #expect(answered.count == 20 && answered.values.allSatisfy { $0 == 1 }, "\(answered.values.sorted())")
            }
        }
    }

    @Test("a large fan-out is read and sent in pages of the batch size", arguments: Engine.available)
    func largeFanOutGoesInPages(_ engine: Engine) async throws {
        try await Self.withStores(engine) { stores, _ in
            try await APNsFixture.run(standIn: { $0.record = false }) { standIn, apns in
                try await Self.registerAndPublish(stores[0], devices: 250)
                let pass = await Self.worker(stores[0], apns, batchSize: 100).runPass()
                #expect(pass.batches == 3 && pass.sent == 250 && pass.errors == 0, "\(pass)")
                let answered = standIn.snapshot().answered
                #expect(answered.count == 250 && answered.values.allSatisfy { $0 == 1 })
            }
        }
    }

    @Test("a claimed batch is not sent again after its worker died: at most once", arguments: Engine.available)
    func claimedBatchIsNotResent(_ engine: Engine) async throws {
        try await Self.withStores(engine) { stores, _ in
            let store = stores[0]
            try await APNsFixture.run { standIn, apns in
                try await Self.registerAndPublish(store, devices: 3)
                // A worker claims the first batch and dies before sending it.
                let lost = try #require(try await store.claimPushBatch(PushBatchRequest(
                    types: PushAudience.types, notBefore: 0, limit: 2, now: Self.now)))
                #expect(lost.targets.count == 2 && !lost.last)
                _ = await Self.worker(store, apns, batchSize: 2).runPass()
                #expect(standIn.snapshot().answered == [APNsFixture.token(3): 1], "only the batch nobody claimed is sent")
            }
        }
    }

    @Test("in quiet hours only the background push goes; a republish is a background push too", arguments: Engine.available)
    func quietHoursAndRepublish(_ engine: Engine) async throws {
        try await Self.withStores(engine) { stores, _ in
            let store = stores[0]
            var quiet = Self.policy
            quiet.quietHours = QuietHours(from: "11:30", to: "12:30", timeZoneID: "UTC")
            try await APNsFixture.run { standIn, apns in
                try await Self.register(store, "night", token: APNsFixture.token(1), editions: [8])
                try await store.publishTestIssue(edition: 8, date: "2025-06-01", at: Self.now)
                _ = await Self.worker(store, apns, policy: quiet).runPass()
                var types = standIn.snapshot().recorded.map { $0.headers["apns-push-type"] }
                #expect(types == ["background"])

                try await store.publishTestIssue(edition: 8, date: "2025-06-01", at: Self.now + 1)   // republished
                _ = await Self.worker(store, apns).runPass()
                types = standIn.snapshot().recorded.map { $0.headers["apns-push-type"] }
                #expect(types == ["background", "background"])

                var silent = Self.policy
                silent.background = false
                try await store.publishTestIssue(edition: 8, date: "2025-06-01", at: Self.now + 2)
                _ = await Self.worker(store, apns, policy: silent).runPass()
                #expect(standIn.snapshot().requests == 2, "a republish to an app without background pushes sends nothing")
            }
        }
    }
}
