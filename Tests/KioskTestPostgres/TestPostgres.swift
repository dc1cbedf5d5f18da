import Foundation
import Logging
import PostgresNIO
import Testing

/// The PostgreSQL server the tests use, from the environment.
public enum TestPostgres {
    public static let environment = ProcessInfo.processInfo.environment
    /// A superuser URL, e.g. `postgres://postgres@127.0.0.1:55432/postgres`.
    public static let url = environment["KIOSK_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
    public static let required = environment["KIOSK_REQUIRE_POSTGRES"] == "1"
    public static var configured: Bool { url != nil || required }
    public static let skipReason: Comment = "no PostgreSQL server: set KIOSK_TEST_POSTGRES=postgres://postgres@127.0.0.1:PORT/postgres (.ci/run starts one)"

    /// postgres-nio's configuration for `database` on the test server.
    public static func configuration(database: String) throws -> PostgresClient.Configuration {
        let text = try #require(url, "KIOSK_REQUIRE_POSTGRES=1 but KIOSK_TEST_POSTGRES is not set")
        let components = try #require(URLComponents(string: text), "KIOSK_TEST_POSTGRES is not a URL: \(text)")
        var configuration = PostgresClient.Configuration(
            host: components.host ?? "127.0.0.1", port: components.port ?? 5432, username: components.user ?? "postgres",
            password: components.password, database: database, tls: .disable)
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    /// Runs `body` with a new, empty database, dropped afterwards.
    public static func withDatabase(_ body: (PostgresClient.Configuration) async throws -> Void) async throws {
        let name = "kiosk_t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await admin("CREATE DATABASE \(name)")
        do {
            try await body(try configuration(database: name))
        } catch {
            try? await admin("DROP DATABASE \(name) WITH (FORCE)")
            throw error
        }
        try await admin("DROP DATABASE \(name) WITH (FORCE)")
    }

    /// A statement on the server's `postgres` database.
    public static func admin(_ sql: String) async throws {
        _ = try await query(try configuration(database: "postgres"), sql)
    }

    /// The first column of the first row of `sql`, as an integer (nil without one).
    @discardableResult
    public static func query(_ configuration: PostgresClient.Configuration, _ sql: String) async throws -> Int? {
        let client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "test"))
        return try await withThrowingTaskGroup(of: Int?.self) { group in
            group.addTask { await client.run(); return nil }
            defer { group.cancelAll() }
            let rows = try await client.query(PostgresQuery(unsafeSQL: sql)).collect()
            return try rows.first.map { try $0.decode(Int.self) }
        }
    }
}
