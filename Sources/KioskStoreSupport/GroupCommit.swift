/// Writes rows in shared transactions: rows submitted while a transaction is being written wait and
/// go together in the next one. Each `submit` returns only once its row is committed, so nothing
/// acknowledged can be lost, and under load one commit serves many callers. The store gives `write`,
/// which commits a batch in one transaction or throws.
package actor GroupCommit<Row: Sendable> {
    private let write: @Sendable ([Row]) async throws -> Void
    private var pending: [(row: Row, done: CheckedContinuation<Void, any Error>)] = []
    private var writing = false
    /// Rows per transaction at most; the rest wait for the next.
    private let maxBatch: Int

    package init(maxBatch: Int = 256, write: @escaping @Sendable ([Row]) async throws -> Void) {
        self.maxBatch = maxBatch
        self.write = write
    }

    package func submit(_ row: Row) async throws {
        try await withCheckedThrowingContinuation { continuation in
            pending.append((row, continuation))
            if !writing {
                writing = true
                Task { await self.drain() }
            }
        }
    }

    private func drain() async {
        while !pending.isEmpty {
            let batch = Array(pending.prefix(maxBatch))
            pending.removeFirst(batch.count)
            do {
                try await write(batch.map(\.row))
                for entry in batch { entry.done.resume() }
            } catch {
                for entry in batch { entry.done.resume(throwing: error) }
            }
        }
        writing = false
    }
}
