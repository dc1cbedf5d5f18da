/// Everything the kiosk's methods need from storage, in their terms.
///
/// One implementation per database (SQLite today); handlers depend only on this protocol.
/// Every method that changes something is atomic: it happens completely or not at all.
public protocol KioskStore: Sendable {
    // MARK: Catalogue
    func app(key: String) async throws -> App?
    /// The app's lines whose edition has at least one published issue, by `order`, with the newest issue.
    func editionListings(appKey: String) async throws -> [EditionListing]
    func offeredEdition(appKey: String, editionID: Int) async throws -> OfferedEdition?
    /// Up to `limit` published issues from `date` (nil: the newest) in `direction`.
    func issues(editionID: Int, from date: IssueDate?, direction: ListingDirection, limit: Int) async throws -> [IssueSummary]
    /// A published issue's pages and bundle; nil when not published.
    func issueContents(editionID: Int, date: IssueDate) async throws -> IssueContents?
    /// Makes the store's catalogue match the configuration; returns what changed, as lines a person reads.
    @discardableResult
    func syncCatalogue(_ catalogue: Catalogue, dryRun: Bool) async throws -> [String]

    // MARK: Readers
    func user(username: String) async throws -> User?
    func user(id: Int) async throws -> User?
    func subscriptions(userID: Int) async throws -> [Subscription]
    func identity(key: String) async throws -> DeviceIdentity?
    /// Stores the identity (new, or its device facts and last-seen time refreshed).
    func saveIdentity(_ identity: DeviceIdentity, at time: Int64) async throws
    func recordDownload(_ download: DownloadRecord) async throws

    // MARK: Demos
    /// Demos consumed on (app, device).
    func demosConsumed(appKey: String, deviceKey: String) async throws -> Int
    /// Atomically: when fewer than `quota` demos were consumed on (app, device), count one more and
    /// leave one unused grant for the device.
    func consumeDemo(appKey: String, deviceKey: String, quota: Int, at time: Int64) async throws -> DemoOutcome
    /// Atomically: true when the device already used a grant on this issue, or has an unused grant,
    /// which is then bound to this issue for good.
    func useDemoGrant(appKey: String, deviceKey: String, editionID: Int, date: IssueDate, at time: Int64) async throws -> Bool

    // MARK: Sign-in throttling
    /// Failed sign-ins since `since`, for the username and for the device (nil: not counted).
    func signInFailures(username: String, deviceKey: String?, since: Int64) async throws -> (username: Int, device: Int)
    func recordSignInFailure(username: String, deviceKey: String?, at time: Int64) async throws
}

/// Checks a password against a stored slow hash. Implementations keep the work off event loops.
public protocol PasswordVerifier: Sendable {
    func verify(_ password: String, against hash: String) async -> Bool
}
