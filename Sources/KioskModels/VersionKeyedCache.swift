import Foundation

/// Values kept in memory under the catalogue version they were read at (`CatalogueSnapshot`), or under
/// none for a value no catalogue change affects. The version changes in the same transaction as anything
/// the catalogue shows, whoever writes it (this process, the CLI, another instance), and it is read
/// before the data: a value kept under the version in force is what the store would answer now.
///
/// Bounded by an estimate of the bytes held: when a value would not fit, everything goes and fills
/// again; when a newer version is seen, what was kept under older ones goes. Both are evictions, told
/// to the observer with hits and misses.
public final class VersionKeyedCache<Key: Hashable & Sendable, Value>: @unchecked Sendable {
    /// The cache's name in metrics (`answers`, `catalogue_reads`).
    public let name: String
    /// 0: nothing is kept.
    public let byteLimit: Int
    private let observer: (any CacheObserver)?
    private let lock = NSLock()
    private var entries: [Key: Entry] = [:]
    private var bytes = 0
    private var newestVersion: Int64 = .min

    private struct Entry {
        var value: Value
        var version: Int64?
        var bytes: Int
    }

    public init(name: String, byteLimit: Int, observer: (any CacheObserver)? = nil) {
        self.name = name
        self.byteLimit = byteLimit
        self.observer = observer
    }

    /// Whether anything is ever kept.
    public var isEnabled: Bool { byteLimit > 0 }

    /// The value kept for `key` under `version` (nil: a value kept under none), if any. A hit is told to
    /// the observer under `lookup` (which read it was, for metrics); a miss is told by whoever then reads
    /// the value (`missed`), so that a caller who only looks (`KeptAnswerHandler`) counts nothing twice.
    public func value(for key: Key, version: Int64?, lookup: String) -> Value? {
        guard isEnabled else { return nil }
        guard let kept = lock.withLock({ entries[key].flatMap { $0.version == version ? $0.value : nil } }) else { return nil }
        observer?.cacheLookup(cache: name, lookup: lookup, hit: true)
        return kept
    }

    /// Tells the observer of a miss: the value is being read to be kept.
    public func missed(lookup: String) {
        if isEnabled { observer?.cacheLookup(cache: name, lookup: lookup, hit: false) }
    }

    /// Keeps `value` for `key` under `version`, unless it alone is over the limit or a newer version was
    /// seen. `bytes`: an estimate of what it holds.
    public func keep(_ value: Value, for key: Key, version: Int64?, bytes size: Int) {
        guard isEnabled, size <= byteLimit else { return }
        let evicted: [(count: Int, reason: CacheEviction)] = lock.withLock {
            var evicted: [(Int, CacheEviction)] = []
            if let version {
                if version > newestVersion {
                    newestVersion = version
                    let before = entries.count
                    entries = entries.filter { $0.value.version == nil }
                    bytes = entries.values.reduce(0) { $0 + $1.bytes }
                    if before > entries.count { evicted.append((before - entries.count, .newerVersion)) }
                }
                guard version == newestVersion else { return evicted }
            }
            if bytes + size > byteLimit {
                if !entries.isEmpty { evicted.append((entries.count, .full)) }
                entries.removeAll(keepingCapacity: true)
                bytes = 0
            }
            if let replaced = entries.updateValue(Entry(value: value, version: version, bytes: size), forKey: key) {
                bytes -= replaced.bytes
            }
            bytes += size
            return evicted
        }
        for eviction in evicted { observer?.cacheEvicted(cache: name, entries: eviction.count, reason: eviction.reason) }
    }

    /// `read()`'s value for `key` under `version`, kept for the next caller: kept values (absences
    /// included, as `Value` may be optional) are answered without reading.
    public func value(for key: Key, version: Int64, lookup: String, bytes: (Value) -> Int,
                      read: () async throws -> Value) async throws -> Value {
        if let kept = value(for: key, version: version, lookup: lookup) { return kept }
        missed(lookup: lookup)
        let value = try await read()
        keep(value, for: key, version: version, bytes: bytes(value))
        return value
    }

    /// Entries and estimated bytes held now.
    public var usage: (entries: Int, bytes: Int) { lock.withLock { (entries.count, bytes) } }
}

/// Why kept values went.
public enum CacheEviction: String, Sendable {
    /// A value would not fit: everything went.
    case full
    /// A newer catalogue version was seen: what was kept under older ones went.
    case newerVersion = "newer_version"
}

/// Hears a `VersionKeyedCache`'s lookups and evictions; metrics plug in here.
public protocol CacheObserver: Sendable {
    func cacheLookup(cache: String, lookup: String, hit: Bool)
    func cacheEvicted(cache: String, entries: Int, reason: CacheEviction)
}
