// Verifies signed App Store transactions as the server does (`AppleSignedDataVerifier.transaction(_:for:)`:
// the x5c chain to the configured root with Apple's marker OIDs, the ES256 signature, the payload, bundle and
// environment), one after another on one task, for N seconds: once with a chain cache (`AppleChainCache()`,
// the server's default: a chain seen before is not verified again, the signature still is) and once without
// (`chainCache: nil`: every chain verified every time). Prints transactions per second of wall time and per
// second of the process's CPU time, and the ratio.
//
//     swift run --package-path Benchmarks -c release AppleVerifyBenchmark [--seconds N]
//
// The chain is a test chain made at start (P-256 root, intermediate, leaf), shaped like Apple's.
import Foundation
import KioskPurchases

@main
struct AppleVerifyBenchmark {
    static func main() async throws {
        let seconds = option("--seconds").flatMap(Double.init) ?? 5
        let now = Date(timeIntervalSince1970: 1_780_315_200)  // 2026-06-01T12:00:00Z
        let signedDate = now.addingTimeInterval(-60)
        let chain = try TestChain(
            validFrom: now.addingTimeInterval(-365 * 86400), validUntil: now.addingTimeInterval(5 * 365 * 86400))
        let app = AppleStoreIdentity(bundleId: "com.example.kiosk", appAppleId: 1_234_567_890, environments: [.production])
        // Distinct transactions (ids and dates differ), all from the one chain, as the App Store's come.
        let transactions = try (0..<64).map { index in
            try chain.sign(payload(index: index, signedDate: signedDate, bundleId: app.bundleId))
        }
        print("AppleSignedDataVerifier.transaction(_:for:), one task, \(seconds) s per measure, \(transactions.count) distinct JWS of \(transactions[0].utf8.count) bytes")

        let cache = AppleChainCache()
        let cached = try AppleSignedDataVerifier(rootCertificatesDER: [chain.rootDER], chainCache: cache, clock: { now })
        let uncached = try AppleSignedDataVerifier(rootCertificatesDER: [chain.rootDER], chainCache: nil, clock: { now })

        let withCache = try await measure("with chain cache", seconds: seconds, verifier: cached, transactions, app)
        let statistics = cache.statistics
        print("  chain cache: \(statistics.hits) hits, \(statistics.misses) misses, \(statistics.entries) entries")
        let withoutCache = try await measure("without cache", seconds: seconds, verifier: uncached, transactions, app)
        print(String(format: "ratio (with / without): %.2fx wall, %.2fx per CPU-second",
                     withCache.wall / withoutCache.wall, withCache.cpu / withoutCache.cpu))
    }

    static func option(_ name: String) -> String? {
        let arguments = CommandLine.arguments
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }

    static func payload(index: Int, signedDate: Date, bundleId: String) -> [String: Any] {
        let signed = Int64((signedDate.timeIntervalSince1970 * 1000).rounded()) - Int64(index)
        return [
            "transactionId": "\(2_000_000_123_456_789 + index)", "originalTransactionId": "2000000123450000",
            "webOrderLineItemId": "\(2_000_000_012_345_678 + index)", "bundleId": bundleId, "productId": "kiosk.monthly",
            "subscriptionGroupIdentifier": "21000000", "purchaseDate": signed - 3_600_000,
            "originalPurchaseDate": 1_767_254_400_000, "expiresDate": signed + 30 * 86_400_000, "quantity": 1,
            "type": "Auto-Renewable Subscription", "appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138",
            "inAppOwnershipType": "PURCHASED", "signedDate": signed, "environment": "Production",
            "transactionReason": "PURCHASE", "storefront": "FRA", "storefrontId": "143442", "price": 4990,
            "currency": "EUR", "appTransactionId": "704289572311312345", "isUpgraded": false,
        ]
    }

    /// The process's CPU time in seconds (the task may move between threads, so not one thread's).
    static func processCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Verifies `transactions` round-robin, awaiting each, for `seconds` after a 0.5 s warm-up; prints and
    /// returns transactions per second of wall time and of process CPU time.
    static func measure(
        _ name: String, seconds: Double, verifier: AppleSignedDataVerifier, _ transactions: [String], _ app: AppleStoreIdentity
    ) async throws -> (wall: Double, cpu: Double) {
        let clock = ContinuousClock()
        var index = 0
        var checksum = 0
        let warmUp = clock.now
        while clock.now - warmUp < .milliseconds(500) {
            checksum &+= try await verifier.transaction(transactions[index % transactions.count], for: app).transactionId.utf8.count
            index += 1
        }
        let start = clock.now
        let cpuStart = processCPUSeconds()
        var count = 0
        var elapsed = Duration.zero
        repeat {
            for _ in 0..<16 {
                checksum &+= try await verifier.transaction(transactions[index % transactions.count], for: app).transactionId.utf8.count
                index += 1
                count += 1
            }
            elapsed = clock.now - start
        } while elapsed < .seconds(seconds)
        let cpu = processCPUSeconds() - cpuStart
        let (whole, fraction) = elapsed.components
        let wallSeconds = Double(whole) + Double(fraction) / 1e18
        let rate = (wall: Double(count) / wallSeconds, cpu: Double(count) / cpu)
        print(name.padding(toLength: 18, withPad: " ", startingAt: 0)
            + String(format: " %8.0f transactions/s (%.1f us each) | per CPU-second: %8.0f (%.1f us), %d verified, checksum %d",
                     rate.wall, 1e6 / rate.wall, rate.cpu, 1e6 / rate.cpu, count, checksum))
        return rate
    }
}
