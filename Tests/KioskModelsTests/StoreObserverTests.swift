import KioskModels
import Synchronization
import Testing

/// Store operations are named by the method they run in, and timed with whether they threw.
@Suite struct StoreObserverTests {
    final class Recorder: StoreObserver {
        let seen = Mutex<[(String, Bool)]>([])
        func storeOperation(_ operation: StoreOperation, duration: Duration, failed: Bool) {
            seen.withLock { $0.append((operation.name, failed)) }
        }
    }

    struct Failure: Error {}

    @Test func operationsAreNamedInSnakeCaseFromTheMethod() {
        #expect(StoreOperation("consumeDemo(appKey:deviceKey:quota:at:)").name == "consume_demo")
        #expect(StoreOperation("app(key:)").name == "app")
        #expect(StoreOperation("catalogueVersion()").name == "catalogue_version")
        #expect(StoreOperation("recordDownload(_:)").name == "record_download")
    }

    @Test func equalAndHashedByTheirText() {
        let one = StoreOperation("useDemoGrant(appKey:deviceKey:editionID:date:at:)")
        let other = StoreOperation("useDemoGrant(appKey:deviceKey:editionID:date:at:)")
        #expect(one == other && one.hashValue == other.hashValue)
        #expect(Set([one, other, StoreOperation("app(key:)")]).count == 2)
        #expect(one != StoreOperation("useDemoGrant(appKey:)"))
    }

    @Test func timingReportsTheCallersNameAndFailures() async throws {
        let recorder = Recorder()
        func consumeDemo() throws -> Int { try recorder.timing(#function) { 3 } }
        func ping() async throws { try await recorder.timing(#function) { throw Failure() } }
        #expect(try consumeDemo() == 3)
        await #expect(throws: Failure.self) { try await ping() }
        let seen = recorder.seen.withLock { $0 }
        #expect(seen.map(\.0) == ["consume_demo", "ping"])
        #expect(seen.map(\.1) == [false, true])
    }
}
