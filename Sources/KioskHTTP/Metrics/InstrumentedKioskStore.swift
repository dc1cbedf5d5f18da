import KioskModels
import KioskConfig
import KioskFiles

/// A `KioskStore` that times every call of the store it wraps (`kiosk_database_duration_seconds`,
/// `kiosk_database_errors_total`, by operation) and counts what the calls decide: demo grants
/// (granted or refused) and recorded issue downloads. The store itself is not touched.
package struct InstrumentedKioskStore: KioskStore {
    package let base: any KioskStore
    package let metrics: KioskMetrics

    package init(_ base: any KioskStore, metrics: KioskMetrics) {
        self.base = base
        self.metrics = metrics
    }

    private func timed<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        let start = ContinuousClock.now
        do {
            let value = try await body()
            metrics.observeDatabase(operation: operation, duration: start.duration(to: .now), failed: false)
            return value
        } catch {
            metrics.observeDatabase(operation: operation, duration: start.duration(to: .now), failed: true)
            throw error
        }
    }

    // MARK: Catalogue

    package func catalogueVersion() async throws -> Int64 {
        try await timed("catalogue_version") { try await base.catalogueVersion() }
    }

    package func catalogueVersionAtOnce() -> Int64? { base.catalogueVersionAtOnce() }

    package func app(key: String) async throws -> App? {
        try await timed("app") { try await base.app(key: key) }
    }

    package func webKiosk(appKey: String) async throws -> AppWebKiosk? {
        try await timed("web_kiosk") { try await base.webKiosk(appKey: appKey) }
    }

    package func editionListings(appKey: String) async throws -> [EditionListing] {
        try await timed("edition_listings") { try await base.editionListings(appKey: appKey) }
    }

    package func offeredEdition(appKey: String, editionID: Int) async throws -> OfferedEdition? {
        try await timed("offered_edition") { try await base.offeredEdition(appKey: appKey, editionID: editionID) }
    }

    package func issues(editionID: Int, from date: IssueDate?, direction: ListingDirection, limit: Int) async throws -> [IssueSummary] {
        try await timed("issues") { try await base.issues(editionID: editionID, from: date, direction: direction, limit: limit) }
    }

    package func issueContents(editionID: Int, date: IssueDate) async throws -> IssueContents? {
        try await timed("issue_contents") { try await base.issueContents(editionID: editionID, date: date) }
    }

    package func searchPages(_ search: PageSearch) async throws -> [PageSearchHit] {
        try await timed("search_pages") { try await base.searchPages(search) }
    }

    @discardableResult
    package func syncCatalogue(_ catalogue: Catalogue, dryRun: Bool) async throws -> [String] {
        try await timed("sync_catalogue") { try await base.syncCatalogue(catalogue, dryRun: dryRun) }
    }

    // MARK: Readers

    package func user(username: String) async throws -> User? {
        try await timed("user_by_username") { try await base.user(username: username) }
    }

    package func user(id: Int) async throws -> User? {
        try await timed("user_by_id") { try await base.user(id: id) }
    }

    package func subscriptions(userID: Int) async throws -> [Subscription] {
        try await timed("subscriptions") { try await base.subscriptions(userID: userID) }
    }

    package func identity(key: String) async throws -> DeviceIdentity? {
        try await timed("identity") { try await base.identity(key: key) }
    }

    package func endSession(subject: String, session: String, keptUntil: Int64, at time: Int64) async throws {
        try await timed("end_session") { try await base.endSession(subject: subject, session: session, keptUntil: keptUntil, at: time) }
    }

    package func endAllSessions(subject: String, keptUntil: Int64, at time: Int64) async throws {
        try await timed("end_all_sessions") { try await base.endAllSessions(subject: subject, keptUntil: keptUntil, at: time) }
    }

    package func sessionHasEnded(subject: String, session: String, began: Int64) async throws -> Bool {
        try await timed("session_has_ended") { try await base.sessionHasEnded(subject: subject, session: session, began: began) }
    }

    package func replacePasswordHash(userID: Int, from old: String, to new: String) async throws {
        try await timed("replace_password_hash") { try await base.replacePasswordHash(userID: userID, from: old, to: new) }
    }

    package func saveIdentity(_ identity: DeviceIdentity, at time: Int64, retiringImported: Bool) async throws {
        try await timed("save_identity") { try await base.saveIdentity(identity, at: time, retiringImported: retiringImported) }
    }

    @discardableResult
    package func recordActivity(appKey: String, identityKey: String, at time: Int64) -> SightingOutcome {
        let outcome = base.recordActivity(appKey: appKey, identityKey: identityKey, at: time)
        if outcome == .overLimit { metrics.sightingUnrecorded(appKey: appKey) }
        return outcome
    }

    package func recordDownload(_ download: DownloadRecord) async throws {
        try await timed("record_download") { try await base.recordDownload(download) }
        metrics.issueDownloaded(appKey: download.appKey)
    }

    // MARK: Demos

    package func demosConsumed(appKey: String, deviceKey: String) async throws -> Int {
        try await timed("demos_consumed") { try await base.demosConsumed(appKey: appKey, deviceKey: deviceKey) }
    }

    package func consumeDemo(appKey: String, deviceKey: String, quota: Int, at time: Int64) async throws -> DemoOutcome {
        let outcome = try await timed("consume_demo") {
            try await base.consumeDemo(appKey: appKey, deviceKey: deviceKey, quota: quota, at: time)
        }
        metrics.demoConsumed(appKey: appKey, granted: outcome.granted)
        return outcome
    }

    package func useDemoGrant(appKey: String, deviceKey: String, editionID: Int, date: IssueDate, at time: Int64) async throws -> Bool {
        try await timed("use_demo_grant") {
            try await base.useDemoGrant(appKey: appKey, deviceKey: deviceKey, editionID: editionID, date: date, at: time)
        }
    }

    // MARK: Sign-in throttling

    package func signInFailures(username: String, deviceKey: String?, since: Int64) async throws -> (username: Int, device: Int) {
        try await timed("sign_in_failures") { try await base.signInFailures(username: username, deviceKey: deviceKey, since: since) }
    }

    package func beginSignInAttempt(username: String, deviceKey: String?, since: Int64, maxFailures: Int,
                                    at time: Int64) async throws -> Int64? {
        try await timed("begin_sign_in_attempt") {
            try await base.beginSignInAttempt(username: username, deviceKey: deviceKey, since: since, maxFailures: maxFailures, at: time)
        }
    }

    package func forgetSignInAttempt(_ attempt: Int64) async throws {
        try await timed("forget_sign_in_attempt") { try await base.forgetSignInAttempt(attempt) }
    }

    // MARK: Readiness

    package func ping() async throws {
        try await timed("ping") {
            try await base.ping()
        }
    }
}
