import Foundation
import KioskFiles
import Testing

/// The PDF tools' sandbox (`Sandbox.prepare()`: `bwrap` on `PATH`, user `nobody`), prepared once for the
/// tests. Tests that need it are skipped where it cannot be had, unless `KIOSK_REQUIRE_SANDBOX=1` (CI),
/// which makes its absence a failure.
public enum TestSandbox {
    public static let required = ProcessInfo.processInfo.environment["KIOSK_REQUIRE_SANDBOX"] == "1"
    public static let prepared: Result<Sandbox, SandboxError> = Result { () throws(SandboxError) in try Sandbox.prepare() }
    /// The sandbox, or nil where it cannot be had.
    public static var sandbox: Sandbox? { try? prepared.get() }
    /// Whether tests that need the sandbox run: it is here, or it is required (and they fail without it).
    public static var runs: Bool { sandbox != nil || required }

    /// The sandbox, or a thrown failure naming why it cannot be had (for tests that run only when `runs`).
    public static func require() throws -> Sandbox {
        switch prepared {
        case .success(let sandbox): return sandbox
        case .failure(let problem): throw SandboxMissing(problem: problem)
        }
    }

    /// Records a failure when the sandbox is required but missing (for tests that run either way).
    public static func recordIfRequiredAndMissing(sourceLocation: SourceLocation = #_sourceLocation) {
        if required, case .failure(let problem) = prepared {
            Issue.record("KIOSK_REQUIRE_SANDBOX=1 but no sandbox: \(problem)", sourceLocation: sourceLocation)
        }
    }

    public struct SandboxMissing: Error, CustomStringConvertible {
        public var problem: SandboxError
        public var description: String { "KIOSK_REQUIRE_SANDBOX=1 but no sandbox: \(problem)" }
    }
}
