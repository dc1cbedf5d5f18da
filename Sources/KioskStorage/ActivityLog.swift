import Foundation
import GRDB

/// The identity keys each app saw per UTC day (`active_identities`), written at most once per key, app
/// and day by this process, in the background: later sightings the same day are answered from memory,
/// and no call waits for the write, so the listings (`getEdicions`, `getDarrersEdicio`) cost no write
/// per call and go on while the database refuses writes.
///
/// The memory is one entry per key seen today, dropped when the day changes or after `capacity`
/// entries (then a key may be written again, which the primary key makes harmless). A failed write is
/// forgotten, so the key's next call tries again; a crash loses at most the sightings not yet written.
final class ActivityLog: @unchecked Sendable {
    static let capacity = 500_000
    static let maxPending = 100_000
    static let batchSize = 512

    private let writer: any DatabaseWriter
    private let lock = NSLock()
    private var day: Int64 = 0
    private var seen = Set<ActiveIdentityRecord>()
    private var pending: [ActiveIdentityRecord] = []
    private var writing = false

    init(writer: any DatabaseWriter) { self.writer = writer }

    /// Queues `entry` for writing unless this process already did today; returns at once.
    func record(_ entry: ActiveIdentityRecord) {
        let startWriter: Bool = lock.withLock {
            if entry.day > day || seen.count >= Self.capacity {
                day = max(day, entry.day)
                seen.removeAll()
            }
            guard pending.count < Self.maxPending, seen.insert(entry).inserted else { return false }
            pending.append(entry)
            let idle = !writing
            writing = true
            return idle
        }
        if startWriter { Task { await self.writePending() } }
    }

    private func writePending() async {
        while true {
            let batch: [ActiveIdentityRecord] = lock.withLock {
                let batch = Array(pending.prefix(Self.batchSize))
                pending.removeFirst(batch.count)
                if batch.isEmpty { writing = false }
                return batch
            }
            if batch.isEmpty { return }
            do {
                try await writer.write { db in
                    for entry in batch { try entry.insert(db, onConflict: .ignore) }
                }
            } catch {
                lock.withLock { for entry in batch { seen.remove(entry) } }
            }
        }
    }
}
