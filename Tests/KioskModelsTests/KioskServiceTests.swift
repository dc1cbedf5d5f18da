import Crypto
import Foundation
import KioskModels
import KioskSQLite
import KioskTestSupport
import Testing

/// The kiosk's rules as `KioskService` applies them, over the real SQLite store, with a fixed clock and
/// `TestPasswordHasher`. Issues: edition 1 (subscribers on quiosc) 2025-05-28 to 05-31, edition 8
/// (free on quiosc, subscribers on presencia) 05-25.
@Suite struct KioskServiceTests {
    static func date(_ text: String) -> IssueDate { IssueDate(text)! }

    /// Opens an issue of edition `edition` on `day` as the apps do.
    static func open(_ fixture: ServiceFixture, app: String = "quiosc", key: String, edition: Int = 1,
                     _ day: String) async throws -> IssueContents {
        try await fixture.service.openIssue(appKey: app, identityKey: key, editionID: edition, date: date(day),
                                            claimedUserID: "", os: "iOS").1
    }

    static func register(_ fixture: ServiceFixture, app: String = "quiosc", device: String, username: String = "",
                         password: String = "") async throws -> KioskService.Registration {
        try await fixture.service.register(appKey: app, deviceKey: device, username: username, password: password,
                                           deviceInfo: ["model": "iPhone"], os: "iOS")
    }

    static func downloads(_ fixture: ServiceFixture) async throws -> Int {
        try await fixture.store.statistics(StatisticsQuery()).totalDownloads
    }

    // MARK: Entitlement

    @Test func aFreeLineNeedsNoIdentity() async throws {
        let fixture = try await ServiceFixture.sqlite()
        for key in ["", "legacy-device-id", "forged-key"] {
            let contents = try await Self.open(fixture, key: key, edition: 8, "2025-05-25")
            #expect(contents.pages.count == 3 && contents.revision == 1)
        }
        #expect(try await Self.downloads(fixture) == 3)
        await #expect(throws: KioskError.invalidIdentity, "the same edition to subscribers on presencia") {
            try await Self.open(fixture, app: "presencia", key: "legacy-device-id", edition: 8, "2025-05-25")
        }
    }

    @Test func aSubscriptionCoversIssuesUpToItsLastDay() async throws {
        let fixture = try await ServiceFixture.sqlite()
        try await fixture.addUser("anna", password: "pw-anna", subscriptions: [(1, "2025-05-30"), (2, "2026-12-31")])
        let anna = try await Self.register(fixture, device: "d1", username: "anna", password: "pw-anna")
        #expect(try await Self.open(fixture, key: anna.identity.key, "2025-05-28").date == Self.date("2025-05-28"))
        #expect(try await Self.open(fixture, key: anna.identity.key, "2025-05-30").date == Self.date("2025-05-30"))
        await #expect(throws: KioskError.notEntitled(editionID: 1, date: Self.date("2025-05-31"))) {
            try await Self.open(fixture, key: anna.identity.key, "2025-05-31")
        }
        let anonymous = try await Self.register(fixture, device: "d1")
        await #expect(throws: KioskError.notEntitled(editionID: 1, date: Self.date("2025-05-30")), "the user's key, not the device, is entitled") {
            try await Self.open(fixture, key: anonymous.identity.key, "2025-05-30")
        }
        // Anna's key on presencia, where edition 8 is for subscribers: the key is quiosc's.
        await #expect(throws: KioskError.invalidIdentity) {
            try await Self.open(fixture, app: "presencia", key: anna.identity.key, edition: 8, "2025-05-25")
        }
        #expect(try await Self.downloads(fixture) == 2, "refusals are not recorded")
    }

    @Test func aDemoGrantOpensOneIssueForGood() async throws {
        let fixture = try await ServiceFixture.sqlite()
        let device = try await Self.register(fixture, device: "d1")
        let key = device.identity.key
        await #expect(throws: KioskError.notEntitled(editionID: 1, date: Self.date("2025-05-29"))) {
            try await Self.open(fixture, key: key, "2025-05-29")
        }
        let (_, outcome) = try await fixture.service.consumeDemo(appKey: "quiosc", deviceKey: "d1", identityKey: key,
                                                                 deviceInfo: [:], os: "iOS", clientMaximum: 0)
        #expect(outcome == DemoOutcome(granted: true, consumed: 1))
        _ = try await Self.open(fixture, key: key, "2025-05-29")
        _ = try await Self.open(fixture, key: key, "2025-05-29")
        await #expect(throws: KioskError.notEntitled(editionID: 1, date: Self.date("2025-05-30"))) {
            try await Self.open(fixture, key: key, "2025-05-30")
        }
        // A subscriber's covered download leaves the grant unused for an issue the subscription does not cover.
        try await fixture.addUser("joan", password: "pw", subscriptions: [(1, "2025-05-30")])
        let joan = try await Self.register(fixture, device: "d2", username: "joan", password: "pw")
        _ = try await fixture.service.consumeDemo(appKey: "quiosc", deviceKey: "d2", identityKey: joan.identity.key,
                                                  deviceInfo: [:], os: "iOS", clientMaximum: 0)
        _ = try await Self.open(fixture, key: joan.identity.key, "2025-05-29")
        _ = try await Self.open(fixture, key: joan.identity.key, "2025-05-31")
        await #expect(throws: KioskError.notEntitled(editionID: 1, date: Self.date("2025-05-31"))) {
            try await Self.open(fixture, key: device.identity.key, "2025-05-31")
        }
    }

    // MARK: Faults

    @Test func everyFaultCondition() async throws {
        let fixture = try await ServiceFixture.sqlite()
        let service = fixture.service
        try await fixture.addUser("anna", password: "pw-anna")
        let anna = try await Self.register(fixture, device: "d1", username: "anna", password: "pw-anna")
        let onPresencia = try await Self.register(fixture, app: "presencia", device: "d1")

        for call in [
            { _ = try await service.editions(appKey: "nope") },
            { _ = try await service.issues(appKey: "nope", editionID: 1, from: nil, direction: .descending, limit: 7) },
            { _ = try await Self.open(fixture, app: "nope", key: "", "2025-05-30") },
            { _ = try await Self.register(fixture, app: "nope", device: "d1") },
            { _ = try await service.consumeDemo(appKey: "nope", deviceKey: "d1", identityKey: "", deviceInfo: [:], os: "", clientMaximum: 0) },
            { _ = try await service.authenticate(appKey: "nope", username: "anna", password: "pw-anna") },
            { _ = try await service.requireApp("nope") },
        ] as [@Sendable () async throws -> Void] {
            await #expect(throws: KioskError.unknownApp("nope")) { try await call() }
        }

        for key in ["", "never-issued", onPresencia.identity.key] {
            await #expect(throws: KioskError.invalidIdentity, "key \(key)") { try await Self.open(fixture, key: key, "2025-05-30") }
        }
        for (device, key) in [("d2", anna.identity.key), ("d1", "never-issued"), ("d1", onPresencia.identity.key)] {
            await #expect(throws: KioskError.invalidIdentity, "\(device) \(key)") {
                _ = try await service.consumeDemo(appKey: "quiosc", deviceKey: device, identityKey: key, deviceInfo: [:], os: "",
                                                  clientMaximum: 0)
            }
        }

        await #expect(throws: KioskError.editionNotOffered(editionID: 1, appKey: "presencia")) {
            _ = try await service.issues(appKey: "presencia", editionID: 1, from: nil, direction: .descending, limit: 7)
        }
        await #expect(throws: KioskError.editionNotOffered(editionID: 99, appKey: "quiosc")) {
            try await Self.open(fixture, key: anna.identity.key, edition: 99, "2025-05-30")
        }

        await #expect(throws: KioskError.noPublishedIssue(editionID: 1, date: Self.date("2025-06-01"))) {
            try await Self.open(fixture, key: anna.identity.key, "2025-06-01")
        }
        #expect(try await fixture.store.withdrawIssue(editionID: 1, date: Self.date("2025-05-31"), at: fixture.clock.now))
        await #expect(throws: KioskError.noPublishedIssue(editionID: 1, date: Self.date("2025-05-31")), "withdrawn") {
            try await Self.open(fixture, key: anna.identity.key, "2025-05-31")
        }
        await #expect(throws: KioskError.notEntitled(editionID: 1, date: Self.date("2025-05-30"))) {
            try await Self.open(fixture, key: anna.identity.key, "2025-05-30")
        }

        await #expect(throws: KioskError.wrongCredentials) { try await service.authenticate(appKey: "quiosc", username: "anna", password: "wrong") }
        await #expect(throws: KioskError.wrongCredentials) { try await service.authenticate(appKey: "quiosc", username: "nobody", password: "pw-anna") }
        await #expect(throws: KioskError.wrongCredentials) { try await service.authenticate(appKey: "quiosc", username: "", password: "pw-anna") }
        try await fixture.addUser("blank", password: "")
        await #expect(throws: KioskError.wrongCredentials, "an empty password never signs in") {
            try await service.authenticate(appKey: "quiosc", username: "blank", password: "")
        }
        await #expect(throws: KioskError.tooManySignInAttempts(retryAfterSeconds: 900)) {
            for _ in 0..<6 { _ = try? await service.authenticate(appKey: "quiosc", username: "carla", password: "x") }
            _ = try await service.authenticate(appKey: "quiosc", username: "carla", password: "x")
        }

        await #expect(throws: KioskError.invalidArgument(parameter: "disp_key", problem: "must not be empty")) {
            try await Self.register(fixture, device: "")
        }
        await #expect(throws: KioskError.invalidArgument(parameter: "disp_key", problem: "must not be empty")) {
            _ = try await service.consumeDemo(appKey: "quiosc", deviceKey: "", identityKey: "", deviceInfo: [:], os: "", clientMaximum: 0)
        }
    }

    // MARK: Demos

    @Test func theDemoQuotaIsTheAppsLoweredByAPositiveClientMaximum() async throws {
        let fixture = try await ServiceFixture.sqlite()
        func demo(_ clientMaximum: Int, app: String = "quiosc", device: String = "d1") async throws -> (String, Int, Int) {
            let (registration, outcome) = try await fixture.service.consumeDemo(
                appKey: app, deviceKey: device, identityKey: "", deviceInfo: [:], os: "iOS", clientMaximum: clientMaximum)
            return (outcome.granted ? "granted" : "refused", outcome.consumed, registration.demosConsumed)
        }
        #expect(try await demo(1) == ("granted", 1, 1))
        #expect(try await demo(1) == ("refused", 1, 1), "a client maximum of 1 lowers the quota of 3")
        #expect(try await demo(0) == ("granted", 2, 2))
        #expect(try await demo(99) == ("granted", 3, 3), "a client maximum never raises the quota")
        #expect(try await demo(99) == ("refused", 3, 3))
        #expect(try await demo(0, app: "presencia") == ("granted", 1, 1), "each app counts its own")
        #expect(try await demo(0, app: "presencia") == ("refused", 1, 1))

        // The count is per app and device: a signed-in identity on the device sees it.
        try await fixture.addUser("anna", password: "pw")
        #expect(try await Self.register(fixture, device: "d1", username: "anna", password: "pw").demosConsumed == 3)
        #expect(try await Self.register(fixture, device: "d9").demosConsumed == 0)
    }

    // MARK: Sign-in

    @Test func failedSignInsLockAUsernameAndADeviceForTheWindow() async throws {
        let fixture = try await ServiceFixture.sqlite(signInPolicy: SignInPolicy(maxFailures: 3, windowSeconds: 600))
        let service = fixture.service
        try await fixture.addUser("anna", password: "right")
        try await fixture.addUser("joan", password: "right")
        for _ in 0..<3 {
            await #expect(throws: KioskError.wrongCredentials) { try await service.authenticate(appKey: "quiosc", username: "ANNA", password: "wrong") }
        }
        await #expect(throws: KioskError.tooManySignInAttempts(retryAfterSeconds: 600), "even with the right password") {
            try await service.authenticate(appKey: "quiosc", username: "anna", password: "right")
        }
        #expect(try await Self.register(fixture, device: "d1", username: "joan", password: "right").user?.username == "joan")

        // A device trying several usernames is locked for all of them.
        for name in ["x1", "x2", "x3"] {
            await #expect(throws: KioskError.wrongCredentials) { try await Self.register(fixture, device: "d2", username: name, password: "guess") }
        }
        await #expect(throws: KioskError.tooManySignInAttempts(retryAfterSeconds: 600)) {
            try await Self.register(fixture, device: "d2", username: "joan", password: "right")
        }
        #expect(try await Self.register(fixture, device: "d3", username: "joan", password: "right").user != nil)

        fixture.clock.advance(599)
        await #expect(throws: KioskError.tooManySignInAttempts(retryAfterSeconds: 600)) {
            try await service.authenticate(appKey: "quiosc", username: "anna", password: "right")
        }
        fixture.clock.advance(2)
        #expect(try await service.authenticate(appKey: "quiosc", username: "anna", password: "right").username == "anna")
        #expect(try await Self.register(fixture, device: "d2", username: "joan", password: "right").user != nil)
        #expect(fixture.passwords.checkedHashes.contains(nil), "unknown users are checked like known ones")
    }

    @Test func aLegacyHashSignsInOnceThenIsReplaced() async throws {
        let fixture = try await ServiceFixture.sqlite()
        let md5 = "5ebe2294ecd0e0f08eab7690d2a6ee69"   // MD5 of "secret"
        let salt = "Xq3LZcVb0u9RkT2w"
        let salted = Insecure.MD5.hash(data: Array("pw-salt\(salt)".utf8)).map { String(format: "%02x", $0) }.joined() + ":" + salt
        let old = try await fixture.addUser("old", hash: md5)
        let joomla = try await fixture.addUser("joomla", hash: salted)

        await #expect(throws: KioskError.wrongCredentials) { try await fixture.service.authenticate(appKey: "quiosc", username: "old", password: "Secret") }
        #expect(try await fixture.store.user(id: old)?.passwordHash == md5, "a wrong password changes nothing")
        #expect(try await fixture.service.authenticate(appKey: "quiosc", username: "old", password: "secret").passwordHash == "test$secret")
        #expect(try await fixture.store.user(id: old)?.passwordHash == "test$secret")
        #expect(try await fixture.service.authenticate(appKey: "quiosc", username: "old", password: "secret").id == old)

        let registration = try await Self.register(fixture, device: "d1", username: "joomla", password: "pw-salt")
        #expect(registration.user?.passwordHash == "test$pw-salt")
        #expect(try await fixture.store.user(id: joomla)?.passwordHash == "test$pw-salt")

        // A hash of the current scheme is kept as it is.
        let current = try await fixture.addUser("current", password: "pw")
        _ = try await fixture.service.authenticate(appKey: "quiosc", username: "current", password: "pw")
        #expect(try await fixture.store.user(id: current)?.passwordHash == "test$pw")
    }

    // MARK: Identities

    @Test func registrarKeepsTheKeyAcrossReinstallsAndListsEntitlements() async throws {
        let fixture = try await ServiceFixture.sqlite()
        try await fixture.addUser("anna", password: "pw", name: "Anna Puig", email: "anna@example.cat",
                                  subscriptions: [(1, "2026-01-31"), (2, "2026-01-31")])
        let first = try await Self.register(fixture, device: "d1")
        let again = try await Self.register(fixture, device: "d1")
        #expect(first.identity.key == again.identity.key)
        #expect(first.identity.key == fixture.identityKeys.key(appKey: "quiosc", deviceKey: "d1", userID: 0))
        #expect(first.user == nil)
        #expect(try await fixture.store.identity(key: first.identity.key) == first.identity)
        #expect(first.entitlements.map(\.edition.edition.id) == [8] && first.entitlements[0].until == nil)

        let anna = try await Self.register(fixture, device: "d1", username: "anna", password: "pw")
        #expect(anna.identity.key != first.identity.key && anna.identity.userID == anna.user?.id)
        #expect(anna.user?.name == "Anna Puig" && anna.user?.email == "anna@example.cat")
        // Edition 2 is subscribed but has no issue: only editions with an issue are listed.
        #expect(anna.entitlements.map(\.edition.edition.id) == [1, 8])
        #expect(anna.entitlements.map(\.until) == [Self.date("2026-01-31"), nil])
        #expect(try await Self.register(fixture, app: "presencia", device: "d1").entitlements.isEmpty)
    }

    @Test func anImportedIdentityIsAcceptedUntilItsDeviceCallsRegistrar() async throws {
        let fixture = try await ServiceFixture.sqlite()
        try await fixture.addUser("anna", password: "pw", subscriptions: [(1, "2025-12-31")])
        _ = try await fixture.store.importIdentities([
            IdentityImport(key: "old-anna", appKey: "quiosc", deviceKey: "ipad", username: "anna", demosConsumed: 0),
            IdentityImport(key: "old-anon", appKey: "quiosc", deviceKey: "iphone", username: "", demosConsumed: 1),
        ], at: fixture.clock.now, progress: { _, _ in })

        _ = try await Self.open(fixture, key: "old-anna", "2025-05-30")
        await #expect(throws: KioskError.notEntitled(editionID: 1, date: Self.date("2025-05-30"))) {
            try await Self.open(fixture, key: "old-anon", "2025-05-30")
        }
        let (registration, outcome) = try await fixture.service.consumeDemo(
            appKey: "quiosc", deviceKey: "iphone", identityKey: "old-anon", deviceInfo: ["0": "iPhone"], os: "iOS", clientMaximum: 0)
        #expect(outcome == DemoOutcome(granted: true, consumed: 2), "the imported count is kept")
        #expect(registration.identity.key == "old-anon" && registration.identity.deviceInfo == ["0": "iPhone"])
        _ = try await Self.open(fixture, key: "old-anon", "2025-05-30")
        await #expect(throws: KioskError.invalidIdentity, "an old key is good for its own device only") {
            _ = try await fixture.service.consumeDemo(appKey: "quiosc", deviceKey: "someone-else", identityKey: "old-anon",
                                                      deviceInfo: [:], os: "", clientMaximum: 0)
        }

        let replaced = try await Self.register(fixture, device: "iphone")
        #expect(replaced.identity.key != "old-anon" && replaced.demosConsumed == 2)
        #expect(try await fixture.store.identity(key: "old-anon") == nil)
        await #expect(throws: KioskError.invalidIdentity, "registrar retired the old key") {
            try await Self.open(fixture, key: "old-anon", "2025-05-30")
        }
        _ = try await Self.open(fixture, key: replaced.identity.key, "2025-05-30")
        #expect(try await fixture.store.identity(key: "old-anna")?.imported == true, "its device has not called registrar")
    }

    // MARK: Records

    @Test func notedKeysAreCountedOncePerAppAndDayAndDownloadsAreRecordedWhenServed() async throws {
        let fixture = try await ServiceFixture.sqlite()
        #expect(try await fixture.service.editions(appKey: "quiosc").map(\.offered.edition.id) == [1, 8])
        let (offered, issues) = try await fixture.service.issues(appKey: "quiosc", editionID: 1, from: nil,
                                                                direction: .descending, limit: 2)
        #expect(offered.edition.name == "Nacional" && issues.map(\.date.description) == ["2025-05-31", "2025-05-30"])
        for key in ["seen-1", "seen-2", "seen-1", ""] { fixture.service.noteSeen(appKey: "quiosc", identityKey: key) }
        fixture.service.noteSeen(appKey: "presencia", identityKey: String(repeating: "k", count: 300))
        var devices: [String: Int] = [:]
        for _ in 0..<100 {
            devices = Dictionary(uniqueKeysWithValues: try await fixture.store.statistics(StatisticsQuery()).activeDevices
                .map { ($0.appKey, $0.devices) })
            if devices == ["quiosc": 2, "presencia": 1] { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(devices == ["quiosc": 2, "presencia": 1], "once per key and day; empty keys are not noted")

        _ = try await fixture.service.openIssue(appKey: "quiosc", identityKey: "", editionID: 8, date: Self.date("2025-05-25"),
                                                claimedUserID: "42", os: "Android")
        let statistics = try await fixture.store.statistics(StatisticsQuery())
        #expect(statistics.totalDownloads == 1 && statistics.byOS.map(\.os) == ["Android"])
    }
}
