import KioskModels
import Testing

/// The rules that need no store: entitlement, demo quota, lock-out, identity keys.
@Suite struct RulesTests {
    static let day = IssueDate("2025-05-30")!
    static func line(_ access: LineAccess, edition: Int = 1) -> TariffLine {
        TariffLine(appKey: "quiosc", editionID: edition, order: 10, access: access)
    }

    @Test func entitlementWithoutADemo() {
        let covering = Subscription(userID: 1, editionID: 1, until: Self.day)
        let expired = Subscription(userID: 1, editionID: 1, until: Self.day.adding(days: -1))
        let otherEdition = Subscription(userID: 1, editionID: 2, until: Self.day.adding(days: 365))
        #expect(Entitlement.withoutDemo(line: Self.line(.free), subscriptions: [], issueDate: Self.day) == .freeLine)
        #expect(Entitlement.withoutDemo(line: Self.line(.free), subscriptions: [expired], issueDate: Self.day) == .freeLine)
        #expect(Entitlement.withoutDemo(line: Self.line(.subscribers), subscriptions: [covering], issueDate: Self.day)
                == .subscription(until: Self.day), "the last day is covered")
        #expect(Entitlement.withoutDemo(line: Self.line(.subscribers), subscriptions: [expired, otherEdition], issueDate: Self.day) == nil)
        #expect(Entitlement.withoutDemo(line: Self.line(.subscribers), subscriptions: [], issueDate: Self.day) == nil)
        #expect(covering.covers(Self.day.adding(days: -400)) && !covering.covers(Self.day.adding(days: 1)))
    }

    @Test(arguments: [(3, 0, 3), (3, 1, 1), (3, 2, 2), (3, 99, 3), (3, -1, 3), (0, 5, 0), (-2, 0, 0), (1, 3, 1)])
    func demoQuotaIsLoweredNeverRaisedByTheClient(appQuota: Int, clientMaximum: Int, effective: Int) {
        #expect(DemoQuota.effective(appQuota: appQuota, clientMaximum: clientMaximum) == effective)
    }

    @Test func lockOutAtTheMaximumNumberOfFailures() {
        let policy = SignInPolicy(maxFailures: 5, windowSeconds: 900)
        #expect(!policy.isLockedOut(failures: 4))
        #expect(policy.isLockedOut(failures: 5) && policy.isLockedOut(failures: 6))
        #expect(SignInPolicy() == policy, "the defaults")
    }

    @Test func identityKeysNameOneAppDeviceAndUser() {
        let issuer = IdentityKeyIssuer(secret: Array("secret-one".utf8))
        let key = issuer.key(appKey: "quiosc", deviceKey: "d1", userID: 0)
        #expect(key.count == 43 && Base64URL.decode(key)?.count == 32)
        #expect(issuer.key(appKey: "quiosc", deviceKey: "d1", userID: 0) == key, "the same inputs give the same key")
        #expect(Set([key, issuer.key(appKey: "quiosc", deviceKey: "d1", userID: 7), issuer.key(appKey: "quiosc", deviceKey: "d2", userID: 0),
                     issuer.key(appKey: "presencia", deviceKey: "d1", userID: 0),
                     IdentityKeyIssuer(secret: Array("secret-two".utf8)).key(appKey: "quiosc", deviceKey: "d1", userID: 0)]).count == 5)
        #expect(issuer.isValid(key, appKey: "quiosc", deviceKey: "d1", userID: 0))
        #expect(!issuer.isValid(key, appKey: "quiosc", deviceKey: "d1", userID: 7))
        let tampered = String(key.dropLast()) + (key.hasSuffix("A") ? "B" : "A")
        #expect(!issuer.isValid(tampered, appKey: "quiosc", deviceKey: "d1", userID: 0))
    }
}
