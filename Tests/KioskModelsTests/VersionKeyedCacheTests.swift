import Foundation
import KioskModels
import Testing

/// The one cache of values kept under a catalogue version: its bound, its versions and what it tells.
@Suite struct VersionKeyedCacheTests {
    final class Events: CacheObserver, @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        var all: [String] { lock.withLock { lines } }
        func cacheLookup(cache: String, lookup: String, hit: Bool) { lock.withLock { lines.append("\(cache) \(lookup) \(hit ? "hit" : "miss")") } }
        func cacheEvicted(cache: String, entries: Int, reason: CacheEviction) { lock.withLock { lines.append("\(cache) evicted \(entries) \(reason.rawValue)") } }
    }

    @Test func staysWithinItsBytesAndItsVersion() {
        let events = Events()
        let cache = VersionKeyedCache<String, String>(name: "c", byteLimit: 4_096, observer: events)
        for index in 0..<20 {
            cache.keep("x", for: String(index), version: 1, bytes: 1_000)
            #expect(cache.usage.bytes <= 4_096)
        }
        #expect(cache.value(for: "19", version: 1, lookup: "m") == "x")
        #expect(cache.value(for: "19", version: 2, lookup: "m") == nil, "a value is answered only under its own version")
        #expect(events.all.filter { $0 == "c evicted 4 full" }.count == 4, "each time it was full, its four values went: \(events.all)")
        cache.keep("new", for: "new", version: 2, bytes: 1_000)
        #expect(cache.usage.entries == 1, "a newer catalogue version retires the older values")
        #expect(events.all.last == "c evicted 4 newer_version")
        cache.keep("old", for: "old", version: 1, bytes: 1_000)
        #expect(cache.value(for: "old", version: 1, lookup: "m") == nil, "a value read under an older version is not kept")
        cache.keep("pages", for: "pages", version: nil, bytes: 100)
        cache.keep("newer", for: "newer", version: 3, bytes: 1_000)
        #expect(cache.value(for: "pages", version: nil, lookup: "p") == "pages", "values under no version outlive version changes")
        #expect(cache.value(for: "new", version: 2, lookup: "m") == nil)
        #expect(cache.usage.entries == 2 && cache.usage.bytes == 1_100, "the bytes follow what is held: \(cache.usage)")
        cache.keep("again", for: "newer", version: 3, bytes: 500)
        #expect(cache.usage.bytes == 600, "a value kept again replaces the old one's bytes")
        let tiny = VersionKeyedCache<String, String>(name: "t", byteLimit: 100)
        tiny.keep("big", for: "k", version: 1, bytes: 101)
        #expect(tiny.usage.entries == 0, "a value larger than the limit is not kept")
    }

    @Test func readsOnceAndCountsHitsAndMisses() async throws {
        let events = Events()
        let cache = VersionKeyedCache<String, Int?>(name: "c", byteLimit: 1 << 20, observer: events)
        var reads = 0
        for _ in 0..<3 {
            let value = try await cache.value(for: "absent", version: 7, lookup: "m", bytes: { _ in 64 }) {
                reads += 1
                return nil
            }
            #expect(value == nil)
        }
        #expect(reads == 1, "an absence is kept too")
        #expect(events.all == ["c m miss", "c m hit", "c m hit"])
        let off = VersionKeyedCache<String, Int?>(name: "off", byteLimit: 0, observer: events)
        _ = try await off.value(for: "k", version: 1, lookup: "m", bytes: { _ in 1 }) { reads += 1; return 1 }
        _ = try await off.value(for: "k", version: 1, lookup: "m", bytes: { _ in 1 }) { reads += 1; return 1 }
        #expect(reads == 3 && events.all.count == 3, "a cache of 0 bytes reads every time and tells nothing")
    }
}
