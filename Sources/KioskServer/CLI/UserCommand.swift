import ArgumentParser
import Foundation
import KioskModels
import KioskSQLite
import KioskConfig
import KioskHTTP
import KioskPasswords

/// `KioskServer user …`: subscriber accounts and subscriptions.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Manage subscriber accounts.",
        subcommands: [Add.self, Password.self, Subscribe.self, Unlock.self, Import.self])

    /// The password on standard input (one line), for `--password-stdin`.
    static func passwordFromStandardInput(_ given: Bool) throws -> String {
        guard given else { throw ValidationError("pass --password-stdin and the password on standard input") }
        return try passwordLine()
    }

    /// One line of standard input, read a byte at a time up to `PasswordLimits.maxBytes` (never the whole
    /// of an endless input such as /dev/zero): the password, without its newline.
    static func passwordLine() throws -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(0, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
            bytes.append(byte)
            if bytes.count > PasswordLimits.maxBytes {
                throw ValidationError("the password on standard input is longer than \(PasswordLimits.maxBytes) bytes")
            }
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard !bytes.isEmpty else { throw ValidationError("no password on standard input") }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The readers' administration on the configuration's database, as the console does it.
    static func administration(_ options: StoreOptions) async throws -> ReaderAdministration {
        ReaderAdministration(database: try await StoreOptions.openStore(try options.loadConfiguration()), passwords: PasswordHashing())
    }

    /// Runs a change; a refusal prints its message and exits with failure.
    static func refusing<T>(_ change: () async throws -> T) async throws -> T {
        do {
            return try await change()
        } catch let refused as ReaderChangeRefused {
            printError("error: \(refused.description); nothing changed")
            throw ExitCode.failure
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a user; the password is read from standard input.")
        @OptionGroup var options: StoreOptions
        @Option var username: String
        @Option var name: String = ""
        @Option var email: String = ""
        @Flag(help: "Read the password from standard input (one line).")
        var passwordStdin = false

        func run() async throws {
            let password = try UserCommand.passwordFromStandardInput(passwordStdin)
            let administration = try await UserCommand.administration(options)
            let id = try await UserCommand.refusing {
                try await administration.add(username: username, name: name, email: email, password: password)
            }
            printOutput("added user \(username) (id \(id))")
        }
    }

    struct Password: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a user's password, read from standard input; the old one stops working at once.")
        @OptionGroup var options: StoreOptions
        @Option var username: String
        @Flag(help: "Read the password from standard input (one line).")
        var passwordStdin = false

        func run() async throws {
            let password = try UserCommand.passwordFromStandardInput(passwordStdin)
            let administration = try await UserCommand.administration(options)
            try await UserCommand.refusing { try await administration.setPassword(username: username, to: password) }
            printOutput("set the password of \(username)")
        }
    }

    struct Unlock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "End a user's sign-in lock-out: forget the failed sign-ins on record.")
        @OptionGroup var options: StoreOptions
        @Option var username: String

        func run() async throws {
            let cleared = try await UserCommand.administration(options).unlock(username: username)
            printOutput("forgot \(cleared) failed sign-in\(cleared == 1 ? "" : "s") of \(username)")
        }
    }

    struct Subscribe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Subscribe a user to an edition until a date (inclusive).")
        @OptionGroup var options: StoreOptions
        @Option var username: String
        @Option(help: "Edition id (EDICIO_ID).") var edition: Int
        @Option(help: "Last issue date covered, YYYY-MM-DD.") var until: String

        func run() async throws {
            guard let date = IssueDate(until) else { throw ValidationError("--until: expected a date YYYY-MM-DD, got \"\(until)\"") }
            let configuration = try options.loadConfiguration()
            let store = try await StoreOptions.openStore(configuration)
            _ = try await configuration.syncCatalogue(into: store)
            let administration = ReaderAdministration(database: store, passwords: PasswordHashing())
            try await UserCommand.refusing { try await administration.subscribe(username: username, editionID: edition, until: date) }
            printOutput("user \(username) subscribed to edition \(edition) until \(date)")
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add or update users from a CSV file, all or nothing.",
            discussion: """
                Header: username,name,email,password[,subscriptions]. `password` is a plain password (hashed \
                here with bcrypt) or a hash from the old Joomla database, kept as is: bcrypt ($2a$/$2b$/$2y$), \
                phpass ($P$/$H$), md5hex:salt, or a bare 32-hex-digit MD5. A legacy (non-bcrypt) hash is \
                replaced by bcrypt at the user's first successful sign-in. `subscriptions` is \
                `EDITION:YYYY-MM-DD` pairs separated by `;`.
                """)
        @OptionGroup var options: StoreOptions
        @Argument(help: "The CSV file.") var file: String

        func run() async throws {
            let configuration = try options.loadConfiguration()
            let csv = try CSVReader.rows(ofFile: file)
            let rows: [UserImportParser.Row]
            do {
                rows = try UserImportParser.parse(csv, knownEditions: Set(configuration.catalogue.editions.map(\.id)))
            } catch {
                throw ValidationError("\(file): \(error); nothing was imported")
            }
            let store = try await StoreOptions.openStore(configuration)
            _ = try await configuration.syncCatalogue(into: store)
            let users = try await UserImportParser.hashPasswords(rows) { done, total in
                printError("hashing passwords: \(done)/\(total)")
            }
            printError("writing \(users.count) users in one transaction…")
            let summary = try await store.importUsers(users, at: SystemClock().now)
            let legacy = users.filter { StoredPasswordHash($0.passwordHash)?.isLegacy == true }.count
            printOutput("\(file): \(summary.added) users added, \(summary.updated) updated, "
                        + "\(summary.subscriptions) subscriptions set, \(legacy) legacy password hashes kept until first sign-in")
        }
    }
}

/// Reads the user import CSV, checking every row before anything is written.
enum UserImportParser {
    struct Row {
        var line: Int
        var user: UserImport
        /// The plain password to hash, when the file did not carry a hash.
        var plainPassword: String?
    }

    static func checkUsername(_ username: String) throws {
        if let problem = UsernameRule.problem(with: username) { throw ValidationError(problem) }
    }

    static func parse(_ rows: [CSVReader.Row], knownEditions: Set<Int>) throws -> [Row] {
        let columns = try CSVReader.columns(rows.first)
        guard Array(columns.prefix(4)) == ["username", "name", "email", "password"],
              columns.count == 4 || (columns.count == 5 && columns[4] == "subscriptions")
        else {
            throw CSVReader.Problem(line: rows[0].line, message: "the header must be username,name,email,password[,subscriptions]")
        }
        var seen = Set<String>()
        return try rows.dropFirst().map { row in
            func fail(_ message: String) -> CSVReader.Problem { CSVReader.Problem(line: row.line, message: message) }
            guard row.fields.count == columns.count else {
                throw fail("expected \(columns.count) fields, found \(row.fields.count)")
            }
            let username = row.fields[0]
            do { try checkUsername(username) } catch { throw fail("\(error)") }
            guard seen.insert(username.lowercased()).inserted else { throw fail("username \"\(username)\" appears twice") }
            let password = row.fields[3]
            guard !password.isEmpty else { throw fail("empty password") }
            let isHash = StoredPasswordHash(password) != nil
            if !isHash && password.hasPrefix("$2") { throw fail("password looks like a bcrypt hash but is malformed") }
            if !isHash && (password.hasPrefix("$P$") || password.hasPrefix("$H$")) {
                throw fail("password looks like a phpass hash but is malformed or asks for more than 2^20 rounds")
            }
            var subscriptions: [(editionID: Int, until: IssueDate)] = []
            if columns.count == 5 {
                for pair in row.fields[4].split(separator: ";") where !pair.trimmingCharacters(in: .whitespaces).isEmpty {
                    let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: ":")
                    guard parts.count == 2, let edition = Int(parts[0]), let until = IssueDate(parts[1]) else {
                        throw fail("subscription \"\(pair)\" is not EDITION:YYYY-MM-DD")
                    }
                    guard knownEditions.contains(edition) else { throw fail("edition \(edition) is not in the configuration") }
                    subscriptions.append((edition, until))
                }
            }
            return Row(line: row.line,
                       user: UserImport(username: username, name: row.fields[1], email: row.fields[2],
                                        passwordHash: isHash ? password : "", subscriptions: subscriptions),
                       plainPassword: isHash ? nil : password)
        }
    }

    /// Hashes the plain passwords on every core, reporting progress.
    static func hashPasswords(_ rows: [Row], progress: @escaping @Sendable (Int, Int) -> Void) async throws -> [UserImport] {
        let plain = rows.enumerated().compactMap { index, row in row.plainPassword.map { (index, $0) } }
        var users = rows.map(\.user)
        guard !plain.isEmpty else { return users }
        let hashing = PasswordHashing()
        var done = 0
        let step = max(1, plain.count / 20)
        try await withThrowingTaskGroup(of: (Int, String).self) { group in
            var pending = plain.makeIterator()
            for _ in 0..<max(2, ProcessInfo.processInfo.activeProcessorCount) {
                guard let (index, password) = pending.next() else { break }
                group.addTask { (index, try await hashing.hash(password)) }
            }
            while let (index, hash) = try await group.next() {
                users[index].passwordHash = hash
                done += 1
                if done % step == 0 || done == plain.count { progress(done, plain.count) }
                if let (next, password) = pending.next() {
                    group.addTask { (next, try await hashing.hash(password)) }
                }
            }
        }
        return users
    }
}
