import Foundation
import KioskTestSupport
import Testing

/// The real `KioskServer` binary, started on a free port with a configuration of the test's.
final class ServerProcess: @unchecked Sendable {
    let process: ChildProcess
    let port: Int
    let logFile: URL

    /// The built executable, next to the test bundle.
    static var executable: URL {
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("KioskServer")
        if FileManager.default.isExecutableFile(atPath: besideTests.path) { return besideTests }
        return URL(fileURLWithPath: TestKiosk.repositoryRoot + "/.build/debug/KioskServer")
    }

    /// Runs `KioskServer arguments…` to completion; returns (status, stdout, stderr).
    static func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) async throws
        -> (status: Int32, output: String, errors: String) {
        try await ChildProcess.run(executable.path, arguments, stdin: stdin, environment: environment,
                                   directory: TestKiosk.repositoryRoot)
    }

    /// Starts `KioskServer serve` with `arguments` (plus `--port 0`) and waits until it listens.
    init(_ arguments: [String], environment: [String: String] = [:]) async throws {
        logFile = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-serve-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        process = try ChildProcess(Self.executable.path, ["serve", "--port", "0"] + arguments, environment: environment,
                                   directory: TestKiosk.repositoryRoot, output: .file(logFile.path), errors: .file(logFile.path))
        var found: Int?
        for _ in 0..<600 {
            if let text = try? String(contentsOf: logFile, encoding: .utf8),
               let range = text.range(of: #"rpc=https?://[^ ]+:(\d+)/RPC2"#, options: .regularExpression) {
                found = Int(text[range].split(separator: ":").last!.dropLast(5))
                break
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        guard let found else {
            process.signal(SIGKILL)
            throw ServerProcessError.didNotStart(log: (try? String(contentsOf: logFile, encoding: .utf8)) ?? "")
        }
        port = found
    }

    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    func signal(_ number: Int32) { process.signal(number) }
    var pid: Int32 { process.pid }

    /// Waits for the process to end; returns its exit status.
    func waitForExit(timeout: Duration = .seconds(30)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { throw ServerProcessError.didNotExit }
            try await Task.sleep(for: .milliseconds(50))
        }
        return process.terminationStatus
    }

    deinit {
        try? FileManager.default.removeItem(at: logFile)
    }
}

enum ServerProcessError: Error {
    case didNotStart(log: String)
    case didNotExit
}
