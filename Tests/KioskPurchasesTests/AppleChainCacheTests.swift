import Foundation
import KioskPurchases
import Testing

@Suite("App Store chain cache")
struct AppleChainCacheTests {
    let app = AppleTestAuthority.identity

    @Test func aSecondVerificationOfTheSameChainUsesTheCache() async throws {
        let authority = try AppleTestAuthority()
        let cache = AppleChainCache()
        let verifier = try authority.verifier(cache: cache)
        _ = try await verifier.transaction(try authority.transaction(), for: app)
        #expect(cache.statistics == .init(hits: 0, misses: 1, entries: 1))
        _ = try await verifier.transaction(try authority.transaction(["transactionId": "2"]), for: app)
        _ = try await verifier.renewalInfo(try authority.renewalInfo(), for: app)
        #expect(cache.statistics == .init(hits: 2, misses: 1, entries: 1))
    }

    @Test func theSignatureIsCheckedEveryTime() async throws {
        let authority = try AppleTestAuthority()
        let cache = AppleChainCache()
        let verifier = try authority.verifier(cache: cache)
        _ = try await verifier.transaction(try authority.transaction(), for: app)
        let tampered = try AppleTestAuthority.tamperingSignature(try authority.transaction())
        let error = await refusal { () async throws(PurchaseVerificationError) in try await verifier.transaction(tampered, for: app) }
        #expect(error?.reason == .signature)
        let forged = try AppleTestAuthority.tamperingPayload(try authority.transaction()) { $0["price"] = 1 }
        let forgedError = await refusal { () async throws(PurchaseVerificationError) in try await verifier.transaction(forged, for: app) }
        #expect(forgedError?.reason == .signature)
        // Both came from the cache: the chain was fine, the signature was not.
        #expect(cache.statistics.hits == 2)
    }

    @Test func aCachedChainIsRefusedOutsideItsValidity() async throws {
        let leafEnd = AppleTestAuthority.date("2026-06-01T00:00:00Z")
        let authority = try AppleTestAuthority(leafValidity: AppleTestAuthority.date("2025-06-01T00:00:00Z")...leafEnd)
        let cache = AppleChainCache()
        let verifier = try authority.verifier(cache: cache)
        let before = AppleTestAuthority.milliseconds(leafEnd.addingTimeInterval(-3600))
        _ = try await verifier.transaction(try authority.transaction(["signedDate": before]), for: app)
        let after = AppleTestAuthority.milliseconds(leafEnd.addingTimeInterval(3600))
        let jws = try authority.transaction(["signedDate": after])
        let error = await refusal { () async throws(PurchaseVerificationError) in try await verifier.transaction(jws, for: app) }
        #expect(error?.reason == .certificateChain)
        #expect(cache.statistics.hits == 0)
        #expect(cache.statistics.misses == 2)
        // Within the window again, the cache answers.
        _ = try await verifier.transaction(try authority.transaction(["signedDate": before]), for: app)
        #expect(cache.statistics.hits == 1)
    }

    @Test func aChainThatFailedIsNotCached() async throws {
        let authority = try AppleTestAuthority()
        let foreign = try AppleTestAuthority()
        let cache = AppleChainCache()
        let verifier = try authority.verifier(cache: cache)
        for _ in 0..<2 {
            let jws = try foreign.transaction()
            let error = await refusal { () async throws(PurchaseVerificationError) in try await verifier.transaction(jws, for: app) }
            #expect(error?.reason == .certificateChain)
        }
        #expect(cache.statistics == .init(hits: 0, misses: 2, entries: 0))
    }

    @Test func theCacheIsBounded() async throws {
        let authorities = try (0..<3).map { _ in try AppleTestAuthority() }
        let cache = AppleChainCache(capacity: 2)
        for authority in authorities {
            _ = try await authority.verifier(cache: cache).transaction(try authority.transaction(), for: app)
        }
        #expect(cache.statistics.entries == 2)
        // The first chain was dropped, the last kept.
        _ = try await authorities[2].verifier(cache: cache).transaction(try authorities[2].transaction(), for: app)
        _ = try await authorities[0].verifier(cache: cache).transaction(try authorities[0].transaction(), for: app)
        #expect(cache.statistics.hits == 1)
    }

    @Test func aCacheSharedByVerifiersOfOtherRootsDoesNotLeak() async throws {
        // A chain verified for one root set is not taken as verified by a verifier with other roots.
        let authority = try AppleTestAuthority()
        let other = try AppleTestAuthority()
        let cache = AppleChainCache()
        _ = try await authority.verifier(cache: cache).transaction(try authority.transaction(), for: app)
        let otherVerifier = try other.verifier(cache: cache)
        let jws = try authority.transaction()
        let error = await refusal { () async throws(PurchaseVerificationError) in try await otherVerifier.transaction(jws, for: app) }
        #expect(error?.reason == .certificateChain)
    }

    @Test func withoutACacheEveryChainIsVerified() async throws {
        let authority = try AppleTestAuthority()
        let verifier = try authority.verifier(cache: nil)
        #expect(verifier.chainCache == nil)
        for _ in 0..<3 {
            _ = try await verifier.transaction(try authority.transaction(), for: app)
        }
        let tampered = try AppleTestAuthority.tamperingSignature(try authority.transaction())
        #expect(await refusal { () async throws(PurchaseVerificationError) in try await verifier.transaction(tampered, for: app) }?.reason == .signature)
    }
}
