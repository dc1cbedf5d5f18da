import Logging
import KioskConfig
import KioskHTTP
import KioskModels

/// Warnings an operator must see at start.
enum StartupChecks {
    /// The password the repository's development API client uses (see README).
    static let developmentPassword = "secret"

    /// Checks the stored API clients (the file's, or the console's when it owns the catalogue).
    static func warnAboutDevelopmentCredentials(_ configuration: KioskConfiguration, store: any KioskDatabase,
                                                logger: Logger) async throws {
        let loopback = ["127.0.0.1", "::1", "localhost"].contains(configuration.server.host)
        for client in try await store.accounts() where client.kind == .apiClient {
            guard try await PasswordHashing().verify(developmentPassword, against: client.passwordHash, username: "") else { continue }
            let message: Logger.Message = loopback
                ? "API client uses the development password; change it before exposing the server"
                : "API client uses the development password and the server listens beyond loopback: anyone can call it"
            logger.warning(message, metadata: ["client": .string(client.username), "host": .string(configuration.server.host)])
        }
    }

    /// Names the publisher accounts without a scope: they may publish to, withdraw and restore every edition.
    static func warnAboutUnscopedPublishers(store: any KioskDatabase, logger: Logger) async throws {
        let unscoped = try await store.accounts().filter { $0.kind == .publisher && $0.scope == nil }.map(\.username)
        guard !unscoped.isEmpty else { return }
        logger.warning("publisher accounts without a scope may publish to every edition; give each its publications or editions",
                       metadata: ["publishers": .string(unscoped.joined(separator: ","))])
    }
}
