/// A read shared by concurrent callers without ever answering one with a value read before it called:
/// at most one read runs at a time, and the callers who arrive while it runs share the next one, which
/// starts when it ends. A burst of requests costs two reads, not one each (the catalogue version every
/// authenticated request asks the database, so a change is enforced at the next request).
package actor CoalescedRead<Value: Sendable> {
    private let read: @Sendable () async throws -> Value
    /// The read in progress, if any.
    private var running: Task<Value, any Error>?
    /// The read that starts when `running` ends, shared by everyone who came meanwhile.
    private var queued: Task<Value, any Error>?

    package init(_ read: @escaping @Sendable () async throws -> Value) { self.read = read }

    package func value() async throws -> Value {
        let task: Task<Value, any Error>
        if let queued {
            task = queued
        } else if let running {
            task = Task { [read] in
                _ = await running.result
                await self.promote()
                return try await read()
            }
            queued = task
        } else {
            task = Task { [read] in try await read() }
            running = task
        }
        let result = await task.result
        if running == task { running = nil }
        return try result.get()
    }

    /// The queued read starts: it becomes the running one, and later callers queue behind it.
    private func promote() {
        running = queued
        queued = nil
    }
}
