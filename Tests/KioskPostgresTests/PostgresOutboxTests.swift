import KioskModels
@testable import KioskPostgres
import KioskTestPostgres
import KioskTestSupport
import Logging
import PostgresNIO
import Testing

/// What only PostgreSQL needs checked about the outbox: that ids follow commit order across connections.
@Suite(.enabled(if: TestPostgres.configured, TestPostgres.skipReason))
struct PostgresOutboxTests {
    /// Events appended by concurrent transactions, each committing a moment after its insert, are all read
    /// by a reader polling `events(after:)` on another instance: a reader that has moved past an id never
    /// finds a smaller one later. Without the outbox lock a transaction that took its id first and committed
    /// last (after a reader had seen a larger id) would be skipped.
    @Test func concurrentAppendsAreReadWithoutGaps() async throws {
        try await TestPostgres.withDatabase { configuration in
            let writer = try await PostgresKioskStore.connect(configuration, connectionWait: .seconds(60), logger: Logger(label: "test"))
            let reader = try await PostgresKioskStore.connect(configuration, connectionWait: .seconds(60), logger: Logger(label: "test"))
            let writers = 8, perWriter = 25
            let finished = Finished()
            async let seen: [Int64] = {
                var last: Int64 = 0
                var seen: [Int64] = []
                while true {
                    let done = await finished.value
                    let batch = try await reader.events(after: last, types: nil, limit: 1_000)
                    seen += batch.map(\.id)
                    last = batch.last?.id ?? last
                    if done && batch.isEmpty { return seen }
                    try await Task.sleep(for: .milliseconds(1))
                }
            }()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for w in 0..<writers {
                    group.addTask {
                        for n in 0..<perWriter {
                            try await writer.withTransaction { c in
                                try await writer.appendEvents([NewEvent(.readerAdded, EventBody(reader: w * 1_000 + n))],
                                                              at: SampleCatalogue.startTime, on: c)
                                // The commit comes a moment after the insert, as after any change's last statement.
                                try await Task.sleep(for: .milliseconds(Int.random(in: 0...12)))
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            await finished.set()
            let read = try await seen
            let stored = try await reader.events(after: 0, types: nil, limit: 10_000).map(\.id)
            #expect(stored.count == writers * perWriter)
            #expect(read == stored, "missed: \(Set(stored).subtracting(read).sorted())")
            await writer.close()
            await reader.close()
        }
    }
}

/// Whether the writers are done.
private actor Finished {
    private(set) var value = false
    func set() { value = true }
}
