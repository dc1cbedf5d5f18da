import Foundation

/// Catalogue reads that every `getEdicio` makes (the app's offer of the edition, the issue's contents),
/// and the app's web kiosk every `hashQuiosc` reads, kept in a `VersionKeyedCache` (`catalogue_reads`)
/// under the catalogue version. Absences (no such offer, no such issue) are kept too, so a client asking
/// again for a missing issue costs no query either.
public final class CatalogueMemo: Sendable {
    private enum Key: Hashable, Sendable {
        case offer(appKey: String, editionID: Int)
        case issue(editionID: Int, date: IssueDate)
        case webKiosk(appKey: String)
    }
    private enum Read {
        case offer(OfferedEdition?)
        case issue(IssueContents?)
        case webKiosk(AppWebKiosk?)
    }
    private let cache: VersionKeyedCache<Key, Read>

    public init(byteLimit: Int, observer: (any CacheObserver)? = nil) {
        cache = VersionKeyedCache(name: "catalogue_reads", byteLimit: byteLimit, observer: observer)
    }

    /// 0: nothing is kept.
    public var byteLimit: Int { cache.byteLimit }

    /// `read()`'s answer for the app's offer of `editionID` under `version`, kept for the next caller.
    public func offeredEdition(appKey: String, editionID: Int, version: Int64,
                               read: () async throws -> OfferedEdition?) async throws -> OfferedEdition? {
        let kept = try await cache.value(for: .offer(appKey: appKey, editionID: editionID), version: version,
                                         lookup: "getEdicio.offer", bytes: Self.estimatedBytes) { .offer(try await read()) }
        guard case .offer(let offer) = kept else { return try await read() }
        return offer
    }

    /// `read()`'s contents of the issue under `version`, kept for the next caller.
    public func issueContents(editionID: Int, date: IssueDate, version: Int64,
                              read: () async throws -> IssueContents?) async throws -> IssueContents? {
        let kept = try await cache.value(for: .issue(editionID: editionID, date: date), version: version, lookup: "getEdicio.issue",
                                         bytes: Self.estimatedBytes) { .issue(try await read()) }
        guard case .issue(let contents) = kept else { return try await read() }
        return contents
    }

    /// `read()`'s web kiosk of the app under `version` (nil: none stored), kept for the next caller.
    public func webKiosk(appKey: String, version: Int64, read: () async throws -> AppWebKiosk?) async throws -> AppWebKiosk? {
        let kept = try await cache.value(for: .webKiosk(appKey: appKey), version: version, lookup: "hashQuiosc.web_kiosk",
                                         bytes: Self.estimatedBytes) { .webKiosk(try await read()) }
        guard case .webKiosk(let kiosk) = kept else { return try await read() }
        return kiosk
    }

    /// Entries and estimated bytes held now.
    public var usage: (entries: Int, bytes: Int) { cache.usage }

    private static func estimatedBytes(_ read: Read) -> Int {
        switch read {
        case .offer(let offer): 256 + (offer?.line.appKey.utf8.count ?? 0)
        case .issue(let contents): estimatedBytes(contents)
        case .webKiosk(let kiosk): estimatedBytes(kiosk)
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
