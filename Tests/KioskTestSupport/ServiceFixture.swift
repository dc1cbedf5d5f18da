import KioskModels

/// A `KioskService` over a store with the sample catalogue, a clock tests move (from
/// `SampleCatalogue.startTime`) and `TestPasswordHasher`.
public struct ServiceFixture: Sendable {
    public let store: any KioskDatabase
    public let clock: TestClock
    public let passwords: TestPasswordHasher
    public let identityKeys: IdentityKeyIssuer
    public let service: KioskService

    public static let identitySecret = Array("fixture-identity-secret-0123456789abcdef".utf8)

    public init(store: any KioskDatabase, signInPolicy: SignInPolicy = SignInPolicy()) async throws {
        try await store.syncCatalogue(SampleCatalogue.catalogue, dryRun: false)
        let clock = TestClock(SampleCatalogue.startTime)
        self.store = store
        self.clock = clock
        passwords = TestPasswordHasher()
        identityKeys = IdentityKeyIssuer(secret: Self.identitySecret)
        service = KioskService(store: store, identityKeys: identityKeys, passwords: passwords,
                               signInPolicy: signInPolicy, clock: clock)
    }

    /// On a new SQLite file, with the sample issues (`publishSampleIssues`).
    public static func sqlite(signInPolicy: SignInPolicy = SignInPolicy()) async throws -> ServiceFixture {
        let fixture = try await ServiceFixture(store: try TestStores.sqlite(), signInPolicy: signInPolicy)
        try await fixture.publishSampleIssues()
        return fixture
    }

    /// Edition 1 (subscribers on `quiosc`) on 2025-05-28 to 05-31, edition 8 (free on `quiosc`,
    /// subscribers on `presencia`) on 05-25, three pages each; edition 2 has none.
    public func publishSampleIssues() async throws {
        for day in 28...31 { try await store.publishTestIssue(edition: 1, date: "2025-05-\(day)") }
        try await store.publishTestIssue(edition: 8, date: "2025-05-25")
    }

    /// Adds a user whose hash is `hash`, or the test hasher's hash of `password`; `subscriptions` are
    /// (edition, last day). Returns the id.
    @discardableResult
    public func addUser(_ username: String, password: String = "", hash: String? = nil, name: String = "",
                        email: String = "", subscriptions: [(Int, String)] = []) async throws -> Int {
        let stored: String
        if let hash { stored = hash } else { stored = try await passwords.hash(password) }
        let id = try await store.addUser(username: username, name: name, email: email, passwordHash: stored, at: clock.now)
        for (edition, until) in subscriptions {
            try await store.subscribe(username: username, editionID: edition, until: IssueDate(until)!)
        }
        return id
    }
}
