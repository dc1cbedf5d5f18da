import Foundation

/// Catalogue reads that every `getEdicio` makes (the app's offer of the edition, the issue's contents),
/// and the app's web kiosk every `hashQuiosc` reads, kept in memory under the store's catalogue version. The version changes in the same transaction as
/// anything these reads show, whoever writes it (this process, the CLI, another instance), and it is
/// read before the data: a read kept under the version in force is what the store would answer now.
///
/// Bounded by an estimate of the bytes held; when full everything goes and fills again, and when a newer
/// version is seen everything kept under older ones goes. Absences (no such offer, no such issue) are
/// kept too, so a client asking again for a missing issue costs no query either.
public final class CatalogueMemo: @unchecked Sendable {
    /// 0: nothing is kept.
    public let byteLimit: Int
    /// Told of every lookup: which read (`getEdicio.offer`, `getEdicio.issue`, `hashQuiosc.web_kiosk`) and whether it was kept.
    private let observe: (@Sendable (_ read: String, _ hit: Bool) -> Void)?
    private let lock = NSLock()
    private var version: Int64 = .min
    private var offers: [OfferKey: OfferedEdition?] = [:]
    private var contents: [IssueKey: IssueContents?] = [:]
    private var webKiosks: [String: AppWebKiosk?] = [:]
    private var bytes = 0

    private struct OfferKey: Hashable { var appKey: String; var editionID: Int }
    private struct IssueKey: Hashable { var editionID: Int; var date: IssueDate }

    public init(byteLimit: Int, observe: (@Sendable (_ read: String, _ hit: Bool) -> Void)? = nil) {
        self.byteLimit = byteLimit; self.observe = observe
    }

    /// `read()`'s answer for the app's offer of `editionID` under `version`, kept for the next caller.
    public func offeredEdition(appKey: String, editionID: Int, version: Int64,
                               read: () async throws -> OfferedEdition?) async throws -> OfferedEdition? {
        try await lookup("getEdicio.offer", \.offers, OfferKey(appKey: appKey, editionID: editionID), version: version,
                         size: { _ in 256 + appKey.utf8.count }, read: read)
    }

    /// `read()`'s contents of the issue under `version`, kept for the next caller.
    public func issueContents(editionID: Int, date: IssueDate, version: Int64,
                              read: () async throws -> IssueContents?) async throws -> IssueContents? {
        try await lookup("getEdicio.issue", \.contents, IssueKey(editionID: editionID, date: date), version: version,
                         size: Self.estimatedBytes, read: read)
    }

    /// `read()`'s web kiosk of the app under `version` (nil: none stored), kept for the next caller.
    public func webKiosk(appKey: String, version: Int64, read: () async throws -> AppWebKiosk?) async throws -> AppWebKiosk? {
        try await lookup("hashQuiosc.web_kiosk", \.webKiosks, appKey, version: version, size: Self.estimatedBytes, read: read)
    }

    private func lookup<Key: Hashable, Value>(_ name: String, _ table: ReferenceWritableKeyPath<CatalogueMemo, [Key: Value?]>,
                                              _ key: Key, version: Int64, size: (Value?) -> Int,
                                              read: () async throws -> Value?) async throws -> Value? {
        if let kept = lock.withLock({ self.version == version ? self[keyPath: table][key] : nil }) {
            observe?(name, true)
            return kept
        }
        if byteLimit > 0 { observe?(name, false) }
        let value = try await read()
        keep(version: version, size: size(value)) { $0[keyPath: table][key] = .some(value) }
        return value
    }

    /// Entries and estimated bytes held now.
    public var usage: (entries: Int, bytes: Int) { lock.withLock { (offers.count + contents.count + webKiosks.count, bytes) } }

    private func keep(version: Int64, size: Int, _ store: (CatalogueMemo) -> Void) {
        guard byteLimit > 0, size <= byteLimit else { return }
        lock.withLock {
            if version > self.version || bytes + size > byteLimit {
                offers.removeAll(keepingCapacity: true)
                contents.removeAll(keepingCapacity: true)
                webKiosks.removeAll(keepingCapacity: true)
                bytes = 0
                self.version = max(self.version, version)
            }
            guard version == self.version else { return }
            store(self)
            bytes += size
        }
    }

    private static func estimatedBytes(_ kiosk: AppWebKiosk?) -> Int {
        guard let kiosk else { return 64 }
        var bytes = 256 + kiosk.appKey.utf8.count + (kiosk.baseURL?.utf8.count ?? 0)
        for section in kiosk.sections {
            bytes += 96 + section.name.utf8.count + section.path.utf8.count
            for alias in section.aliases { bytes += 32 + alias.utf8.count }
        }
        return bytes
    }

    private static func estimatedBytes(_ issue: IssueContents?) -> Int {
        guard let issue else { return 64 }
        return 256 + issue.pages.reduce(0) { total, page in
            total + 96 + page.section.name.utf8.count + page.files.pdf.utf8.count
                + page.files.jpg.utf8.count + page.files.jpgA.utf8.count
        }
    }
}
