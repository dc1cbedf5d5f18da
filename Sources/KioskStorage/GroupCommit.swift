import GRDB

/// Writes rows in shared transactions: rows submitted while a transaction is being written wait and
/// go together in the next one. Each `submit` returns only once its row is committed, so nothing
/// acknowledged can be lost, and under load one commit serves many callers.
actor GroupCommit<Row: Sendable> {
    private let writer: any DatabaseWriter
    private let insert: @Sendable (Database, Row) throws -> Void
    private var pending: [(row: Row, done: CheckedContinuation<Void, any Error>)] = []
    private var writing = false
    /// Rows per transaction at most; the rest wait for the next.
    private let maxBatch: Int

    init(writer: any DatabaseWriter, maxBatch: Int = 256, insert: @escaping @Sendable (Database, Row) throws -> Void) {
        self.writer = writer
        self.maxBatch = maxBatch
        self.insert = insert
    }

    func submit(_ row: Row) async throws {
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
            let rows = batch.map(\.row)
            let insert = self.insert
            do {
                try await writer.write { db in
                    for row in rows { try insert(db, row) }
                }
                for entry in batch { entry.done.resume() }
            } catch {
                for entry in batch { entry.done.resume(throwing: error) }
            }
        }
        writing = false
    }
}
