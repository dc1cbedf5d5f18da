import CSystemCalls
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A program the tests start (a client, a server, a tool), by `posix_spawn` with signals at their defaults.
///
/// Not Foundation's `Process`: on Linux its `run()` reads `/proc/self/fd` past the end of a directory entry
/// (swift-corelibs-foundation PR 5472, fixed after Swift 6.3.1) and crashes the test process once that holds
/// more than about 1 350 descriptors, which the suites running in parallel do.
public final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        case null
        /// This process's own stream.
        case inherit
        /// A file, created if missing and appended to (standard input: read from it).
        case file(String)
        /// A pipe this side reads (`readOutput()`) or writes (`write(_:)`).
        case pipe
    }

    public let pid: pid_t
    /// This side's ends of the `.pipe` streams, until closed.
    private let pipes: Mutex<(input: Int32?, output: Int32?)>
    private let ending = Mutex<Int32?>(nil)

    /// Starts `executable` (a path) with `arguments`, this process's environment overlaid by `environment`,
    /// in `directory` (default: the current one).
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], directory: String? = nil,
                input: Stream = .null, output: Stream = .null, errors: Stream = .null) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        var parentEnds: [Int32] = [], childEnds: [Int32] = []
        defer { childEnds.forEach { close($0) } }
        func plumb(_ stream: Stream, to target: Int32) throws -> Int32? {
            switch stream {
            case .inherit:
                return nil
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
                return nil
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, target == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_APPEND, 0o644)
                return nil
            case .pipe:
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { throw ChildProcessError.couldNotStart(executable, errno) }
                ends.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
                let (mine, theirs) = target == 0 ? (ends[1], ends[0]) : (ends[0], ends[1])
                parentEnds.append(mine)
                childEnds.append(theirs)
                posix_spawn_file_actions_adddup2(&actions, theirs, target)
                return mine
            }
        }
        do {
            pipes = Mutex((try plumb(input, to: 0), try plumb(output, to: 1)))
            _ = try plumb(errors, to: 2)
            if let directory { _ = kiosk_spawn_addchdir(&actions, directory) }
            _ = kiosk_spawn_addclosefrom(&actions, 3)
        } catch {
            parentEnds.forEach { close($0) }
            throw error
        }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0)=\($1)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard status == 0 else {
            parentEnds.forEach { close($0) }
            throw ChildProcessError.couldNotStart(executable, status)
        }
        self.pid = pid
    }

    /// Runs a program to completion on a thread of its own; returns its status, standard output and error.
    public static func run(_ executable: String, _ arguments: [String], stdin: String? = nil,
                           environment: [String: String] = [:], directory: String? = nil) async throws
        -> (status: Int32, output: String, errors: String) {
        try await onOwnThread {
            let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("process-\(UUID().uuidString).err").path
            defer { unlink(errorFile) }
            let child = try ChildProcess(executable, arguments, environment: environment, directory: directory,
                                         input: .pipe, output: .pipe, errors: .file(errorFile))
            child.write(stdin ?? "")
            child.closeInput()
            let output = child.readOutput()
            let status = child.waitUntilExit()
            let errors = (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? ""
            return (status, String(decoding: output, as: UTF8.self), errors)
        }
    }

    /// Writes to the child's standard input (a `.pipe`).
    public func write(_ text: String) {
        guard let inputWriter = pipes.withLock({ $0.input }) else { return }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(inputWriter, $0.baseAddress, $0.count) }
            if written < 0 { if errno == EINTR { continue } else { return } }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Closes the child's standard input (a `.pipe`): it reads the end.
    public func closeInput() {
        if let inputWriter = pipes.withLock({ pipes in defer { pipes.input = nil }; return pipes.input }) { close(inputWriter) }
    }

    /// Everything the child writes on standard output (a `.pipe`) until it closes it. Blocking.
    public func readOutput() -> Data {
        guard let outputReader = pipes.withLock({ pipes in defer { pipes.output = nil }; return pipes.output }) else { return Data() }
        defer { close(outputReader) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(outputReader, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: buffer[..<count])
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return data
            }
        }
    }

    /// Sends `signal` to the child.
    public func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// The raw wait status once the child has ended (reaping it), nil while it runs.
    private func poll(blocking: Bool) -> Int32? {
        ending.withLock { ending in
            if let ending { return ending }
            var status: Int32 = 0
            while true {
                let reaped = waitpid(pid, &status, blocking ? 0 : WNOHANG)
                if reaped == pid { ending = status; return status }
                if reaped < 0 && errno == EINTR { continue }
                if reaped < 0 { ending = 0x7F00; return ending }   // not our child any more: say it ended
                return nil
            }
        }
    }

    public var isRunning: Bool { poll(blocking: false) == nil }

    /// Waits for the child to end (blocking the calling thread); returns `terminationStatus`.
    @discardableResult
    public func waitUntilExit() -> Int32 {
        _ = poll(blocking: true)
        return terminationStatus
    }

    /// Waits for the child to end without blocking a thread of the cooperative pool.
    @discardableResult
    public func exited() async throws -> Int32 {
        while isRunning { try await Task.sleep(for: .milliseconds(5)) }
        return terminationStatus
    }

    /// The exit status, or the signal's number when a signal ended it (as Foundation's `Process`).
    public var terminationStatus: Int32 {
        guard let status = poll(blocking: false) else { return -1 }
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : status & 0x7F
    }

    /// True when a signal ended the child.
    public var wasSignaled: Bool {
        guard let status = poll(blocking: false) else { return false }
        return status & 0x7F != 0 && status & 0x7F != 0x7F
    }

    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            _ = poll(blocking: true)
        }
        pipes.withLock { pipes in [pipes.input, pipes.output].compactMap { $0 }.forEach { close($0) } }
    }
}

/// A program that could not be started.
public enum ChildProcessError: Error, CustomStringConvertible {
    case couldNotStart(String, Int32)

    public var description: String {
        switch self {
        case .couldNotStart(let program, let code): "could not start \(program): \(String(cString: strerror(code)))"
        }
    }
}

/// Runs blocking work (waiting for a child process, a pipe, a delay) on a thread of its own. Neither the
/// cooperative pool the in-process servers' handlers need nor Dispatch's global threads (on Linux the two
/// draw on the same few threads) may be held: with many tests waiting at once, they would all stall.
public func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 1 << 20
        thread.start()
    }
}
