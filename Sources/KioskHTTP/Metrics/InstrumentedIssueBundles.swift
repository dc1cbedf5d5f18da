import KioskEditions
import KioskModels
import NIOConcurrencyHelpers
import KioskConfig

/// Counts and times the bundle builds behind `IssueBundles` (`kiosk_bundle_builds_total`,
/// `kiosk_bundle_build_duration_seconds`) without touching the editions layer.
///
/// Most calls find the bundle already built. `BundleService` counts the builds it actually ran
/// (`buildCount`), so after each call the builds this decorator has not seen yet are recorded, with the
/// duration of the call that saw them (the build, plus at most the wait for it). Other implementations
/// are passed through.
package struct InstrumentedIssueBundles: IssueBundles {
    package let base: any IssueBundles
    package let metrics: KioskMetrics

    package init(_ base: any IssueBundles, metrics: KioskMetrics) {
        self.base = base
        self.metrics = metrics
    }

    package func bundle(for contents: IssueContents, offered: OfferedEdition) async throws -> BundleInfo {
        guard let service = base as? BundleService else { return try await base.bundle(for: contents, offered: offered) }
        let start = ContinuousClock.now
        let info = try await service.bundle(for: contents, offered: offered)
        let total = await service.buildCount
        let new = metrics.bundleBuildsSeen.unseen(service, total: total)
        if new > 0 {
            let duration = start.duration(to: .now)
            for _ in 0..<new { metrics.bundleBuilt(duration: duration) }
        }
        return info
    }
}

/// The builds already recorded, per `BundleService` instance (a reload may or may not make a new one).
package final class BundleBuildsSeen: Sendable {
    private struct Entry { let service: BundleService; var seen: Int }
    /// Holding the services keeps their identities unique; a reload adds at most one.
    private let entries = NIOLockedValueBox<[ObjectIdentifier: Entry]>([:])

    /// How many of `total` builds of `service` were not reported before; they are reported now.
    package func unseen(_ service: BundleService, total: Int) -> Int {
        entries.withLockedValue { entries in
            let id = ObjectIdentifier(service)
            let seen = entries[id]?.seen ?? 0
            entries[id] = Entry(service: service, seen: max(seen, total))
            return max(0, total - seen)
        }
    }
}
