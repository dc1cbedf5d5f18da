import Foundation

/// Where the data lives, as `server.database` or `--database` names it: a SQLite file (the embedded
/// default), or a PostgreSQL server by URL. A URL is never taken for a file path.
package enum DatabaseLocation: Sendable, Hashable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(PostgresLocation)

    /// `postgres://` and `postgresql://` name a server; any other `scheme://` is refused; anything else
    /// is a file path. The password comes from the URL, else `KIOSK_DATABASE_PASSWORD`, else the file
    /// named by `KIOSK_DATABASE_PASSWORD_FILE`.
    package init(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigurationError) {
        guard let schemeEnd = text.range(of: "://") else {
            guard !text.isEmpty else { throw Self.error("is empty: give a SQLite file or a postgres:// URL") }
            self = .sqlite(path: text)
            return
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw Self.error("\"\(scheme)://\" is not a database this server knows: give a SQLite file or a postgres:// URL")
        }
        self = .postgres(try PostgresLocation(url: text, environment: environment))
    }

    /// The location without its password, for logs.
    package var description: String {
        switch self {
        case .sqlite(let path): path
        case .postgres(let location): location.description
        }
    }

    static func error(_ problem: String) -> ConfigurationError {
        ConfigurationError(file: "database", key: "server.database", problem: problem)
    }
}

/// A PostgreSQL server and database, read from a libpq-style URL:
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE?sslmode=…&sslrootcert=…&host=/socket/dir&pool_max=…`.
package struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    /// How the connection uses TLS (libpq's `sslmode` values, those that postgres-nio can honour).
    package enum TLSMode: String, Sendable, Hashable {
        /// Plain TCP.
        case disable
        /// TLS when the server offers it, without checking its certificate.
        case prefer
        /// TLS always, without checking the certificate's name (libpq's `require`).
        case require
        /// TLS always, the certificate checked against `sslrootcert` (or the system's roots) and the host name.
        case verifyFull = "verify-full"
    }

    package var host: String
    package var port: Int
    /// A Unix socket directory (`?host=/run/postgresql`); nil: TCP to `host`.
    package var socketDirectory: String?
    package var username: String
    package var password: String?
    package var database: String
    package var tls: TLSMode
    /// CA certificates (PEM) for `verify-full`.
    package var rootCertificate: String?
    /// Connections this process keeps at most.
    package var maxConnections: Int
    /// Seconds to wait for a new connection's TCP handshake (`connect_timeout`).
    package var connectTimeoutSeconds: Int
    /// How the server lists these connections (`application_name`).
    package var applicationName: String

    init(url text: String, environment: [String: String]) throws(ConfigurationError) {
        guard let url = URLComponents(string: text), let host = url.host, let user = url.user, !user.isEmpty else {
            throw DatabaseLocation.error("\(Self.redacting(text)) is not a PostgreSQL URL: postgres://USER@HOST[:PORT]/DATABASE")
        }
        let database = String(url.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw DatabaseLocation.error("\(Self.redacting(text)) names no database: postgres://USER@HOST[:PORT]/DATABASE")
        }
        self.host = host.isEmpty ? "localhost" : host
        self.port = url.port ?? 5432
        self.username = user.removingPercentEncoding ?? user
        self.database = database.removingPercentEncoding ?? database
        self.password = url.password.map { $0.removingPercentEncoding ?? $0 }
        self.tls = .prefer
        self.maxConnections = 20
        self.connectTimeoutSeconds = 5
        self.applicationName = "kiosk"
        for item in url.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                if value == "allow" { tls = .prefer; continue }
                guard let mode = TLSMode(rawValue: value) else {
                    throw DatabaseLocation.error("sslmode \"\(value)\": use disable, prefer, require or verify-full")
                }
                tls = mode
            case "sslrootcert": rootCertificate = value
            case "host":
                if value.hasPrefix("/") { socketDirectory = value } else if !value.isEmpty { self.host = value }
            case "pool_max":
                guard let count = Int(value), (1...500).contains(count) else {
                    throw DatabaseLocation.error("pool_max \"\(value)\": a number of connections from 1 to 500")
                }
                maxConnections = count
            case "connect_timeout":
                guard let seconds = Int(value), (1...300).contains(seconds) else {
                    throw DatabaseLocation.error("connect_timeout \"\(value)\": seconds from 1 to 300")
                }
                connectTimeoutSeconds = seconds
            case "application_name": applicationName = value
            default:
                throw DatabaseLocation.error("unknown URL parameter \"\(item.name)\" (known: sslmode, sslrootcert, host, pool_max, "
                                             + "connect_timeout, application_name)")
            }
        }
        if password == nil {
            if let value = environment["KIOSK_DATABASE_PASSWORD"], !value.isEmpty {
                password = value
            } else if let path = environment["KIOSK_DATABASE_PASSWORD_FILE"], !path.isEmpty {
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw ConfigurationError(file: path, key: "KIOSK_DATABASE_PASSWORD_FILE", problem: "cannot be read")
                }
                password = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
            }
        }
    }

    /// `postgres://user@host:port/database`, never the password.
    package var description: String {
        "postgres://\(username)@\(host):\(port)/\(database)" + (socketDirectory.map { "?host=\($0)" } ?? "")
    }

    private static func redacting(_ text: String) -> String {
        guard var url = URLComponents(string: text), url.password != nil else { return "\"\(text)\"" }
        url.password = "…"
        return "\"\(url.string ?? "postgres://…")\""
    }
}
