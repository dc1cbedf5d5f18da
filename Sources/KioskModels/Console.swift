/// What the operator console needs from storage beyond the wire methods: the catalogue as stored,
/// the accounts, finding and looking after readers.
public protocol ConsoleStore: Sendable {
    /// The catalogue the database holds (what the wire methods answer from), in id and key order; its
    /// accounts by kind and username.
    func catalogue() async throws -> Catalogue
    /// The stored API clients, publishers and operators, by kind and username: what authentication reads.
    func accounts() async throws -> [Account]
    /// The edition's issues, visible and withdrawn, newest first, at most `limit`: one read for the
    /// console's issues page.
    func editionIssues(editionID: Int, limit: Int) async throws -> [StoredIssue]
    /// Users whose username, name or e-mail contains `text` (any case), by username; at most `limit`.
    func findUsers(matching text: String, limit: Int) async throws -> [User]
    /// Sets a user's password hash; false when there is no such user.
    func setPasswordHash(username: String, to hash: String) async throws -> Bool
    /// Forgets the failed sign-ins of `username` (a lock-out ends); returns how many there were.
    func clearSignInFailures(username: String) async throws -> Int
    /// Appends a change to the audit log.
    func recordAudit(_ entry: AuditEntry) async throws
    /// The newest audit log entries first; at most `limit`.
    func auditEntries(limit: Int) async throws -> [AuditEntry]
    /// Failed sign-ins on record and bundles built in the UTC days of `period`.
    func activity(in period: DayPeriod) async throws -> ConsoleActivity
}

/// What the dashboard shows for a period beside the statistics. Failed sign-ins an operator cleared
/// (a lock-out ended) are no longer on record.
public struct ConsoleActivity: Sendable, Hashable {
    public var signInFailures: Int
    /// At publish and on first demand.
    public var bundleBuilds: Int
    public var bundleBytes: Int64
    public init(signInFailures: Int, bundleBuilds: Int, bundleBytes: Int64) {
        self.signInFailures = signInFailures; self.bundleBuilds = bundleBuilds; self.bundleBytes = bundleBytes
    }
}

/// An issue as the console lists it: its revision, page count and bundle, and whether it is withdrawn.
public struct StoredIssue: Sendable, Hashable {
    public var date: IssueDate
    public var revision: Int
    public var pageCount: Int
    public var bundle: BundleInfo?
    /// When it was withdrawn (Unix seconds); nil while readers see it.
    public var withdrawnAt: Int64?
    public init(date: IssueDate, revision: Int, pageCount: Int, bundle: BundleInfo?, withdrawnAt: Int64?) {
        self.date = date; self.revision = revision; self.pageCount = pageCount; self.bundle = bundle; self.withdrawnAt = withdrawnAt
    }
}

/// One change made in the console: who, what, to what, before and after, when.
public struct AuditEntry: Sendable, Hashable {
    /// Unix seconds.
    public var time: Int64
    /// The operator.
    public var actor: String
    /// What was done, e.g. `app.demo_quota`, `issue.withdraw`, `reader.add`.
    public var action: String
    /// What it was done to, e.g. `quiosc`, `1/2025-06-30`, `anna`.
    public var subject: String
    public var before: String
    public var after: String
    public init(time: Int64, actor: String, action: String, subject: String, before: String = "", after: String = "") {
        self.time = time; self.actor = actor; self.action = action; self.subject = subject
        self.before = before; self.after = after
    }
}

/// What an operator of the console may do.
public enum OperatorRole: String, Sendable, Hashable, Codable, CaseIterable {
    /// Publishes and withdraws issues, and sees the dashboard and the store purchases.
    case editor
    /// Everything an editor may, and configures: apps, tariff lines, demo quotas, products, readers; acts on purchases.
    case `operator`

    public var mayConfigure: Bool { self == .operator }
}
