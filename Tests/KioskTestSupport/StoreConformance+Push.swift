import Foundation
import KioskModels
import Testing

extension StoreConformance {
    /// A registration of `device` in `app`, registered at `time`.
    static func pushRegistration(_ app: String, _ device: String, token: String, platform: PushPlatform = .apns,
                                 editions: [Int] = [], userID: Int = 0, at time: Int64 = t0) -> PushRegistration {
        PushRegistration(appKey: app, deviceKey: device, identityKey: "iden-\(device)", userID: userID, platform: platform,
                         token: token, editions: editions, language: "ca", createdAt: time, updatedAt: time)
    }

    static func apnsToken(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return String(repeating: "0", count: max(0, 64 - hex.count)) + hex
    }

    /// One registration per device of an app: saved and read back, replaced by a new token (keeping its id and
    /// creation time), taken from a device when another registers its token, independent across apps; removed
    /// only with its own token when one is given; dead tokens removed by app, platform and token.
    func pushRegistrations() async throws {
        let store = try await store()
        let t = Self.t0
        let first = try await store.savePushRegistration(Self.pushRegistration("quiosc", "d1", token: Self.apnsToken(1)))
        #expect(first.id > 0)
        #expect(try await store.pushRegistration(appKey: "quiosc", deviceKey: "d1") == first)
        #expect(first.token == Self.apnsToken(1) && first.editions == [] && first.language == "ca" && first.createdAt == t)

        var newer = Self.pushRegistration("quiosc", "d1", token: Self.apnsToken(2), editions: [2, 1], userID: 7, at: t + 10)
        newer.createdAt = t + 10
        let replaced = try await store.savePushRegistration(newer)
        #expect(replaced.id == first.id, "the device's registration is replaced, not added")
        #expect(replaced.token == Self.apnsToken(2) && replaced.editions == [1, 2] && replaced.userID == 7)
        #expect(replaced.createdAt == t && replaced.updatedAt == t + 10, "the creation time is kept")

        let moved = try await store.savePushRegistration(Self.pushRegistration("quiosc", "d2", token: Self.apnsToken(2), at: t + 20))
        #expect(try await store.pushRegistration(appKey: "quiosc", deviceKey: "d1") == nil, "the token moved to d2")
        #expect(try await store.pushRegistration(appKey: "quiosc", deviceKey: "d2") == moved)
        let otherApp = try await store.savePushRegistration(Self.pushRegistration("presencia", "d9", token: Self.apnsToken(2)))
        #expect(try await store.pushRegistration(appKey: "quiosc", deviceKey: "d2") == moved, "another app's token is its own")

        #expect(try await store.deletePushRegistration(appKey: "quiosc", deviceKey: "d2", token: Self.apnsToken(3)) == false)
        #expect(try await store.pushRegistration(appKey: "quiosc", deviceKey: "d2") != nil, "another token removes nothing")
        #expect(try await store.deletePushRegistration(appKey: "quiosc", deviceKey: "d2", token: Self.apnsToken(2)))
        #expect(try await store.deletePushRegistration(appKey: "quiosc", deviceKey: "d2", token: nil) == false)

        _ = try await store.savePushRegistration(Self.pushRegistration("quiosc", "d3", token: "fcm:token-3", platform: .fcm))
        let removed = try await store.removeDeadPushTokens([
            PushDeadToken(appKey: "presencia", platform: .apns, token: Self.apnsToken(2)),
            PushDeadToken(appKey: "quiosc", platform: .apns, token: "fcm:token-3"),   // the platform differs: kept
            PushDeadToken(appKey: "quiosc", platform: .apns, token: Self.apnsToken(99)),
        ])
        #expect(removed == 1)
        #expect(try await store.pushRegistration(appKey: "presencia", deviceKey: otherApp.deviceKey) == nil)
        #expect(try await store.pushRegistration(appKey: "quiosc", deviceKey: "d3") != nil)
    }

    /// A publish's fan-out: nothing before an issue is published; then the registrations of the apps offering
    /// the edition, in id order, in batches of the limit, each once, with the line's access, whether the reader's
    /// subscription covers the day and whether a purchase is held; the republish next; an event older than
    /// `notBefore` passed over for good; two claimers at once never given the same registration.
    func pushFanOut() async throws {
        let store = try await store()
        let t = Self.t0
        let request = { (limit: Int) in PushBatchRequest(types: PushAudience.types, notBefore: t - 3_600, limit: limit, now: t) }
        #expect(try await store.claimPushBatch(request(10)) == nil)

        let reader = try await store.addUser(username: "lector", name: "", email: "", passwordHash: "x", at: t)
        try await store.subscribe(username: "lector", editionID: 1, until: Self.date("2025-05-30"))
        var quiosc: [PushRegistration] = []
        for n in 1...5 {
            quiosc.append(try await store.savePushRegistration(
                Self.pushRegistration("quiosc", "q\(n)", token: Self.apnsToken(n), userID: n == 2 ? reader : 0)))
        }
        let presencia = try await store.savePushRegistration(Self.pushRegistration("presencia", "p1", token: Self.apnsToken(50)))

        try await store.publishTestIssue(edition: 1, date: "2025-05-30", at: t)
        try await store.publishTestIssue(edition: 1, date: "2025-05-30", at: t + 1)   // a republish
        var seen: [Int64] = []
        var batches: [PushBatch] = []
        while let batch = try await store.claimPushBatch(request(2)), batch.event.type == .issuePublished {
            batches.append(batch)
            seen += batch.targets.map(\.registration.id)
            if batch.last { break }
        }
        #expect(seen == quiosc.map(\.id), "every registration of the apps offering edition 1, once, in id order")
        #expect(batches.map(\.targets.count) == [2, 2, 1] && batches.map(\.last) == [false, false, true])
        #expect(batches.flatMap(\.targets).allSatisfy { $0.access == .subscribers })
        #expect(batches.flatMap(\.targets).filter(\.subscribed).map(\.registration.deviceKey) == ["q2"])
        #expect(batches.flatMap(\.targets).allSatisfy { !$0.holdsPurchases })
        let republished = try #require(try await store.claimPushBatch(request(10)))
        #expect(republished.event.type == .issueRepublished && republished.last)
        #expect(republished.targets.map(\.registration.id) == quiosc.map(\.id))
        #expect(try await store.claimPushBatch(request(10)) == nil)

        try await store.publishTestIssue(edition: 8, date: "2025-05-30", at: t + 2)
        let both = try #require(try await store.claimPushBatch(request(10)))
        #expect(both.targets.map(\.registration.id) == quiosc.map(\.id) + [presencia.id])
        #expect(both.targets.map(\.access) == Array(repeating: .free, count: 5) + [.subscribers])

        try await store.publishTestIssue(edition: 2, date: "2025-05-29", at: t - 7_200)
        #expect(try await store.claimPushBatch(request(10)) == nil, "an event older than notBefore is passed over")
        #expect(try await store.claimPushBatch(PushBatchRequest(types: PushAudience.types, notBefore: 0, limit: 10, now: t)) == nil,
                "and not taken up later")

        try await store.publishTestIssue(edition: 8, date: "2025-05-31", at: t + 3)
        let single = request(1)
        let claimed = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for _ in 0..<2 {
                group.addTask {
                    var ids: [Int64] = []
                    while let batch = try await store.claimPushBatch(single) {
                        ids += batch.targets.map(\.registration.id)
                        if batch.last { break }
                    }
                    return ids
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(claimed.sorted() == (quiosc.map(\.id) + [presencia.id]).sorted(), "two claimers: each registration once")
    }
}
