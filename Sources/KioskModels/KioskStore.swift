/// Everything the kiosk's methods need from storage, in their terms.
///
/// One implementation per database (SQLite today); handlers depend only on this protocol.
/// Every method that changes something is atomic: it happens completely or not at all.
public protocol KioskStore: PurchaseStore, PushRegistry {
    // MARK: Catalogue
    func app(key: String) async throws -> App?
    /// The app's lines whose edition has at least one published issue, by `order`, with the newest issue.
    func editionListings(appKey: String) async throws -> [EditionListing]
    func offeredEdition(appKey: String, editionID: Int) async throws -> OfferedEdition?
    /// Up to `limit` published issues from `date` (nil: the newest) in `direction`.
    func issues(editionID: Int, from date: IssueDate?, direction: ListingDirection, limit: Int) async throws -> [IssueSummary]
    /// A published issue's pages and bundle; nil when not published.
    func issueContents(editionID: Int, date: IssueDate) async throws -> IssueContents?
    /// The app's web kiosk as stored (`hashQuiosc`); nil when it has none (Kiosk's own serves it) or
    /// there is no such app.
    func webKiosk(appKey: String) async throws -> AppWebKiosk?
    /// A number that changes, in the same transaction, with anything the catalogue reads above return
    /// (publications, editions, apps, lines, web kiosks, issues, pages), whoever changes it: this process, the CLI or
    /// another instance. Read it before the data it guards; an answer kept under one version is valid while
    /// the store still gives that version.
    func catalogueVersion() async throws -> Int64
    /// The catalogue version if it is known at once, without waiting for a lock or a server: SQLite from
    /// the shared count of changes, PostgreSQL from the notifications of its listening connection. nil
    /// while it is not (a SQLite read that would wait; PostgreSQL's listener down): the caller reads
    /// `catalogueVersion()`. Answers kept under it may then be given without suspending (`KeptAnswerHandler`).
    func catalogueVersionAtOnce() -> Int64?
    /// Published pages whose text matches `search`, newest issue first (then by edition id and page
    /// number), at most `search.limit`. Withdrawn issues have no text; a republished one only its new text.
    func searchPages(_ search: PageSearch) async throws -> [PageSearchHit]
    /// Makes the store's catalogue match the configuration; returns what changed, as lines a person reads.
    @discardableResult
    func syncCatalogue(_ catalogue: Catalogue, dryRun: Bool) async throws -> [String]

    // MARK: Web sessions ended before they expire

    /// Ends one signed-in session (a sign-out) on every instance: `sessionHasEnded` says so until `keptUntil`
    /// (its expiry), after which the row may go. Rows past their `keptUntil` are removed on the way.
    func endSession(subject: String, session: String, keptUntil: Int64, at time: Int64) async throws
    /// Ends every session of `subject` (`WebSessionSubject`) that began at or before `time`, until `keptUntil`
    /// (the latest expiry of one of them).
    func endAllSessions(subject: String, keptUntil: Int64, at time: Int64) async throws
    /// Whether the session `session` of `subject`, begun at `began`, was ended by either call above.
    func sessionHasEnded(subject: String, session: String, began: Int64) async throws -> Bool

    // MARK: Readers
    func user(username: String) async throws -> User?
    func user(id: Int) async throws -> User?
    /// Replaces a user's password hash if it is still `old` (a concurrent sign-in may have replaced it first).
    func replacePasswordHash(userID: Int, from old: String, to new: String) async throws
    func subscriptions(userID: Int) async throws -> [Subscription]
    func identity(key: String) async throws -> DeviceIdentity?
    /// Stores the identity (new, or its device facts and last-seen time refreshed). With `retiringImported`,
    /// in the same transaction, the imported (2012) identities of the same app and device are deleted.
    func saveIdentity(_ identity: DeviceIdentity, at time: Int64, retiringImported: Bool) async throws
    /// Notes that an app saw `identityKey` (whatever the device sent) on the day of `time`. Returns at once:
    /// the store writes each key, app and day at most once, in the background and batched; it never fails
    /// or delays the caller (a failed write is retried at the key's next call). At most
    /// `ActivityLog.perAppDayLimit` keys per app and day are recorded; the answer says which way it went.
    @discardableResult
    func recordActivity(appKey: String, identityKey: String, at time: Int64) -> SightingOutcome
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
    /// Atomically, across connections, processes and instances: when fewer than `maxFailures` failures
    /// since `since` are recorded for the username (in any case) and for the device, records this attempt
    /// as a failure and returns its id; nil (locked out) otherwise. A sign-in that then succeeds removes
    /// its record with `forgetSignInAttempt`, so concurrent wrong passwords never get more tries than allowed.
    func beginSignInAttempt(username: String, deviceKey: String?, since: Int64, maxFailures: Int,
                            at time: Int64) async throws -> Int64?
    /// Removes the record of a sign-in attempt that succeeded.
    func forgetSignInAttempt(_ attempt: Int64) async throws

    // MARK: Readiness
    /// Runs a cheap query that reads the schema; throws when the database does not answer (`GET /readyz`).
    func ping() async throws
}

extension KioskStore {
    /// Every session of `subject` ends as one session named `SessionEnd.everySession` does.
    public func endAllSessions(subject: String, keptUntil: Int64, at time: Int64) async throws {
        try await endSession(subject: subject, session: SessionEnd.everySession, keptUntil: keptUntil, at: time)
    }
}

/// Checks passwords against stored hashes and makes new ones. Implementations keep the slow work off event loops.
public protocol PasswordHasher: Sendable {
    /// Whether `password` matches `hash`, in any `StoredPasswordHash` scheme. No hash (an unknown user),
    /// an unreadable one and a legacy one cost about what a bcrypt check does, so the time taken does not
    /// tell whether an account exists or is legacy. A password longer than `PasswordLimits.maxBytes`
    /// matches nothing and costs the same. Throws `KioskError.tooManySignInAttempts` without checking when
    /// `username`, or the client the check is for, already has its most checks waiting.
    func verify(_ password: String, against hash: String?, username: String) async throws -> Bool
    /// A new bcrypt hash of `password`; `KioskError.invalidArgument` when it is longer than `PasswordLimits.maxBytes`.
    func hash(_ password: String) async throws -> String
}

