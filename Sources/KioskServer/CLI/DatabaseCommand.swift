import Logging
import ArgumentParser
import Foundation
import KioskConfig
import KioskModels
import KioskPostgres
import KioskSQLite
import KioskStoreSupport
import KioskWiring

/// `KioskServer db …`: moving the data between engines.
struct DatabaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db", abstract: "Move the database to another engine.", subcommands: [Copy.self])

    /// `db copy --to postgres://…`: the SQLite database, table by table, into PostgreSQL, checked.
    struct Copy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy the SQLite database (--database / server.database) to PostgreSQL, checked by row counts and checksums.",
            discussion: """
                Runs in one transaction on the target: nothing is committed unless every table's row count and \
                checksum match the source's. An empty target is filled; a target that already matches is left \
                as it is, so the command can be run again; any other target is refused unless --replace. \
                Stop writes to the source first (see docs/operations.md, "Moving to PostgreSQL").
                """)

        @OptionGroup var options: StoreOptions

        @Option(help: ArgumentHelp("The PostgreSQL database to fill.", valueName: "postgres://USER@HOST[:PORT]/DATABASE"))
        var to: String

        @Flag(help: "Empty the target first when it holds other data.")
        var replace = false

        func run() async throws {
            let configuration = try options.loadConfiguration()
            guard case .sqlite(let path) = try DatabaseLocation(configuration.server.database) else {
                throw ValidationError("the source must be a SQLite file (--database FILE); \(configuration.server.database) is not")
            }
            guard FileManager.default.fileExists(atPath: path) else { throw ValidationError("no SQLite database at \(path)") }
            guard case .postgres(let location) = try DatabaseLocation(to) else {
                throw ValidationError("--to must be a postgres:// URL")
            }
            let source = try SQLiteKioskStore(path: path, busyTimeout: try DatabaseWiring.busyTimeoutSeconds(configuration))
            let target = try await PostgresKioskStore.connect(try DatabaseWiring.clientConfiguration(location), name: location.description,
                                                              logger: .init(label: "kiosk.db-copy"))
            let started = ContinuousClock.now
            let reports: [TableCopyReport]
            do {
                reports = try await target.copy(from: source, replace: replace) { table, rows in
                    if rows % 100_000 == 0 || rows < 5_000 { printError("copying \(table): \(rows) rows") }
                }
            } catch {
                await target.close()
                throw error
            }
            await target.close()
            for report in reports { printOutput("\(report.table): \(report.target)") }
            let elapsed = started.duration(to: .now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            printOutput("copied \(path) to \(location) in \(String(format: "%.1f", seconds)) s; every table checked")
        }
    }
}
