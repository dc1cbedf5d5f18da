import Foundation
import KioskTestSupport
import Testing

/// The PostgreSQL server the binary's tests use: `KIOSK_TEST_POSTGRES` (a superuser URL, `.ci/run`
/// starts one). Suites that need it are skipped without it, unless `KIOSK_REQUIRE_POSTGRES=1` (CI),
/// where they fail.
enum TestPostgresServer {
    static let environment = ProcessInfo.processInfo.environment
    static let url = environment["KIOSK_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
    static var configured: Bool { url != nil || environment["KIOSK_REQUIRE_POSTGRES"] == "1" }
    static let skipReason: Comment = "no PostgreSQL server: set KIOSK_TEST_POSTGRES=postgres://postgres@127.0.0.1:PORT/postgres (.ci/run starts one)"

    /// Runs `body` with the URL of a new, empty database, and drops the database afterwards, whatever
    /// `body` did (its connections are ended: the programs of a failed test may still hold some).
    static func withDatabase<Result>(_ body: (String) async throws -> Result) async throws -> Result {
        let server = try #require(url, "KIOSK_REQUIRE_POSTGRES=1 but KIOSK_TEST_POSTGRES is not set")
        let name = "kiosk_t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await psql(server, "CREATE DATABASE \(name)")
        var components = try #require(URLComponents(string: server))
        components.path = "/" + name
        let database = try #require(components.string)
        let result: Result
        do {
            result = try await body(database)
        } catch {
            _ = try? await psql(server, "DROP DATABASE \(name) WITH (FORCE)")
            throw error
        }
        try await psql(server, "DROP DATABASE \(name) WITH (FORCE)")
        return result
    }

    /// Runs `sql` with psql; returns its unaligned output.
    @discardableResult
    static func psql(_ database: String, _ sql: String) async throws -> String {
        let result = try await ChildProcess.run("/usr/bin/psql", ["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", database, "-c", sql])
        try #require(result.status == 0, "psql failed: \(result.errors)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
