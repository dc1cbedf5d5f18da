import CSystemCalls
import KioskIntegers
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// What a child process may use before it is stopped.
public struct ChildLimits: Sendable, Hashable {
    /// Processor seconds (`RLIMIT_CPU`; the kernel sends `SIGXCPU`, then `SIGKILL` a second later).
    public var cpuSeconds: Int
    /// Address space (`RLIMIT_AS`): allocations past it fail.
    public var memoryBytes: Int64
    /// The largest file it may write (`RLIMIT_FSIZE`; past it `SIGXFSZ`), and also the most its working
    /// folder may hold when it ends (several files each under the limit).
    public var outputBytes: Int64
    /// Wall-clock seconds before its whole process group is killed.
    public var wallSeconds: Double

    public init(cpuSeconds: Int = 60, memoryBytes: Int64 = 1 << 30, outputBytes: Int64 = 512 << 20, wallSeconds: Double = 120) {
        self.cpuSeconds = cpuSeconds; self.memoryBytes = memoryBytes
        self.outputBytes = outputBytes; self.wallSeconds = wallSeconds
    }
}

/// How a child process ended.
public struct ChildOutcome: Sendable, Hashable {
    public enum Ending: Sendable, Hashable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it (`SIGXCPU`/`SIGKILL` for the CPU limit, `SIGXFSZ` for a file too large,
        /// `SIGSEGV`/`SIGABRT` for a crash).
        case signaled(Int32)
        /// It ran past the wall-clock limit and its process group was killed.
        case timedOut
        /// It ended, but left more than the output limit in its working folder.
        case outputTooLarge(Int64)
        /// It ended, but left something in its working folder that is neither a regular file nor a folder
        /// (a symbolic link, a pipe, a socket: never to be followed or read), or a folder that cannot be
        /// read; its path inside the folder.
        case leftOddFile(String)
    }
    public var ending: Ending
    /// The tail of what it wrote on standard error (at most 400 bytes, control characters replaced).
    public var errorText: String
    /// Wall-clock seconds it ran.
    public var seconds: Double

    public var succeeded: Bool { ending == .exited(0) }

    /// One line for a message: "exit status 2", "killed by signal 11 (crashed)", "ran past 5 s".
    public var summary: String {
        switch ending {
        case .exited(let status): "exit status \(status)"
        case .signaled(let signal): "killed by signal \(signal)\(Self.signalMeaning(signal))"
        case .timedOut: "ran past the wall-clock limit"
        case .outputTooLarge(let bytes): "wrote \(bytes) bytes, past the output limit"
        case .leftOddFile(let name): "left \(name), neither a regular file nor a folder"
        }
    }

    static func signalMeaning(_ signal: Int32) -> String {
        switch signal {
        case SIGXCPU, SIGKILL: " (processor-time limit)"
        case SIGXFSZ: " (file-size limit)"
        case SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE: " (crashed)"
        default: ""
        }
    }
}

/// Runs a program as an isolated child process: with resource limits, no network, an empty environment
/// (but `PATH`, `HOME` and `TMPDIR`), its own working folder, standard input from `/dev/null`, standard
/// output and error into files of that folder, every other descriptor closed, and in a process group
/// of its own that is killed whole on a timeout.
///
/// It is started by `kiosk_spawn_isolated` (CSystemCalls: `vfork`, then in the child only system calls,
/// as `posix_spawn`'s own child does; never a `fork` of this multi-threaded process), which joins an empty
/// network namespace (`NetworkNamespace`; when it can be made here, which needs root or user namespaces),
/// sets the limits and executes the program: no helper program runs per child. With a `Sandbox` the
/// program it executes is `bwrap`, which runs the real one where it sees only its folder and inputs, as
/// another user. After the child ends, its folder must hold only regular files and folders within the
/// output limit. Waiting blocks the calling thread: call it from a `BlockingExecutor` job, never from an
/// event loop or the cooperative pool.
public enum IsolatedProcess {
    /// Where the child's standard output and standard error go, inside its working folder.
    public static let standardOutputName = "_stdout"
    public static let standardErrorName = "_stderr"

    /// True when children run without network (an empty network namespace could be made here).
    public static var isolatesNetwork: Bool { NetworkNamespace.shared.descriptor() != nil }

    /// Runs `program` (a name looked up in `/usr/bin:/bin`, or a path) with `arguments` in `folder`
    /// (an existing folder of its own, also its `TMPDIR` and `HOME`) under `limits`. Blocking.
    ///
    /// With a `sandbox` the program runs in it (`Sandbox`), seeing `folder` writable and `inputs` (the files
    /// it reads: absolute paths) read-only, each at its own path, and its working folder is `folder` there
    /// too; the limits apply to `bwrap` and the program alike. Without one `inputs` are not needed.
    public static func run(_ program: String, _ arguments: [String], in folder: String, inputs: [String] = [],
                           limits: ChildLimits, sandbox: Sandbox? = nil) throws -> ChildOutcome {
        let started = FS.monotonic()
        guard let path = program.contains("/") ? program : findProgram(program) else {
            throw SystemError("execve", program, code: ENOENT)
        }
        let environment = ["PATH=/usr/bin:/bin", "HOME=\(folder)", "TMPDIR=\(folder)", "LC_ALL=C.UTF-8"]
        let plan = try sandbox?.plan(program: path, arguments: arguments, folder: folder, inputs: inputs, asRoot: getuid() == 0)
        let executable = plan == nil ? path : sandbox.map(\.bwrap) ?? path
        let argv = (plan?.arguments ?? [program] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        let stageRoot: UnsafeMutablePointer<CChar>? = plan?.stageRoot.flatMap { strdup($0) }
        let stageSources = (plan?.stageSources ?? []).map { strdup($0) } + [nil]
        let stageTargets = (plan?.stageTargets ?? []).map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
            free(stageRoot)
            (stageSources + stageTargets).forEach { free($0) }
        }
        // A sandbox has a network namespace of its own.
        let network = sandbox == nil ? NetworkNamespace.shared.descriptor() ?? -1 : -1
        let pid = kiosk_spawn_isolated(executable, argv, envp, folder, folder + "/" + standardOutputName, folder + "/" + standardErrorName,
                                       network, max(1, limits.cpuSeconds), limits.memoryBytes, limits.outputBytes,
                                       stageRoot, stageSources.map { UnsafePointer($0) }, stageTargets.map { UnsafePointer($0) },
                                       plan?.uid ?? -1, plan?.gid ?? -1)
        guard pid > 0 else { throw SystemError("spawn", program, code: -pid) }
        var ending = wait(for: pid, seconds: limits.wallSeconds)
        // bwrap reports a program that a signal ended as exit status 128 + the signal.
        if sandbox != nil, case .exited(let status) = ending, (129...192).contains(status) { ending = .signaled(status - 128) }
        var outcome = ChildOutcome(ending: ending, errorText: errorTail(folder), seconds: FS.monotonic() - started)
        if case .exited = ending {
            let left = FS.treeSummary(folder)
            if let odd = left.odd {
                outcome.ending = .leftOddFile(odd)
            } else if left.bytes > limits.outputBytes {
                outcome.ending = .outputTooLarge(left.bytes)
            }
        }
        return outcome
    }

    // MARK: Spawning

    static func findProgram(_ name: String) -> String? {
        ["/usr/bin", "/bin", "/usr/sbin", "/sbin"].map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }

    /// `posix_spawn` in a new process group, signals at their defaults and unblocked, standard input from
    /// `input`, output to `/dev/null`, every other descriptor closed: the network namespace's holder.
    static func spawn(_ command: [String], environment: [String], folder: String, input: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        posix_spawn_file_actions_adddup2(&actions, input, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        guard kiosk_spawn_addchdir(&actions, folder) == 0, kiosk_spawn_addclosefrom(&actions, 3) == 0 else {
            throw SystemError("posix_spawn_file_actions", folder)
        }
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)   // SIGPIPE and the like: not ignored as here
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setpgroup(&attributes, 0)
        guard let flags = Int16(exactly: POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK) else {
            throw SystemError("posix_spawnattr_setflags", command[0], code: EINVAL)
        }
        posix_spawnattr_setflags(&attributes, flags)

        let argv = command.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, command[0], &actions, &attributes, argv, envp)
        guard status == 0 else { throw SystemError("posix_spawn", command[0], code: status) }
        return pid
    }

    // MARK: Waiting

    /// Waits for `pid` at most `seconds`, then kills its process group; always reaps it.
    static func wait(for pid: pid_t, seconds: Double) -> ChildOutcome.Ending {
        let deadline = FS.monotonic() + seconds
        var timedOut = false
        let pidfd = kiosk_pidfd_open(pid)
        defer { if pidfd >= 0 { close(pidfd) } }
        var delay: UInt32 = 1_000
        while true {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid {
                kill(-pid, SIGKILL)   // anything it started and left behind
                if timedOut { return .timedOut }
                let signal = status & 0x7F
                return signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
            }
            if reaped < 0 && errno != EINTR { return timedOut ? .timedOut : .signaled(SIGKILL) }
            let remaining = deadline - FS.monotonic()
            if remaining <= 0 {
                timedOut = true
                kill(-pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return .timedOut
            }
            if pidfd >= 0, let readable = Int16(exactly: POLLIN) {
                var entry = pollfd(fd: pidfd, events: readable, revents: 0)
                // Milliseconds, at most a minute (also when `seconds` is not a number).
                let milliseconds = Int32(exactly: min(remaining * 1000 + 1, 60_000).rounded(.towardZero)) ?? 60_000
                _ = poll(&entry, 1, milliseconds)
            } else {
                usleep(delay)   // an old kernel without pidfd_open: poll with a growing delay
                delay = min(delay * 2, 20_000)
            }
        }
    }

    /// The last bytes of the child's standard error, as one printable line.
    private static func errorTail(_ folder: String) -> String {
        guard let file = try? FS.open(folder + "/" + standardErrorName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK),
              let info = try? file.status(), FS.isRegular(info) else { return "" }
        let size = Int64(widening: info.st_size)
        let count = Int(widening: min(size, 400))
        guard let bytes = try? file.bytes(at: size - Int64(widening: count), count: count) else { return "" }
        let text = String(String(decoding: bytes, as: UTF8.self).unicodeScalars
            .map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
        return text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }
}

/// An empty network namespace for the children, made once and kept by a holder process rather than made
/// per child (`unshare -n` costs about 40 ms a run here; joining one with `setns` nothing to speak of).
/// The holder is `unshare -n cat` reading a pipe whose only writer is this process, so it ends when this
/// process does, however that happens; a holder that died is replaced at the next use (the descriptors of
/// earlier ones stay open: a child may be joining through one).
final class NetworkNamespace: @unchecked Sendable {
    static let shared = NetworkNamespace()

    private let lock = NIOLock()
    private var holder: (pid: pid_t, pipe: Int32, namespace: Int32)?
    /// Set when the namespace could not be made: children keep the host's network.
    private var unavailable = false

    /// A descriptor of the namespace (`/proc/<holder>/ns/net`, close-on-exec), starting the holder if
    /// needed; nil when no namespace can be made here.
    func descriptor() -> Int32? {
        lock.withLock {
            if let holder {
                var status: Int32 = 0
                if waitpid(holder.pid, &status, WNOHANG) == 0 { return holder.namespace }
                close(holder.pipe)
                self.holder = nil
            }
            guard !unavailable, let started = Self.start() else { unavailable = true; return nil }
            let namespace = open("/proc/\(started.pid)/ns/net", O_RDONLY | O_CLOEXEC)
            guard namespace >= 0 else {
                kill(started.pid, SIGKILL)
                _ = waitpid(started.pid, nil, 0)
                close(started.pipe)
                unavailable = true
                return nil
            }
            holder = (started.pid, started.pipe, namespace)
            return namespace
        }
    }

    private static func start() -> (pid: pid_t, pipe: Int32)? {
        guard let unshare = IsolatedProcess.findProgram("unshare") else { return nil }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let pid = try? IsolatedProcess.spawn([unshare, "-n", "--", "cat"], environment: ["PATH=/usr/bin:/bin"], folder: "/",
                                             input: fds[0])
        close(fds[0])
        guard let pid else { close(fds[1]); return nil }
        // Ready when its namespace is no longer ours; gone when unshare failed (no permission).
        let own = link("/proc/self/ns/net")
        for _ in 0..<400 {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) != 0 { close(fds[1]); return nil }
            if let theirs = link("/proc/\(pid)/ns/net"), theirs != own {
                // Past unshare: is it cat (the namespace made) rather than unshare still starting?
                if link("/proc/\(pid)/exe")?.hasSuffix("/cat") == true { return (pid, fds[1]) }
            }
            usleep(5_000)
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, nil, 0)
        close(fds[1])
        return nil
    }

    private static func link(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension FS {
    /// Bytes in the regular files below `path` (not following links); 0 when missing.
    package static func treeSize(_ path: String) -> Int64 { treeSummary(path).bytes }

    /// Bytes in the regular files below `path` (not following links; 0 when missing), and the first entry
    /// below it, relative to it, that is neither a regular file nor a folder, or is a folder that cannot
    /// be listed.
    package static func treeSummary(_ path: String, relative: String = "") -> (bytes: Int64, odd: String?) {
        guard let info = lstat(path) else { return (0, nil) }
        guard isDirectory(info) else { return isRegular(info) ? (Int64(widening: info.st_size), nil) : (0, relative) }
        guard let names = try? list(path) else { return (0, relative.isEmpty ? "." : relative) }
        var bytes: Int64 = 0
        var odd: String?
        for name in names {
            let below = treeSummary(path + "/" + name, relative: relative.isEmpty ? name : relative + "/" + name)
            bytes += below.bytes
            odd = odd ?? below.odd
        }
        return (bytes, odd)
    }
}
