import KioskEditions
import Foundation
import Hummingbird
import HummingbirdBcrypt
import HummingbirdTesting
import KioskModels
import KioskSQLite
import KioskTestSupport
import Logging
import Testing
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles
@testable import KioskWiring
@testable import KioskPasswords

/// A kiosk on a real SQLite file in a temporary directory, with the repository's sample configuration.
struct TestKiosk {
    let directory: URL
    var configuration: KioskConfiguration
    let store: SQLiteKioskStore
    let factory: RuntimeFactory
    let editions: EditionsServices
    let runtime: RuntimeBox
    /// The test's clock (Unix seconds); starts at 2025-06-01 12:00 UTC.
    let clock: TestClock

    static let apiUser = "kiosk"
    static let apiPassword = "secret"
    /// The secret links and keys are signed with (also given to the binary as `KIOSK_SECRET`).
    static let secret = "test-secret-test-secret-test-secret-0123"

    /// A kiosk of its own, or with `directory`, one more instance on the database and editions there.
    init(directory: URL? = nil, storeObserver: any StoreObserver = UnobservedStore(),
         _ adjust: (inout KioskConfiguration) -> Void = { _ in }) async throws {
        self.directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        var configuration = try KioskConfiguration.load(from: TestKiosk.repositoryRoot + "/Config/kiosk.yaml")
        configuration.apiClients = configuration.apiClients.map(DevelopmentAccounts.cheap)
        configuration.publishers = configuration.publishers.map(DevelopmentAccounts.cheap)
        configuration.server.database = self.directory.path + "/kiosk.sqlite"
        configuration.server.editions = self.directory.path + "/Editions"
        configuration.server.samples = nil
        configuration.limits.searchesPerMinute = 0   // tests search freely; the budget's own tests set one
        configuration.limits.purchaseChecksPerMinute = 0   // likewise for purchases
        adjust(&configuration)
        self.configuration = configuration
        // SQLite's migrations and the editions directory fsync: on a thread of their own, not one of the
        // two every test's tasks share.
        let (store, editions) = try await onOwnThread { [configuration] in
            let store = try SQLiteKioskStore(path: configuration.server.database, observer: storeObserver)
            return (store, try EditionsServices(configuration: configuration, store: store, logger: Logger(label: "test")))
        }
        self.store = store
        try await store.syncCatalogue(configuration.catalogue, dryRun: false)
        let secrets = try Secrets.load(configuration: configuration, database: .sqlite(path: configuration.server.database),
                                       environment: ["KIOSK_SECRET": TestKiosk.secret],
                                       logger: nil)
        let clock = TestClock(1_748_779_200)
        self.clock = clock
        self.editions = editions
        var factory = RuntimeFactory(store: store, editions: editions, secrets: secrets, logger: Logger(label: "test"))
        factory.clock = clock
        factory.pdfSandbox = TestSandbox.sandbox   // PDF publishes as the server makes them, where the sandbox can be had
        self.factory = factory
        runtime = RuntimeBox(try factory.makeRuntime(configuration))
    }

    /// A second instance of `other`: the same configuration, database, editions and secret.
    init(sharingDatabaseOf other: TestKiosk) async throws {
        let configuration = other.configuration
        try await self.init(directory: other.directory) { $0 = configuration }
    }

    /// Runs `body` with the server listening on a free loopback port.
    func withServer<Value: Sendable>(_ body: @Sendable (_ port: Int) async throws -> Value) async throws -> Value {
        let app = try buildApplication(runtime: runtime, host: "127.0.0.1", port: 0, logger: Logger(label: "test"))
        return try await app.test(.live) { client in try await body(client.port!) }
    }

    /// Adds a user (cheap bcrypt cost) and returns its id.
    @discardableResult
    func addUser(_ username: String, password: String, name: String = "", email: String = "",
                 subscriptions: [(Int, String)] = []) async throws -> Int {
        let hash = try await PasswordHashing().hash(password, cost: 4)
        let id = try await store.addUser(username: username, name: name, email: email, passwordHash: hash, at: clock.now)
        for (edition, until) in subscriptions {
            try await store.subscribe(username: username, editionID: edition, until: IssueDate(until)!)
        }
        return id
    }

    /// Publishes an issue of `pages` generated (small, well-formed) pages through the real publisher.
    func addIssue(edition: Int, date: String, pages: Int = 3) async throws {
        let folder = try await IssueFolders.writeIssue(directory.path + "/in-\(edition)-\(date)", pages: pages)
        _ = try await editions.publisher().publish(editionID: edition, date: IssueDate(date)!, from: folder)
    }

    static var repositoryRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
    }
}

/// Runs a foreign client script (Python, Ruby, Perl…) and returns its standard output; fails the test on a non-zero exit.
@discardableResult
func runClient(_ program: String, _ arguments: [String], stdin: String? = nil,
               sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
    let (status, text, errorText) = try await ChildProcess.run("/usr/bin/env", [program] + arguments, stdin: stdin)
    #expect(status == 0, "\(program) exited \(status): \(errorText)\n\(text)", sourceLocation: sourceLocation)
    return text
}

/// A Python script run with `xmlrpc.client` against `http://kiosk:secret@127.0.0.1:PORT/RPC2` as `p`,
/// printing JSON of whatever it assigns to `result`.
func python(_ port: Int, _ body: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> ClientJSON {
    let script = """
        import json, sys, xmlrpc.client
        p = xmlrpc.client.ServerProxy("http://\(TestKiosk.apiUser):\(TestKiosk.apiPassword)@127.0.0.1:\(port)/RPC2", allow_none=True)
        def fault(fn):
            try:
                fn()
            except xmlrpc.client.Fault as f:
                return {"faultCode": f.faultCode, "faultString": f.faultString}
            return None
        result = None
        \(body.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n"))
        print(json.dumps(result))
        """
    let output = try await runClient("python3", ["-c", script], sourceLocation: sourceLocation)
    return ClientJSON(value: try JSONSerialization.jsonObject(with: Data(output.utf8), options: [.fragmentsAllowed]))
}

/// A foreign client's JSON report (immutable once parsed).
struct ClientJSON: @unchecked Sendable {
    let value: Any
}

/// A copy of the repository's configuration in `directory`, with the database and editions there
/// and no samples; returns its path.
func writeTestConfiguration(in directory: URL, edit: (String) -> String = { $0 }) throws -> String {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    var text = try String(contentsOfFile: TestKiosk.repositoryRoot + "/Config/kiosk.yaml", encoding: .utf8)
    for (repository, cheap) in DevelopmentAccounts.cheapHashes {
        text = text.replacingOccurrences(of: repository, with: cheap)
    }
    text = text.replacingOccurrences(of: "database: data/kiosk.sqlite", with: "database: \(directory.path)/kiosk.sqlite")
    text = text.replacingOccurrences(of: "editions: Editions", with: "editions: \(directory.path)/Editions")
    text = text.replacingOccurrences(of: "samples: Samples", with: "# samples: none")
    let path = directory.appendingPathComponent("kiosk.yaml").path
    try edit(text).write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

func temporaryDirectory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-test-\(UUID().uuidString)")
}

/// The repository configuration's accounts, as the tests use them: the same development passwords, hashed
/// at bcrypt's lowest cost. Every test kiosk's first authenticated call verifies one of these hashes, on
/// the process's one password-hashing executor (one thread on two cores): at the repository's cost, the
/// suites starting together queued behind each other for seconds. Tests about the cost itself (floods of
/// wrong passwords) put it back with `atRepositoryCost`.
enum DevelopmentAccounts {
    /// The development password of each account in `Config/kiosk.yaml`, as its comments say.
    static let passwords = ["kiosk": TestKiosk.apiPassword, "publisher": "publisher-secret"]

    private static let repository: KioskConfiguration = {
        do { return try KioskConfiguration.load(from: TestKiosk.repositoryRoot + "/Config/kiosk.yaml") }
        catch { preconditionFailure("Config/kiosk.yaml: \(error)") }
    }()

    /// The repository's hash of each account's password, paired with a cost-4 hash of the same password.
    static let cheapHashes: [(repository: String, cheap: String)] = (repository.apiClients + repository.publishers).map { account in
        guard let password = passwords[account.username],
              PasswordHashing.check(password, against: StoredPasswordHash(account.passwordHash)) else {
            preconditionFailure("Config/kiosk.yaml's account \(account.username) no longer has the password DevelopmentAccounts.passwords gives it")
        }
        return (account.passwordHash, Bcrypt.hash(password, cost: 4))
    }

    /// `credential` with its password hashed at the lowest cost.
    static func cheap(_ credential: KioskConfiguration.Credential) -> KioskConfiguration.Credential {
        let hash = cheapHashes.first { $0.repository == credential.passwordHash }?.cheap ?? credential.passwordHash
        return KioskConfiguration.Credential(username: credential.username, passwordHash: hash)
    }

    /// Puts the repository's own hashes (their real cost) back, for tests about what bcrypt costs.
    static func atRepositoryCost(_ configuration: inout KioskConfiguration) {
        configuration.apiClients = repository.apiClients
        configuration.publishers = repository.publishers
    }
}
