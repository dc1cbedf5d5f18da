import KioskPurchases
import Synchronization
import Testing

@Suite struct VerificationLimitTests {
    final class Counter: Sendable {
        let state = Mutex((running: 0, most: 0, done: 0))
        func enter() { state.withLock { $0.running += 1; $0.most = max($0.most, $0.running) } }
        func leave() { state.withLock { $0.running -= 1; $0.done += 1 } }
    }

    @Test func neverMoreThanTheLimitAtOnceAndEveryOneRuns() async throws {
        for limit in [1, 3] {
            let gate = VerificationLimit(limit: limit)
            let counter = Counter()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<40 {
                    group.addTask {
                        try await gate.run {
                            counter.enter()
                            try await Task.sleep(for: .milliseconds(2))
                            counter.leave()
                        }
                    }
                }
                try await group.waitForAll()
            }
            let state = counter.state.withLock { $0 }
            #expect(state.done == 40)
            #expect(state.most == limit, "at most \(limit) at once, and that many when 40 wait")
        }
    }

    @Test func aCancelledWaiterStopsWaitingAndGivesNoPlaceAway() async throws {
        let gate = VerificationLimit(limit: 1)
        let release = AsyncStream<Void>.makeStream()
        let holder = Task { try await gate.run { for await _ in release.stream { break } } }
        try await Task.sleep(for: .milliseconds(50))
        let waiter = Task { try await gate.run { "ran" } }
        try await Task.sleep(for: .milliseconds(50))
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        release.continuation.yield()
        try await holder.value
        // The place the holder gave back is free again: a new verification runs at once.
        #expect(try await gate.run { "after" } == "after")
    }

    @Test func aThrowingVerificationGivesItsPlaceBack() async throws {
        struct Refused: Error {}
        let gate = VerificationLimit(limit: 1)
        await #expect(throws: Refused.self) { try await gate.run { throw Refused() } }
        #expect(try await gate.run { 1 } == 1)
    }
}
