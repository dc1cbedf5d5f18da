/// A whole database as the server and the CLI use it: the methods' store (push registrations and the
/// fan-out's claims included, `PushRegistry`), publishing's registry and the operator's administration, the
/// event outbox and the webhooks' queue. One implementation per engine (`SQLiteKioskStore`,
/// `PostgresKioskStore`); both pass the store conformance suite (`Tests/KioskTestSupport`).
public protocol KioskDatabase: KioskStore, IssueRegistry, ConsoleStore, EventLog, WebhookStore {
    /// The name of a publication (the bundle's `titol`), nil when unknown.
    func publicationName(id: Int) async throws -> String?

    /// Adds a user; returns the new id. Throws `UserAdministrationError.usernameTaken` for a name
    /// taken in any case.
    func addUser(username: String, name: String, email: String, passwordHash: String, at time: Int64) async throws -> Int
    /// Sets (adds or moves) a user's subscription end for an edition.
    func subscribe(username: String, editionID: Int, until: IssueDate) async throws
    /// Adds or updates every user of `users` and sets their subscriptions, all in one transaction.
    func importUsers(_ users: [UserImport], at time: Int64) async throws -> UserImportSummary
    /// Adds or updates every identity of `identities`, all in one transaction: each keeps its old key
    /// (marked imported) and its device's demo count becomes at least the one given. A device with
    /// several old identities on one app keeps the largest count, since Kiosk counts demos per device.
    /// `progress` hears (rows written, rows) about twenty times; nothing is committed before the last.
    func importIdentities(_ identities: [IdentityImport], at time: Int64,
                          progress: @escaping @Sendable (Int, Int) -> Void) async throws -> IdentityImportSummary

    /// Downloads, demo use and active devices over a range of days, read in one snapshot. With
    /// `editionID`, demo use counts only grants spent on that edition, and a conversion needs a
    /// subscription to it.
    func statistics(_ query: StatisticsQuery) async throws -> KioskStatistics

    /// Closes the connections once nothing uses the database any more (activity not yet written is dropped).
    func close() async
}

extension KioskDatabase {
    /// `importIdentities` without progress reports.
    public func importIdentities(_ identities: [IdentityImport], at time: Int64) async throws -> IdentityImportSummary {
        try await importIdentities(identities, at: time, progress: { _, _ in })
    }
}
