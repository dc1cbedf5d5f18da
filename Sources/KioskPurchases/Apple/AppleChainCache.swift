import Crypto
import Foundation
import Synchronization

/// Certificate chains an `AppleSignedDataVerifier` has verified, by their bytes: a chain seen again is not
/// verified again. What is kept is the leaf's key and the window in which every certificate of the chain is
/// valid, so each use still checks the signing time against that window (outside it, the chain is verified
/// afresh) and the signature is still checked every time.
///
/// Bounded: past `capacity` chains, the least recently used is dropped. Entries are keyed by the verifier's
/// root certificates too, so one cache may serve verifiers configured with different roots.
public final class AppleChainCache: Sendable {
    /// How the cache has been used, for tests and metrics.
    public struct Statistics: Hashable, Sendable {
        /// Lookups answered from the cache.
        public var hits: Int
        /// Lookups that had to verify the chain (not cached, or the signing time outside its window).
        public var misses: Int
        /// Chains held now.
        public var entries: Int

        public init(hits: Int, misses: Int, entries: Int) {
            self.hits = hits
            self.misses = misses
            self.entries = entries
        }
    }

    struct Entry {
        let key: P256.Signing.PublicKey
        let notBefore: Date
        let notAfter: Date
        var lastUse: UInt64
    }

    private struct State {
        var entries: [SHA256Digest: Entry] = [:]
        var uses: UInt64 = 0
        var hits = 0
        var misses = 0
    }

    public let capacity: Int
    private let state = Mutex(State())

    /// - Parameter capacity: how many chains to keep (at least 1). The App Store signs with a handful of
    ///   leaf certificates at a time.
    public init(capacity: Int = 32) {
        self.capacity = max(1, capacity)
    }

    public var statistics: Statistics {
        state.withLock { Statistics(hits: $0.hits, misses: $0.misses, entries: $0.entries.count) }
    }

    /// The leaf key of a verified chain whose validity window holds `date`; nil (a miss) otherwise.
    func key(for chain: SHA256Digest, at date: Date) -> P256.Signing.PublicKey? {
        state.withLock { state in
            state.uses &+= 1
            guard var entry = state.entries[chain], entry.notBefore <= date, date <= entry.notAfter else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            entry.lastUse = state.uses
            state.entries[chain] = entry
            return entry.key
        }
    }

    func insert(_ chain: SHA256Digest, key: P256.Signing.PublicKey, notBefore: Date, notAfter: Date) {
        state.withLock { state in
            state.uses &+= 1
            state.entries[chain] = Entry(key: key, notBefore: notBefore, notAfter: notAfter, lastUse: state.uses)
            while state.entries.count > capacity {
                guard let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) else { break }
                state.entries[oldest.key] = nil
            }
        }
    }
}
