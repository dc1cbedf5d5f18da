import KioskIntegers
/// What may be a reader's password: at least `minimumCharacters` characters and at most
/// `PasswordLimits.maxBytes` bytes of UTF-8, wherever it is set (the console, the CLI).
public enum PasswordRule {
    public static let minimumCharacters = 8

    /// Why `password` cannot be set, in words an operator can act on, or nil when it can.
    public static func problem(with password: String) -> String? {
        guard password.count >= minimumCharacters, PasswordLimits.settingProblem(password) == nil else {
            return "password: must have at least \(minimumCharacters) characters, at most \(PasswordLimits.maxSettableBytes) bytes "
                + "and no NUL character"
        }
        return nil
    }
}

/// Why a change to a reader was refused: a rule of the input, or the database's answer.
public enum ReaderChangeRefused: Error, Hashable, CustomStringConvertible {
    case invalid(String)
    case refused(UserAdministrationError)

    public var description: String {
        switch self {
        case .invalid(let problem): problem
        case .refused(let error): error.description
        }
    }
}

/// Looking after readers, as the console and the CLI both do it: adding one, setting a password,
/// subscribing, ending a lock-out, ending every session. Each checks its input with the same rules
/// (`UsernameRule`, `PasswordRule`) and throws `ReaderChangeRefused` with a message for the operator;
/// recording who did it (the console's audit log) is the caller's.
public struct ReaderAdministration: Sendable {
    public let database: any KioskDatabase
    public let passwords: any PasswordHasher
    public let clock: any KioskClock

    public init(database: any KioskDatabase, passwords: any PasswordHasher, clock: any KioskClock = SystemClock()) {
        self.database = database; self.passwords = passwords; self.clock = clock
    }

    /// Adds a reader; returns the new id.
    public func add(username: String, name: String, email: String, password: String) async throws -> Int {
        if let problem = UsernameRule.problem(with: username) { throw ReaderChangeRefused.invalid(problem) }
        if let problem = PasswordRule.problem(with: password) { throw ReaderChangeRefused.invalid(problem) }
        let hash = try await passwords.hash(password)
        do {
            return try await database.addUser(username: username, name: name, email: email, passwordHash: hash, at: clock.now)
        } catch let error as UserAdministrationError {
            throw ReaderChangeRefused.refused(error)
        }
    }

    /// Sets a reader's password (the old one, of any scheme, stops working at once).
    public func setPassword(username: String, to password: String) async throws {
        if let problem = PasswordRule.problem(with: password) { throw ReaderChangeRefused.invalid(problem) }
        guard try await database.setPasswordHash(username: username, to: try await passwords.hash(password)) else {
            throw ReaderChangeRefused.refused(.unknownUser(username))
        }
    }

    /// Subscribes a reader to an edition until a date (moving an existing end).
    public func subscribe(username: String, editionID: Int, until: IssueDate) async throws {
        do {
            try await database.subscribe(username: username, editionID: editionID, until: until)
        } catch let error as UserAdministrationError {
            throw ReaderChangeRefused.refused(error)
        }
    }

    /// Ends a lock-out: forgets the reader's failed sign-ins; returns how many there were.
    public func unlock(username: String) async throws -> Int {
        try await database.clearSignInFailures(username: username)
    }

    /// Ends every session of the reader on every instance, for sessions that live `sessionLifetime` seconds.
    public func endSessions(username: String, sessionLifetime: Int) async throws {
        guard let user = try await database.user(username: username) else {
            throw ReaderChangeRefused.refused(.unknownUser(username))
        }
        let now = clock.now
        try await database.endAllSessions(subject: SessionEnd.readerSubject(user.id),
                                          keptUntil: now + Int64(widening: sessionLifetime), at: now)
    }
}
