import Foundation
import KioskModels
import XMLRPC

/// Answers of the identity-free catalogue methods (`getEdicions`, `getDarrersEdicio`) and the signed page
/// lists of `getEdicio`, kept in memory under everything they depend on: the method and its arguments,
/// the store's catalogue version (read before the data, so a change by any process or instance retires
/// the entry) and the link bucket (the signed links inside stay the ones the signer would give now).
///
/// Answers are kept encoded (`XMLRPCValue.encoded`): a kept answer is written, not encoded again.
/// Bounded by an estimate of the bytes held; when full the entries go and fill again, and when a newer
/// catalogue version is seen the answers kept under older ones go. Faults are never kept.
public final class AnswerCache: @unchecked Sendable {
    /// What an answer depends on.
    public struct Key: Hashable, Sendable {
        public var method: String
        public var arguments: [String]
        /// nil for an answer that does not depend on the catalogue (a revision's pages never change).
        public var catalogueVersion: Int64?
        public var linkBucket: Int64

        public init(method: String, arguments: [String], catalogueVersion: Int64?, linkBucket: Int64) {
            self.method = method; self.arguments = arguments; self.catalogueVersion = catalogueVersion; self.linkBucket = linkBucket
        }
    }

    /// 0: nothing is kept.
    public let byteLimit: Int
    private let lock = NSLock()
    private var entries: [Key: XMLRPCValue] = [:]
    private var bytes = 0
    private var newestVersion: Int64 = .min

    public init(byteLimit: Int) { self.byteLimit = byteLimit }

    /// The kept answer for `key`, if any.
    public func answer(for key: Key) -> XMLRPCValue? {
        guard byteLimit > 0 else { return nil }
        return lock.withLock { entries[key] }
    }

    /// Keeps `answer` for `key`, unless it alone exceeds the limit or a newer catalogue version was seen.
    public func keep(_ answer: XMLRPCValue, for key: Key) {
        guard byteLimit > 0 else { return }
        let size = Self.estimatedBytes(answer) + 64
        guard size <= byteLimit else { return }
        lock.withLock {
            if let version = key.catalogueVersion {
                if version > newestVersion {
                    newestVersion = version
                    entries = entries.filter { $0.key.catalogueVersion == nil }
                    bytes = entries.reduce(0) { $0 + Self.estimatedBytes($1.value) + 64 }
                }
                guard version == newestVersion else { return }
            }
            if bytes + size > byteLimit {
                entries.removeAll(keepingCapacity: true)
                bytes = 0
            }
            if entries.updateValue(answer, forKey: key) == nil { bytes += size }
        }
    }

    /// Entries and estimated bytes held now.
    public var usage: (entries: Int, bytes: Int) { lock.withLock { (entries.count, bytes) } }

    /// Roughly what the value occupies: its strings' bytes and a fixed cost per value.
    static func estimatedBytes(_ value: XMLRPCValue) -> Int {
        switch value {
        case .string(let text): 16 + text.utf8.count
        case .array(let values): 16 + values.reduce(0) { $0 + estimatedBytes($1) }
        case .structure(let members): 16 + members.reduce(0) { $0 + 16 + $1.name.utf8.count + estimatedBytes($1.value) }
        case .base64(let bytes): 16 + bytes.count
        case .encoded(let encoded): 16 + encoded.bytes.readableBytes
        default: 16
        }
    }
}

extension KioskRPCEnvironment {
    /// The answer kept under (`method`, `arguments`, `catalogueVersion`, the link bucket of `now`), if
    /// any; a hit is reported, a miss is left to whoever then makes the answer.
    func keptAnswer(_ method: String, _ arguments: [String], catalogueVersion: Int64?, now: Int64) -> XMLRPCValue? {
        guard answers.byteLimit > 0,
              let kept = answers.answer(for: answerKey(method, arguments, catalogueVersion: catalogueVersion, now: now))
        else { return nil }
        observer.answerCache(method: method, hit: true)
        return kept
    }

    private func answerKey(_ method: String, _ arguments: [String], catalogueVersion: Int64?, now: Int64) -> AnswerCache.Key {
        AnswerCache.Key(method: method, arguments: arguments, catalogueVersion: catalogueVersion, linkBucket: links.linkBucket(now: now))
    }

    /// The kept answer under (`method`, `arguments`, the store's catalogue version when `versioned`, the
    /// link bucket of `now`), or `make()`'s, kept for the next caller; `kept` tells which. The version is
    /// read before `make` reads the data it guards. Reports hits and misses; with the cache off, only makes.
    func cachedAnswer(_ method: String, _ arguments: [String], versioned: Bool, now: Int64,
                      make: () async throws -> XMLRPCValue) async throws -> (answer: XMLRPCValue, kept: Bool) {
        guard answers.byteLimit > 0 else { return (try await make(), false) }
        let version = versioned ? try await CatalogueSnapshot.version(of: service.store) : nil
        if let kept = keptAnswer(method, arguments, catalogueVersion: version, now: now) { return (kept, true) }
        observer.answerCache(method: method, hit: false)
        let made = try await make()
        guard let encoded = try? XMLRPCEncodedValue(made) else { return (made, false) }
        let answer = XMLRPCValue.encoded(encoded)
        answers.keep(answer, for: answerKey(method, arguments, catalogueVersion: version, now: now))
        return (answer, false)
    }
}
