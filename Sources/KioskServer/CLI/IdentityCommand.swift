import ArgumentParser
import Foundation
import KioskModels
import KioskSQLite
import KioskConfig
import KioskHTTP

/// `KioskServer identity …`: devices taken over from the 2012 system.
struct IdentityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity", abstract: "Manage device identities (identity keys).",
        subcommands: [Import.self])

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import the devices of the 2012 USERS_MOBILS table with their old keys, all or nothing.",
            discussion: """
                Header: iden_key,app_key,disp_key,username_or_empty,demos (the fourth column may also be \\
                called username). Each old key is accepted by getEdicio and consumirDemo for its app and device \\
                until the device's next registrar, which answers a Kiosk key and retires the old one. `demos` \\
                is the device's demo count on the app; several old keys of one device keep the largest. \\
                Users must be imported first (`user import`). Running it again updates the same keys.
                """)
        @OptionGroup var options: StoreOptions
        @Argument(help: "The CSV file.") var file: String

        func run() async throws {
            let configuration = try options.loadConfiguration()
            let csv = try CSVReader.rows(ofFile: file)
            let rows: [IdentityImportParser.Row]
            do {
                rows = try IdentityImportParser.parse(csv, knownApps: Set(configuration.catalogue.apps.map(\.key)))
            } catch {
                throw ValidationError("\(file): \(error); nothing was imported")
            }
            let store = try await StoreOptions.openStore(configuration)
            _ = try await configuration.syncCatalogue(into: store)
            printError("writing \(rows.count) identities in one transaction…")
            let summary: IdentityImportSummary
            do {
                summary = try await store.importIdentities(rows.map(\.identity), at: SystemClock().now) { done, total in
                    printError("identities: \(done)/\(total)")
                }
            } catch let error as ImportRowError {
                throw ValidationError("\(file): line \(rows[error.index].line): \(error); nothing was imported")
            }
            printOutput("\(file): \(summary.added) identities added, \(summary.updated) updated")
        }
    }
}

/// Reads the identity import CSV, checking every row before anything is written.
enum IdentityImportParser {
    struct Row {
        var line: Int
        var identity: IdentityImport
    }

    static let header = ["iden_key", "app_key", "disp_key", "username_or_empty", "demos"]

    static func parse(_ rows: [CSVReader.Row], knownApps: Set<String>) throws -> [Row] {
        var columns = try CSVReader.columns(rows.first)
        if columns.count == 5, columns[3] == "username" { columns[3] = "username_or_empty" }
        guard columns == header else {
            throw CSVReader.Problem(line: rows[0].line, message: "the header must be \(header.joined(separator: ","))")
        }
        var seen = Set<String>()
        return try rows.dropFirst().map { row in
            func fail(_ message: String) -> CSVReader.Problem { CSVReader.Problem(line: row.line, message: message) }
            guard row.fields.count == header.count else {
                throw fail("expected \(header.count) fields, found \(row.fields.count)")
            }
            let fields = row.fields.map { $0.trimmingCharacters(in: .whitespaces) }
            let (key, app, device, username) = (fields[0], fields[1], fields[2], fields[3])
            guard !key.isEmpty, key.utf8.count <= 200, !key.contains(where: \.isWhitespace) else {
                throw fail("iden_key must be 1-200 characters without spaces")
            }
            guard seen.insert(key).inserted else { throw fail("iden_key \"\(key)\" appears twice") }
            guard knownApps.contains(app) else { throw fail("app \"\(app)\" is not in the configuration") }
            guard !device.isEmpty, device.utf8.count <= 200 else { throw fail("disp_key must be 1-200 characters") }
            guard let demos = Int(fields[4]), (0...100_000).contains(demos) else {
                throw fail("demos must be a whole number from 0, got \"\(fields[4])\"")
            }
            return Row(line: row.line, identity: IdentityImport(key: key, appKey: app, deviceKey: device,
                                                                username: username, demosConsumed: demos))
        }
    }
}
