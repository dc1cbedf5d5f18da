import CSystemCalls
import Foundation
import KioskIntegers

#if canImport(Glibc)
import Glibc
#endif

/// A bubblewrap (`bwrap`) sandbox for the children of `IsolatedProcess`. The program sees a root of its
/// own holding only `system` (read-only: the tools, their libraries and data), its working folder
/// (writable) and its inputs (read-only), each at its host path so that arguments stay valid, a fresh
/// `/proc` of its own PID namespace and a minimal `/dev`; the rest of that root is empty and read-only.
/// It shares no namespace with the server (`--unshare-all`: no network, IPC, PIDs, host name), runs in
/// a session of its own, dies with the server, and is `uid`:`gid`.
///
/// When the server runs as root the child's real ids outside are `uid`:`gid` as well: it drops to them
/// before `bwrap` starts (which then makes an unprivileged user namespace), after showing it its folder
/// and inputs through a private mount namespace (it could not search the server's folders above them).
/// Its working folder is given to that user, and its inputs must be readable by it. When the server is
/// not root, the child keeps the server's ids outside and is `uid`:`gid` only inside its user namespace;
/// it still reaches nothing it is not shown.
public struct Sandbox: Sendable, Hashable {
    /// What the sandbox shows of the host besides the working folder and the inputs.
    public enum Mount: Sendable, Hashable {
        /// A host path at the same place, read-only; skipped when the host has none.
        case readOnly(String)
        /// A symbolic link at `path` to `target` (a merged-`/usr` system's `/bin`, `/lib`, …).
        case symlink(target: String, path: String)
    }

    /// The `bwrap` program.
    public var bwrap: String
    /// The user and group the program runs as.
    public var uid: UInt32
    public var gid: UInt32
    public var system: [Mount]

    public init(bwrap: String, uid: UInt32, gid: UInt32, system: [Mount] = Sandbox.hostSystem()) {
        self.bwrap = bwrap; self.uid = uid; self.gid = gid; self.system = system
    }

    /// `/usr` and the top-level folders or links to it (`/bin`, `/sbin`, `/lib*`), the dynamic linker's
    /// cache and fontconfig's configuration and cache: what poppler-utils and qpdf need (their data,
    /// `/usr/share/poppler` and `/usr/share/fonts`, is under `/usr`).
    public static func hostSystem() -> [Mount] {
        var mounts: [Mount] = [.readOnly("/usr")]
        for name in ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"] {
            guard let info = FS.lstat(name) else { continue }
            if info.st_mode & S_IFMT == S_IFLNK, let target = try? FileManager.default.destinationOfSymbolicLink(atPath: name) {
                mounts.append(.symlink(target: target, path: name))
            } else if FS.isDirectory(info) {
                mounts.append(.readOnly(name))
            }
        }
        return mounts + ["/etc/ld.so.cache", "/etc/fonts", "/etc/alternatives", "/var/cache/fontconfig"].map(Mount.readOnly)
    }

    /// The sandbox of `bwrap` (a path; nil: the first `bwrap` on `PATH`, then in `/usr/bin` and `/bin`) for
    /// `user` (a name, or a numeric uid whose gid is the same), once a program has run in it here
    /// (`probe`).
    public static func prepare(bwrap configured: String? = nil, user: String = "nobody") throws(SandboxError) -> Sandbox {
        let bwrap = try findBwrap(configured)
        let ids = try userIDs(user)
        let sandbox = Sandbox(bwrap: bwrap, uid: ids.uid, gid: ids.gid)
        try sandbox.probe()
        return sandbox
    }

    /// Runs `/bin/true` in the sandbox, in a temporary folder; throws what stopped it.
    public func probe() throws(SandboxError) {
        var template = Array("/tmp/kiosk-sandbox-probe-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let path = buffer.baseAddress.flatMap({ mkdtemp($0) }) else { return nil }   // the template, filled in
            return String(cString: path)
        }
        guard let folder = made else {
            throw .cannotStart(bwrap: bwrap, reason: "no temporary folder for the probe: \(String(cString: strerror(errno)))")
        }
        defer { try? FS.removeTree(folder) }
        let outcome: ChildOutcome
        do {
            outcome = try IsolatedProcess.run("/bin/true", [], in: folder, inputs: [], limits: ChildLimits(wallSeconds: 20), sandbox: self)
        } catch {
            throw .cannotStart(bwrap: bwrap, reason: "\(error)")
        }
        guard outcome.succeeded else {
            throw .cannotStart(bwrap: bwrap, reason: outcome.errorText.isEmpty ? outcome.summary : outcome.errorText)
        }
    }

    static func findBwrap(_ configured: String?) throws(SandboxError) -> String {
        if let configured, !configured.isEmpty {
            guard configured.hasPrefix("/"), access(configured, X_OK) == 0 else { throw .bwrapMissing(searched: configured) }
            return configured
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") } + ["/usr/bin", "/bin"]
        guard let found = folders.map({ $0 + "/bwrap" }).first(where: { access($0, X_OK) == 0 }) else {
            throw .bwrapMissing(searched: folders.joined(separator: ":"))
        }
        return found
    }

    static func userIDs(_ user: String) throws(SandboxError) -> (uid: UInt32, gid: UInt32) {
        if let uid = UInt32(user) {
            guard uid != 0 else { throw .rootUser(user) }
            return (uid, uid)
        }
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        let status = getpwnam_r(user, &entry, &buffer, buffer.count, &result)
        guard status == 0, result != nil else {
            if user == "nobody" { return (65534, 65534) }   // the kernel's overflow ids, where no passwd names them
            throw .unknownUser(user)
        }
        guard entry.pw_uid != 0 else { throw .rootUser(user) }
        return (entry.pw_uid, entry.pw_gid)
    }

    // MARK: One run

    /// Where the child, when the server is root, shows itself the folder and inputs before dropping its ids:
    /// a tmpfs of its private mount namespace (bwrap later mounts its own root here and reaches this one
    /// below it).
    static let stageRoot = "/tmp"

    /// How to start one program in the sandbox.
    struct Plan {
        /// `bwrap` and its arguments, the program's last.
        var arguments: [String]
        /// For a server running as root: what the child stages (`kiosk_spawn_isolated`) and the ids it drops to.
        var stageRoot: String?
        var stageSources: [String] = []
        var stageTargets: [String] = []
        var uid = -1
        var gid = -1
    }

    /// The plan to run `program` (a path) in `folder` with `inputs`, as root (`asRoot`) or not. As root it
    /// gives `folder` to the sandbox's user. Throws when a path is relative or an input is not readable.
    func plan(program: String, arguments: [String], folder: String, inputs: [String], asRoot: Bool) throws -> Plan {
        for path in [program, folder] + inputs where !path.hasPrefix("/") { throw SandboxError.relativePath(path) }
        var shown: [String] = []
        for input in inputs + (covers(program) ? [] : [program]) where !shown.contains(input) { shown.append(input) }
        guard shown.count < Int(widening: KIOSK_MAX_STAGED) else { throw SandboxError.tooManyInputs(shown.count) }
        for input in shown where !readable(input, asRoot: asRoot) {
            throw SandboxError.unreadableInput(path: input, uid: asRoot ? uid : getuid())
        }
        var plan = Plan(arguments: [bwrap, "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session",
                                    "--uid", String(uid), "--gid", String(gid)])
        for mount in system {
            switch mount {
            case .readOnly(let path): plan.arguments += ["--ro-bind-try", path, path]
            case .symlink(let target, let path): plan.arguments += ["--symlink", target, path]
            }
        }
        plan.arguments += ["--proc", "/proc", "--dev", "/dev"]
        var sources = [folder] + shown
        if asRoot {
            guard chown(folder, uid, gid) == 0 else { throw SystemError("chown", folder) }
            plan.stageRoot = Self.stageRoot
            plan.stageSources = sources
            plan.stageTargets = sources.indices.map { "\(Self.stageRoot)/\($0)" }
            sources = plan.stageTargets
        }
        plan.arguments += ["--bind", sources[0], folder]
        for (index, input) in shown.enumerated() { plan.arguments += ["--ro-bind", sources[index + 1], input] }
        plan.arguments += ["--remount-ro", "/", "--chdir", folder, "--", program] + arguments
        if asRoot { plan.uid = Int(widening: uid); plan.gid = Int(widening: gid) }
        return plan
    }

    /// True when `path` is inside what `system` shows.
    func covers(_ path: String) -> Bool {
        system.contains { mount in
            switch mount {
            case .readOnly(let shown), .symlink(_, let shown): path.hasPrefix(shown + "/")
            }
        }
    }

    /// Whether the program can read `path`: by the sandbox's ids (as root), else by this process's.
    private func readable(_ path: String, asRoot: Bool) -> Bool {
        guard asRoot else { return access(path, R_OK) == 0 }
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        if info.st_uid == uid { return info.st_mode & S_IRUSR != 0 }
        if info.st_gid == gid { return info.st_mode & S_IRGRP != 0 }
        return info.st_mode & S_IROTH != 0
    }
}

/// Why a sandbox cannot be had, or a sandboxed run cannot start.
public enum SandboxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No `bwrap` program where it was looked for.
    case bwrapMissing(searched: String)
    /// The sandbox's user is not known here.
    case unknownUser(String)
    /// The sandbox's user is root, which would defeat it.
    case rootUser(String)
    /// `bwrap` is there but could not make a sandbox.
    case cannotStart(bwrap: String, reason: String)
    /// A path given to a sandboxed run is relative.
    case relativePath(String)
    /// An input of a sandboxed run is missing or not readable by the user it runs as.
    case unreadableInput(path: String, uid: UInt32)
    /// More inputs than a sandboxed run can be shown.
    case tooManyInputs(Int)

    public var description: String {
        switch self {
        case .bwrapMissing(let searched):
            "bubblewrap (bwrap) was not found (looked in \(searched)); install it (Debian: apt-get install bubblewrap) "
                + "or set pdf.bwrap to its absolute path"
        case .unknownUser(let user):
            "the sandbox user \(user) is not known here; create it, or set pdf.sandbox_user to an unprivileged user or numeric uid"
        case .rootUser(let user):
            "the sandbox user \(user) is root, which would defeat the sandbox; set pdf.sandbox_user to an unprivileged user"
        case .cannotStart(let bwrap, let reason):
            "\(bwrap) could not make a sandbox here: \(reason). It needs user namespaces (sysctl user.max_user_namespaces "
                + "above 0; in a container, one allowed to make them) and, for a server running as root, mount namespaces"
        case .relativePath(let path):
            "\(path) is not an absolute path; a sandboxed run shows every path at the same place inside"
        case .unreadableInput(let path, let uid):
            "\(path) is missing or not readable by uid \(uid), the user the sandboxed program runs as; make it readable "
                + "by that user (its folders may stay closed to others)"
        case .tooManyInputs(let count):
            "a sandboxed run can be shown at most \(Int(widening: KIOSK_MAX_STAGED) - 1) inputs, not \(count)"
        }
    }
}
