import Foundation
import KioskConfig
import KioskModels
import KioskPostgres
import KioskSQLite
import Logging
import NIOSSL
import PostgresNIO
import ServiceLifecycle

/// The database `server.database` names: a SQLite file (its folder created if needed) or a PostgreSQL
/// server (`postgres://…`), migrated either way.
package enum DatabaseWiring {
    /// The configured database for the server: its `services` run in the server's service group, then
    /// `migrate()` (SQLite is migrated when opened and has none).
    package struct Prepared: Sendable {
        package let store: any KioskDatabase
        package let services: [any Service]
        package let migrate: @Sendable () async throws -> Void
    }

    package static func prepare(_ configuration: KioskConfiguration, observer: any StoreObserver = UnobservedStore(),
                                logger: Logger = Logger(label: "kiosk.database")) throws -> Prepared {
        let busyTimeout = try busyTimeoutSeconds(configuration)
        switch try DatabaseLocation(configuration.server.database) {
        case .sqlite(let path):
            return Prepared(store: try openSQLite(path, busyTimeout: busyTimeout, observer: observer), services: [], migrate: {})
        case .postgres(let location):
            let store = PostgresKioskStore(try clientConfiguration(location), name: location.description,
                                           connectionWait: .milliseconds(busyTimeout * 1000), observer: observer, logger: logger)
            return Prepared(store: store, services: store.services, migrate: { try await store.migrate() })
        }
    }

    /// The configured database for a command without a service group (PostgreSQL's services then run
    /// until the store is closed), migrated.
    package static func open(_ configuration: KioskConfiguration, logger: Logger = Logger(label: "kiosk.database")) async throws -> any KioskDatabase {
        let busyTimeout = try busyTimeoutSeconds(configuration)
        switch try DatabaseLocation(configuration.server.database) {
        case .sqlite(let path):
            return try openSQLite(path, busyTimeout: busyTimeout)
        case .postgres(let location):
            return try await PostgresKioskStore.connect(
                try clientConfiguration(location), name: location.description,
                connectionWait: .milliseconds(busyTimeout * 1000), logger: logger)
        }
    }

    private static func openSQLite(_ path: String, busyTimeout: Double, observer: any StoreObserver = UnobservedStore()) throws -> SQLiteKioskStore {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return try SQLiteKioskStore(path: path, busyTimeout: busyTimeout, observer: observer)
    }

    /// `limits.database_busy_timeout_seconds`, checked: SQLite and GRDB take it in milliseconds as a
    /// 32-bit integer (and stop the process on a larger one), so it is 0 to a day.
    package static func busyTimeoutSeconds(_ configuration: KioskConfiguration) throws -> Double {
        let seconds = configuration.limits.databaseBusyTimeoutSeconds
        guard (0...86_400).contains(seconds) else {
            throw ConfigurationError(file: "configuration", key: "limits.database_busy_timeout_seconds",
                                     problem: "must be 0 to 86400 seconds, got \(seconds)")
        }
        return seconds
    }

    /// postgres-nio's configuration for a location: TCP or Unix socket, TLS as `sslmode` asks.
    package static func clientConfiguration(_ location: PostgresLocation) throws -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let directory = location.socketDirectory {
            configuration = .init(unixSocketPath: "\(directory)/.s.PGSQL.\(location.port)", username: location.username,
                                  password: location.password, database: location.database)
        } else {
            configuration = .init(host: location.host, port: location.port, username: location.username,
                                  password: location.password, database: location.database, tls: try tls(location))
        }
        configuration.options.maximumConnections = location.maxConnections
        configuration.options.connectTimeout = .seconds(location.connectTimeoutSeconds)
        configuration.options.additionalStartupParameters = [("application_name", location.applicationName)]
        return configuration
    }

    private static func tls(_ location: PostgresLocation) throws -> PostgresClient.Configuration.TLS {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch location.tls {
        case .disable: return .disable
        case .prefer:
            tls.certificateVerification = .none
            return .prefer(tls)
        case .require:
            tls.certificateVerification = .none
            return .require(tls)
        case .verifyFull:
            if let path = location.rootCertificate {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(path))
            }
            return .require(tls)
        }
    }
}
