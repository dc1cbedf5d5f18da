import Foundation
import KioskModels

/// An identity key an app saw on a UTC day (days since 1970-01-01): a row of `active_identities`.
package struct IdentitySighting: Sendable, Hashable {
    package var day: Int64
    package var appKey: String
    package var identityKey: String
    package init(day: Int64, appKey: String, identityKey: String) {
        self.day = day; self.appKey = appKey; self.identityKey = identityKey
    }
}

/// The identity keys each app saw per UTC day (`active_identities`), written at most once per key, app
/// and day by this process, in the background: later sightings the same day are answered from memory,
/// and no call waits for the write, so the listings (`getEdicions`, `getDarrersEdicio`) cost no write
/// per call and go on while the database refuses writes.
///
/// The memory is one entry per key seen today, dropped when the day changes or after `capacity`
/// entries (then a key may be written again, which the primary key makes harmless). An entry is a 64-bit
/// digest of the sighting (`Hasher`, seeded per process), not the sighting: 8 bytes a bucket, at most
/// ~8 MiB at `capacity`, where the sightings themselves (a 43-character key in a heap string each) would
/// cost ~130 bytes an entry, ~65 MiB. Two sightings with the same digest (a chance of about 1 in 10^8 at
/// `capacity`) count as one that day. A failed write is forgotten, so the key's next call tries again;
/// a crash loses at most the sightings not yet written.
///
/// The listings take any `idenkey`, so one client could add rows without end: each app records at most
/// `perAppDayLimit` distinct keys a day in this process; the rest are answered `overLimit` (and counted
/// by the caller, `kiosk_activity_unrecorded_total`).
package final class ActivityLog: @unchecked Sendable {
    static let capacity = 500_000
    package static let perAppDayLimit = 50_000
    static let maxPending = 100_000
    static let batchSize = 512

    /// Inserts a batch, ignoring rows already there.
    private let write: @Sendable ([IdentitySighting]) async throws -> Void
    private let lock = NSLock()
    private var day: Int64 = 0
    /// Digests of the sightings queued or written today (`digest`).
    private var seen = Set<UInt64>()
    /// Keys queued today per app (bounded by the apps that exist: a sighting comes from a known app).
    private var queuedToday: [String: Int] = [:]
    private var pending: [IdentitySighting] = []
    private var writing = false

    package init(write: @escaping @Sendable ([IdentitySighting]) async throws -> Void) { self.write = write }

    /// Queues `entry` for writing unless this process already did today or its app is over the day's
    /// limit; returns at once.
    @discardableResult
    package func record(_ entry: IdentitySighting) -> SightingOutcome {
        let (outcome, startWriter): (SightingOutcome, Bool) = lock.withLock {
            if entry.day > day {
                day = entry.day
                seen.removeAll()
                queuedToday.removeAll()
            } else if seen.count >= Self.capacity {
                seen.removeAll()
            }
            let digest = Self.digest(entry)
            guard pending.count < Self.maxPending, !seen.contains(digest) else { return (.known, false) }
            guard queuedToday[entry.appKey, default: 0] < Self.perAppDayLimit else { return (.overLimit, false) }
            seen.insert(digest)
            queuedToday[entry.appKey, default: 0] += 1
            pending.append(entry)
            let idle = !writing
            writing = true
            return (.queued, idle)
        }
        if startWriter { Task { await self.writePending() } }
        return outcome
    }

    /// Queues the sighting of `identityKey` on `appKey` on the UTC day of Unix time `time`, as `record(_:)`.
    @discardableResult
    package func record(appKey: String, identityKey: String, at time: Int64) -> SightingOutcome {
        record(IdentitySighting(day: time / 86_400, appKey: appKey, identityKey: identityKey))
    }

    /// What `seen` keeps of a sighting: its 64-bit hash.
    private static func digest(_ entry: IdentitySighting) -> UInt64 {
        UInt64(truncatingIfNeeded: entry.hashValue)
    }

    private func writePending() async {
        while true {
            let batch: [IdentitySighting] = lock.withLock {
                let batch = Array(pending.prefix(Self.batchSize))
                pending.removeFirst(batch.count)
                if batch.isEmpty { writing = false }
                return batch
            }
            if batch.isEmpty { return }
            do {
                try await write(batch)
            } catch {
                lock.withLock { for entry in batch { seen.remove(Self.digest(entry)) } }
            }
        }
    }
}
