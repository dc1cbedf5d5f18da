import KioskRPC
import KioskEditions
import Foundation
import Hummingbird
import KioskModels
import NIOConcurrencyHelpers
import NIOCore
import KioskConfig
import KioskFiles

/// `GET /healthz`: the process is up and serving.
///
/// `GET /readyz`: the instance can do its work: the database answers a query, the editions directory
/// is writable (a temporary file is created and deleted), and a configuration is loaded. `200` with
/// the checks as JSON, or `503` naming what failed. Each check is bounded in time, so a stuck disk or
/// database makes the probe fail rather than hang.
package struct HealthController {
    /// How long one check may take before it counts as failed.
    package var timeout: Duration = .seconds(3)

    package func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get("/healthz") { _, _ in "ok\n" }
        group.get("/readyz") { _, context in try await readiness(context) }
    }

    package struct Check: Sendable {
        package var name: String
        /// nil when it passed.
        package var failure: String?
    }

    package func readiness(_ context: KioskRequestContext) async throws -> Response {
        let runtime = context.runtime
        let store = runtime.environment.service.store
        let editions = runtime.configuration.server.editions
        let executor = runtime.delivery.directory.executor
        let timeout = self.timeout
        async let database = Self.bounded("database", timeout) {
            try await store.ping()
        }
        async let directory = Self.bounded("editions", timeout) {
            try await executor.run { try Self.probeWritable(directory: editions) }
        }
        // A runtime exists only for a configuration that loaded and validated (a bad reload keeps the old one).
        let configuration = Check(name: "configuration", failure: nil)
        return try Self.report([await database, await directory, configuration])
    }

    /// Creates, writes, syncs and removes a uniquely named file in `directory`.
    package static func probeWritable(directory: String) throws {
        let path = directory + "/.readyz-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ProbeError("cannot create a file in the editions directory: \(String(cString: strerror(errno)))") }
        defer { unlink(path) }
        let written = write(fd, "ok", 2)
        let failed = written != 2 ? errno : 0
        close(fd)
        guard failed == 0 else { throw ProbeError("cannot write in the editions directory: \(String(cString: strerror(failed)))") }
    }

    package struct ProbeError: Error, CustomStringConvertible {
        package var description: String
        package init(_ description: String) { self.description = description }
    }

    /// Runs `work`; a thrown error or more than `timeout` makes the check fail with a short reason.
    /// The answer never waits for a stuck `work` (it is left to finish on its own).
    package static func bounded(_ name: String, _ timeout: Duration, _ work: @escaping @Sendable () async throws -> Void) async -> Check {
        let failure: String? = await withCheckedContinuation { continuation in
            let once = NIOLockedValueBox(Optional(continuation))
            @Sendable func finish(_ failure: String?) {
                once.withLockedValue { pending in
                    pending?.resume(returning: failure)
                    pending = nil
                }
            }
            let timer = Task {
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                finish("no answer within \(timeout)")
            }
            Task {
                do { try await work(); finish(nil) } catch { finish("\(error)") }
                timer.cancel()
            }
        }
        return Check(name: name, failure: failure)
    }

    /// `200` with the checks as JSON, or `503` (`KioskHTTPError.notReady`) with the same report.
    package static func report(_ checks: [Check]) throws -> Response {
        let failed = checks.filter { $0.failure != nil }
        let report = Report(
            status: failed.isEmpty ? "ready" : "not ready",
            checks: Dictionary(uniqueKeysWithValues: checks.map { ($0.name, $0.failure.map { "failed: \($0)" } ?? "ok") }),
            failed: failed.isEmpty ? nil : failed.map(\.name))
        guard failed.isEmpty else { throw KioskHTTPError.notReady(json: try JSONResponse.bytes(report)) }
        return try JSONResponse.response(.ok, report, headers: [.cacheControl: "no-store"])
    }

    /// The readiness answer: `status`, each check's `ok` or `failed: …`, and the names that failed.
    package struct Report: Encodable {
        package var status: String
        package var checks: [String: String]
        package var failed: [String]?
    }
}
