import KioskModels
import NIOConcurrencyHelpers
import KioskPasswords

/// The accounts authentication checks (API clients, publishers, operators), as the store holds them.
///
/// Every request asks the store's catalogue version (one cheap read, shared by concurrent requests
/// through `CoalescedRead`; any account change bumps it in its own transaction, whoever makes it); when
/// it moved, the accounts are read again. The Basic-auth
/// checkers (`BasicAuthenticator`, with their caches of verified credentials) are kept while a realm's
/// accounts are unchanged, and replaced when they change, so a removed account or a changed password is
/// refused at the next request on every instance, and a publish (which also bumps the version) costs
/// the clients no new bcrypt check.
package final class StoredAccounts: Sendable {
    /// The accounts of one catalogue version.
    package struct Snapshot: Sendable {
        package let accounts: [Account]
        package let apiClients: BasicAuthenticator
        package let publishers: BasicAuthenticator
        /// Who may read the event stream: publishers and operators (a publisher's name first when both kinds have it).
        package let eventReaders: BasicAuthenticator
        /// Operators of the console by username.
        package let operators: [String: Account]

        init(_ accounts: [Account], keeping previous: Snapshot?, verifier: PasswordHashing) {
            func realm(_ kinds: [AccountKind], _ old: BasicAuthenticator?) -> BasicAuthenticator {
                let members = kinds.flatMap { kind in accounts.filter { $0.kind == kind } }
                let hashes = Dictionary(members.map { ($0.username, $0.passwordHash) }, uniquingKeysWith: { first, _ in first })
                if let old, old.hashes == hashes { return old }
                return BasicAuthenticator(hashes: hashes, verifier: verifier)
            }
            self.accounts = accounts
            apiClients = realm([.apiClient], previous?.apiClients)
            publishers = realm([.publisher], previous?.publishers)
            eventReaders = realm([.publisher, .operator], previous?.eventReaders)
            operators = Dictionary(accounts.filter { $0.kind == .operator }.map { ($0.username, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    private let store: any KioskDatabase
    private let verifier: PasswordHashing
    private let version: CoalescedRead<Int64>
    private let state = NIOLockedValueBox<(version: Int64, snapshot: Snapshot)?>(nil)

    package init(store: any KioskDatabase, verifier: PasswordHashing = PasswordHashing()) {
        self.store = store
        self.verifier = verifier
        version = CoalescedRead { try await store.catalogueVersion() }
    }

    /// The accounts last read, if they are those of catalogue version `version` (no read).
    package func snapshot(ofVersion version: Int64) -> Snapshot? {
        state.withLockedValue { $0?.version == version ? $0?.snapshot : nil }
    }

    /// The accounts as of the request's catalogue snapshot (`CatalogueSnapshot`), or outside a request of the
    /// store's current catalogue version (read after this call began, shared by concurrent callers). While the
    /// store cannot be read, the accounts last read (whatever the request then does needs the store too,
    /// and fails as it would have: an XML-RPC call with `-32603`); with none read yet, the store's error.
    package func current() async throws -> Snapshot {
        let version: Int64, accounts: [Account]
        do {
            // In a request, the request's catalogue snapshot: the kept answers and the memo use the same one.
            if let snapshot = CatalogueSnapshot.current {
                version = try await snapshot.catalogueVersion()
            } else {
                version = try await self.version.value()
            }
            if let known = state.withLockedValue({ $0 }), known.version == version { return known.snapshot }
            accounts = try await store.accounts()
        } catch {
            guard let known = state.withLockedValue({ $0 }) else { throw error }
            return known.snapshot
        }
        return state.withLockedValue { state in
            if let known = state, known.version > version { return known.snapshot }   // a newer read got here first
            let snapshot = Snapshot(accounts, keeping: state?.snapshot, verifier: verifier)
            state = (version, snapshot)
            return snapshot
        }
    }
}
