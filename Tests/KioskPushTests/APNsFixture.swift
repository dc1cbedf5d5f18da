import Crypto
import Foundation
import KioskPush
import KioskPushStandIn
import NIOCore
import NIOPosix

/// An APNs stand-in in this process and a sender pointed at it, trusting only the stand-in's authority.
enum APNsFixture {
    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"
    static let topic = "com.example.kiosk"
    static let message = PushMessage.newIssue(
        edition: "1", date: "2025-06-02",
        alert: .init(title: "Nacional", body: "The issue of 2 June is out", imageURL: "https://kiosk.example/cover/1.jpg"))

    /// A 64-digit hexadecimal device token made from `n`.
    static func token(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return String(repeating: "0", count: max(0, 64 - hex.count)) + hex
    }

    static func devices(_ range: Range<Int>, app: String = topic) -> [PushDevice] {
        range.map { PushDevice(token: token($0), app: app) }
    }

    /// Starts the stand-in (changed by `standIn`) and a sender (changed by `sender`) with a fresh key, runs
    /// `body`, then stops both, also when `body` throws.
    static func run<T>(
        standIn changeStandIn: (inout APNsStandIn.Configuration) -> Void = { _ in },
        sender changeSender: (inout APNsConfiguration) -> Void = { _ in },
        clock: @escaping @Sendable () -> Date = { Date() },
        tokens givenTokens: APNsTokens? = nil,
        observer: any PushObserver = NoPushObserver(),
        ownEventLoops: Bool = false,
        _ body: (APNsStandIn, APNsSender) async throws -> T
    ) async throws -> T {
        // A big send gets event loops of its own, so it does not hold up the connections of tests running beside it.
        let group: any EventLoopGroup = ownEventLoops ? MultiThreadedEventLoopGroup(numberOfThreads: 2) : MultiThreadedEventLoopGroup.singleton
        defer {
            if ownEventLoops {
                group.shutdownGracefully { _ in }
            }
        }
        let key = P256.Signing.PrivateKey()
        var configuration = APNsStandIn.Configuration(teamID: teamID, keyID: keyID, publicKey: key.publicKey, topics: [topic])
        changeStandIn(&configuration)
        let standIn = try await APNsStandIn.start(configuration, group: group)
        let tokens = try givenTokens ?? APNsTokens(key: APNsSigningKey(p8: key.pemRepresentation, keyID: keyID, teamID: teamID), clock: clock)
        var senderConfiguration = APNsConfiguration(
            environment: .sandbox, baseURL: standIn.baseURL, connections: 1,
            retry: PushRetryPolicy(maximumAttempts: 3, initialBackoff: .milliseconds(10), maximumBackoff: .milliseconds(100)),
            timeout: .seconds(60), tls: standIn.authority.clientTLS)
        changeSender(&senderConfiguration)
        let sender: APNsSender
        do {
            sender = try APNsSender(tokens: tokens, configuration: senderConfiguration, observer: observer, eventLoopGroup: group)
        } catch {
            try await standIn.stop()
            throw error
        }
        let result: Result<T, any Error>
        do {
            result = .success(try await body(standIn, sender))
        } catch {
            result = .failure(error)
        }
        try await sender.shutdown()
        try await standIn.stop()
        return try result.get()
    }
}


/// Counts what an observer is told.
final class CountingObserver: PushObserver, @unchecked Sendable {
    private let lock = NSLock()
    private(set) var results = 0
    private(set) var finished: [PushCounts] = []

    func pushed(_ result: PushResult, service: PushService) {
        lock.lock()
        results += 1
        lock.unlock()
    }

    func finished(_ counts: PushCounts, service: PushService, duration: Duration) {
        lock.lock()
        finished.append(counts)
        lock.unlock()
    }

    var snapshot: (results: Int, finished: [PushCounts]) {
        lock.lock()
        defer { lock.unlock() }
        return (results, finished)
    }
}
