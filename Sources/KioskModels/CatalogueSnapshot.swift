import Foundation

/// The catalogue version one request works under: read from the store at most once, at its first use,
/// then the same for every cache and check the request makes (the kept answers, the catalogue memo), so
/// a request never mixes two versions and a PostgreSQL deployment pays one round trip for it, not one a
/// cache. The HTTP layer starts one per request (`CatalogueSnapshot.current`); outside a request each
/// use reads the store.
public final class CatalogueSnapshot: @unchecked Sendable {
    private let store: any KioskStore
    private let lock = NSLock()
    private var version: Int64?

    public init(store: any KioskStore) {
        self.store = store
    }

    /// The snapshot of the request the current task serves, if any.
    @TaskLocal public static var current: CatalogueSnapshot?

    /// The version: read at the first call (at once where the store knows it, else by a query), then kept.
    public func catalogueVersion() async throws -> Int64 {
        if let known = lock.withLock({ version }) { return known }
        let read = try await Self.read(store)
        return lock.withLock {
            if version == nil { version = read }
            return version ?? read
        }
    }

    /// The version of the current request's snapshot, or the store's now outside a request.
    public static func version(of store: any KioskStore) async throws -> Int64 {
        if let current { return try await current.catalogueVersion() }
        return try await read(store)
    }

    /// At once where the store knows it, else by a query.
    private static func read(_ store: any KioskStore) async throws -> Int64 {
        if let known = store.catalogueVersionAtOnce() { return known }
        return try await store.catalogueVersion()
    }
}
