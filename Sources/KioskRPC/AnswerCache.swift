import NIOCore
import Foundation
import KioskModels
import XMLRPC

/// Answers of the identity-free catalogue methods (`getEdicions`, `getDarrersEdicio`) and the signed page
/// lists of `getEdicio`, kept in memory under everything they depend on: the method and its arguments
/// and the link bucket (the signed links inside stay the ones the signer would give now) in the key, the
/// store's catalogue version as the cache's version (none for a revision's pages, which never change).
/// Answers are kept encoded (`XMLRPCValue.encoded`): a kept answer is written, not encoded again. Faults
/// are never kept.
public typealias AnswerCache = VersionKeyedCache<AnswerKey, XMLRPCValue>

/// What a kept answer depends on, besides the catalogue version.
public struct AnswerKey: Hashable, Sendable {
    public var method: String
    public var arguments: [String]
    public var linkBucket: Int64

    public init(method: String, arguments: [String], linkBucket: Int64) {
        self.method = method; self.arguments = arguments; self.linkBucket = linkBucket
    }

    /// Roughly what an answer occupies: its strings' bytes and a fixed cost per value, and the key's.
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
        answers.value(for: answerKey(method, arguments, now: now), version: catalogueVersion, lookup: method)
    }

    private func answerKey(_ method: String, _ arguments: [String], now: Int64) -> AnswerKey {
        AnswerKey(method: method, arguments: arguments, linkBucket: links.linkBucket(now: now))
    }

    /// The kept answer under (`method`, `arguments`, the store's catalogue version when `versioned`, the
    /// link bucket of `now`), or `make()`'s, kept for the next caller; `kept` tells which. The version is
    /// read before `make` reads the data it guards. Reports hits and misses; with the cache off, only makes.
    func cachedAnswer(_ method: String, _ arguments: [String], versioned: Bool, now: Int64,
                      make: () async throws -> XMLRPCValue) async throws -> (answer: XMLRPCValue, kept: Bool) {
        guard answers.isEnabled else { return (try await make(), false) }
        let version = versioned ? try await CatalogueSnapshot.version(of: service.store) : nil
        let key = answerKey(method, arguments, now: now)
        if let kept = answers.value(for: key, version: version, lookup: method) { return (kept, true) }
        answers.missed(lookup: method)
        let made = try await make()
        guard let encoded = try? XMLRPCEncodedValue(made) else { return (made, false) }
        let answer = XMLRPCValue.encoded(encoded)
        answers.keep(answer, for: key, version: version,
                     bytes: AnswerKey.estimatedBytes(answer) + 64)
        return (answer, false)
    }
}
