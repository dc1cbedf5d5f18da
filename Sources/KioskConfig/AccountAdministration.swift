import KioskModels

/// Changing the stored accounts (API clients, publishers, operators), as the console's accounts page and
/// `KioskServer account` both do it, when the database owns them (`catalogue_source: console`): each change
/// checked like the file's accounts, written through the catalogue sync (every instance authenticates with
/// it at its next request) and audited under `actor`, never with a password or hash.
package struct AccountAdministration: Sendable {
    package let configuration: KioskConfiguration
    package let database: any KioskDatabase
    package let passwords: any PasswordHasher
    package let clock: any KioskClock
    /// Who makes the changes, as the audit log names them: an operator's username, or `command line`.
    package let actor: String

    package init(configuration: KioskConfiguration, database: any KioskDatabase, passwords: any PasswordHasher,
                 clock: any KioskClock = SystemClock(), actor: String) {
        self.configuration = configuration; self.database = database; self.passwords = passwords
        self.clock = clock; self.actor = actor
    }

    /// One change to the accounts.
    package enum Change: Sendable {
        /// A new account; `role` for an operator (default editor), `scope` for a publisher (nil: every edition).
        case add(AccountKind, username: String, password: String, role: OperatorRole? = nil, scope: PublisherScope? = nil)
        case password(AccountKind, username: String, password: String)
        case role(operator: String, OperatorRole)
        /// A publisher's scope; nil: every edition.
        case scope(publisher: String, PublisherScope?)
        case remove(AccountKind, username: String)
    }

    /// Why a change was refused, in words for the operator; nothing changed.
    package enum Refused: Error, Hashable, CustomStringConvertible {
        /// The configuration file owns the accounts (`catalogue_source: file`).
        case ownedByTheFile
        /// The change would demote or remove the account making it (`protecting`).
        case notYourself
        case invalid(String)

        package var description: String {
            switch self {
            case .ownedByTheFile:
                "the configuration file owns the accounts (catalogue_source: file): change them there, then reload"
            case .notYourself: "an operator cannot remove or demote their own account"
            case .invalid(let problem): problem
            }
        }
    }

    /// Applies `change`; `protecting` names an operator the change may not remove or demote (the one
    /// making it). Returns the sync's report of what changed.
    @discardableResult
    package func apply(_ change: Change, protecting: String? = nil) async throws -> [String] {
        guard configuration.catalogueSource == .console else { throw Refused.ownedByTheFile }
        var catalogue = try await database.catalogue()
        let original = catalogue.accounts
        func index(_ kind: AccountKind, _ username: String) -> Int? {
            catalogue.accounts.firstIndex { $0.kind == kind && $0.username == username }
        }
        func missing(_ kind: AccountKind, _ username: String) -> Refused {
            .invalid("\(Account(kind: kind, username: username, passwordHash: "").label): no such account")
        }
        let kind: AccountKind, username: String, action: String
        var passwordChanged = false
        switch change {
        case .add(let addKind, let name, let password, let role, let scope):
            (kind, username, action) = (addKind, name, "add")
            guard Identifier.isUsername(name) else { throw Refused.invalid("username: \(Identifier.usernameRule)") }
            guard index(kind, name) == nil else { throw Refused.invalid("\(kind.rawValue):\(name): already exists") }
            if let problem = PasswordRule.problem(with: password) { throw Refused.invalid(problem) }
            catalogue.accounts.append(Account(kind: kind, username: name, passwordHash: try await passwords.hash(password),
                                              role: role, scope: scope))
        case .password(let passwordKind, let name, let password):
            (kind, username, action) = (passwordKind, name, "password")
            guard let found = index(kind, name) else { throw missing(kind, name) }
            if let problem = PasswordRule.problem(with: password) { throw Refused.invalid(problem) }
            catalogue.accounts[found].passwordHash = try await passwords.hash(password)
            passwordChanged = true
        case .role(let name, let role):
            (kind, username, action) = (.operator, name, "role")
            guard let found = index(.operator, name) else { throw missing(.operator, name) }
            if name == protecting { throw Refused.notYourself }
            catalogue.accounts[found].role = role
        case .scope(let name, let scope):
            (kind, username, action) = (.publisher, name, "scope")
            guard let found = index(.publisher, name) else { throw missing(.publisher, name) }
            catalogue.accounts[found].scope = scope
        case .remove(let removeKind, let name):
            (kind, username, action) = (removeKind, name, "remove")
            guard let found = index(kind, name) else { throw missing(kind, name) }
            if kind == .operator, name == protecting { throw Refused.notYourself }
            catalogue.accounts.remove(at: found)
        }
        let before = original.first { $0.kind == kind && $0.username == username }
        do {
            try catalogue.validate()
        } catch {
            throw Refused.invalid(error.description)
        }
        let report = try await database.syncCatalogue(catalogue, dryRun: false)
        let subject = Account(kind: kind, username: username, passwordHash: "").label
        let after = catalogue.accounts.first { $0.kind == kind && $0.username == username }
        try await database.recordAudit(AuditEntry(
            time: clock.now, actor: actor, action: "account." + action, subject: subject,
            before: passwordChanged ? "" : before.map(Self.describe) ?? "",
            after: passwordChanged ? "new password" : after.map(Self.describe) ?? ""))
        return report
    }

    /// A new password of 24 characters from a 64-letter alphabet (144 bits), from the system's generator:
    /// what the console and the CLI give when asked to generate one.
    package static func generatedPassword() -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<18).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// What the audit log shows of an account: its kind, name and role or scope, never its hash.
    package static func describe(_ account: Account) -> String {
        account.label + (account.role.map { " (\($0.rawValue))" } ?? "")
            + (account.kind == .publisher ? " (" + (account.scope?.description ?? "every edition") + ")" : "")
    }
}
