import Foundation
import KioskConfig
import KioskFiles
import KioskHTTP
import KioskModels
import Logging
import KioskPasswords

/// Warnings an operator must see at start.
package enum StartupChecks {
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

    /// Whether nobody can sign in to the console (no operator stored). With the file owning the accounts,
    /// a warning says how to add one; with the database, the caller offers the set-up link.
    static func noOperator(_ configuration: KioskConfiguration, store: any KioskDatabase, logger: Logger) async throws -> Bool {
        guard try await !store.accounts().contains(where: { $0.kind == .operator }) else { return false }
        if configuration.catalogueSource == .file {
            logger.warning("no operator can sign in to the console (/admin): add one under operators in the configuration, with a hash from `KioskServer hash-password`, or set catalogue_source: console and use the set-up link")
        }
        return true
    }

    /// True when `KIOSK_REQUIRE_SANDBOX=1`: no sandbox for the PDF tools is a start-up failure.
    package static var requiresSandbox: Bool { ProcessInfo.processInfo.environment["KIOSK_REQUIRE_SANDBOX"] == "1" }

    /// The sandbox the PDF tools run in (`pdf.bwrap`, `pdf.sandbox_user`), found and tried once. Where none
    /// can be had: nil and a warning saying what is missing and what that means, or, when `required`, an
    /// error.
    package static func pdfSandbox(_ pdf: KioskConfiguration.PDF,
                                   required: Bool = requiresSandbox) throws -> (sandbox: Sandbox?, warning: String?) {
        do {
            return (try Sandbox.prepare(bwrap: pdf.bwrap.isEmpty ? nil : pdf.bwrap, user: pdf.sandboxUser), nil)
        } catch {
            if required { throw SandboxRequiredError(problem: error) }
            return (nil, "no sandbox for the PDF tools: \(error). They run as the server's user: a PDF exploiting "
                + "a renderer could read or change whatever the server can (its files, the database, the editions, its "
                + "environment and secret). Set KIOSK_REQUIRE_SANDBOX=1 to make this a start-up failure")
        }
    }

    /// Logs the outcome of `pdfSandbox` at start.
    package static func log(_ found: (sandbox: Sandbox?, warning: String?), logger: Logger) {
        if let sandbox = found.sandbox {
            logger.info("PDF tools run in a bubblewrap sandbox", metadata: [
                "bwrap": .string(sandbox.bwrap), "uid": .stringConvertible(sandbox.uid), "gid": .stringConvertible(sandbox.gid)])
        }
        if let warning = found.warning { logger.warning("\(warning)") }
    }
}

/// `KIOSK_REQUIRE_SANDBOX=1` and no sandbox for the PDF tools.
package struct SandboxRequiredError: Error, CustomStringConvertible {
    package var problem: SandboxError
    package var description: String {
        "KIOSK_REQUIRE_SANDBOX=1 but the PDF tools cannot run in a sandbox: \(problem). Fix that, or unset "
            + "KIOSK_REQUIRE_SANDBOX to run them as the server's user"
    }
}
