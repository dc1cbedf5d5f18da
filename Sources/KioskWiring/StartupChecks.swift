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
            guard await PasswordHashing().verify(developmentPassword, against: client.passwordHash) else { continue }
            let message: Logger.Message = loopback
                ? "API client uses the development password; change it before exposing the server"
                : "API client uses the development password and the server listens beyond loopback: anyone can call it"
            logger.warning(message, metadata: ["client": .string(client.username), "host": .string(configuration.server.host)])
        }
    }
}
