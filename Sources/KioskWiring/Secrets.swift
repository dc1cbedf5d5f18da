import Crypto
import Foundation
import KioskModels
import Logging
import KioskConfig
import KioskHTTP

/// The server's secrets: one master secret from which each use derives its own key.
///
/// From, in order: `KIOSK_SECRET` (at least 32 characters), the file named by `KIOSK_SECRET_FILE`
/// or the configuration's `secret_file`, or, for development on SQLite, a random one generated on first
/// run and kept next to the database (`kiosk-secret`, mode 0600). With PostgreSQL there is no
/// development secret: every instance must be given the same one. `KIOSK_LINK_SECRET` overrides the link
/// secret, so a web server that verifies links can share it.
struct Secrets: Sendable {
    let master: [UInt8]
    /// Where it came from, for the start-up log.
    let source: String
    let linkSecretOverride: String?

    var identityKey: [UInt8] { derive("identity-keys") }
    var webKioskKey: [UInt8] { derive("web-kiosk-sso") }
    var webSessionKey: [UInt8] { derive("web-reader-sessions") }
    var consoleSessionKey: [UInt8] { derive("console-sessions") }
    /// Printable, because the `nginx` link format embeds it in a web server's configuration.
    var linkSecret: String { linkSecretOverride ?? Base64URL.encode(derive("file-links")) }

    private func derive(_ label: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(label.utf8), using: SymmetricKey(data: master)))
    }

    static func load(configuration: KioskConfiguration, database: DatabaseLocation,
                     environment: [String: String] = ProcessInfo.processInfo.environment,
                     logger: Logger?) throws -> Secrets {
        let linkSecret = environment["KIOSK_LINK_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
        if let value = environment["KIOSK_SECRET"], !value.isEmpty {
            guard value.utf8.count >= 32 else {
                throw ConfigurationError(file: "environment", key: "KIOSK_SECRET", problem: "must be at least 32 characters")
            }
            return Secrets(master: Array(value.utf8), source: "KIOSK_SECRET", linkSecretOverride: linkSecret)
        }
        if let path = environment["KIOSK_SECRET_FILE"] ?? configuration.secretFile {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(file: path, key: "secret_file", problem: "cannot be read")
            }
            let value = Array(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).utf8)
            guard value.count >= 32 else {
                throw ConfigurationError(file: path, key: "secret_file", problem: "must hold at least 32 characters")
            }
            return Secrets(master: value, source: path, linkSecretOverride: linkSecret)
        }
        guard case .sqlite(let databasePath) = database else {
            throw ConfigurationError(file: "environment", key: "KIOSK_SECRET",
                                     problem: "is required with a PostgreSQL database (every instance must share it): "
                                         + "set KIOSK_SECRET or KIOSK_SECRET_FILE")
        }
        let directory = URL(fileURLWithPath: databasePath).deletingLastPathComponent().path
        let path = directory + "/kiosk-secret"
        if let data = FileManager.default.contents(atPath: path), data.count >= 32 {
            return Secrets(master: Array(data), source: path + " (development)", linkSecretOverride: linkSecret)
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        let secret = Array(Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }).utf8)
        // Written aside, then linked into place: of processes starting together, one secret wins and all use it.
        let aside = path + ".\(getpid())"
        guard FileManager.default.createFile(atPath: aside, contents: Data(secret), attributes: [.posixPermissions: 0o600]) else {
            throw ConfigurationError(file: path, key: "", problem: "cannot write the development secret")
        }
        let linked = link(aside, path) == 0
        unlink(aside)
        if !linked {   // another process's secret is in place: use it
            guard let data = FileManager.default.contents(atPath: path), data.count >= 32 else {
                throw ConfigurationError(file: path, key: "", problem: "cannot write the development secret")
            }
            return Secrets(master: Array(data), source: path + " (development)", linkSecretOverride: linkSecret)
        }
        logger?.warning("generated a development secret; set KIOSK_SECRET or KIOSK_SECRET_FILE in production",
                        metadata: ["path": .string(path)])
        return Secrets(master: secret, source: path + " (development, new)", linkSecretOverride: linkSecret)
    }
}

/// Never printed, dumped or reflected: a log line or a debugger shows where the secret came from, not it.
extension Secrets: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    var description: String { "Secrets(from \(source), redacted)" }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
