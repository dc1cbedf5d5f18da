import CSystemCalls
import Foundation
@testable import KioskFiles
import KioskTestSupport
import Testing

/// The PDF tools' sandbox on real offenders: a "tool" that tries to reach the server's files, its
/// environment, the network and places outside its job folder, judged both from what it reports and from
/// outside; the runner's limits and outcomes under the sandbox; and the real poppler tools in it.
/// Skipped where no sandbox can be had, unless `KIOSK_REQUIRE_SANDBOX=1` makes that a failure.
/// Serialized: the hogs would otherwise run at once, on the cores the other suites share.
@Suite(.serialized, .enabled(if: TestSandbox.runs)) struct SandboxTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Samples").path
    static let asRoot = getuid() == 0

    /// A server-like layout in a fresh folder closed to others: `server/` with a database and an edition's
    /// file, `input/issue.pdf` (readable by anyone, its folder closed), and an empty `job/`.
    struct Layout {
        let base: String
        var server: String { base + "/server" }
        var database: String { server + "/kiosk.sqlite" }
        var edition: String { server + "/Editions/1/2025-06-01/pdf/001.pdf" }
        var input: String { base + "/input/issue.pdf" }
        var job: String { base + "/job" }
        let marker = String(UInt64.random(in: 1...UInt64.max), radix: 36)

        init(input contents: [UInt8]? = nil) throws {
            var template = Array("/tmp/kiosk-sandbox-test-XXXXXX".utf8CString)
            let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
            base = try #require(made.map { String(cString: $0) })
            for folder in [server + "/Editions/1/2025-06-01/pdf", base + "/input", job] {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            }
            try Data("SQLite format 3\u{0}secret-database-\(marker)".utf8).write(to: URL(fileURLWithPath: database))
            try Data("%PDF-1.4 secret-edition-\(marker)".utf8).write(to: URL(fileURLWithPath: edition))
            try Data(contents ?? Array("%PDF-1.4 the input \(marker)".utf8)).write(to: URL(fileURLWithPath: input))
            chmod(input, 0o644)
        }

        func remove() { try? FS.removeTree(base) }
        func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }
    }

    private func isolated(_ program: String, _ arguments: [String], in folder: String, inputs: [String] = [],
                          limits: ChildLimits = ChildLimits(), sandbox: Sandbox?) async throws -> ChildOutcome {
        try await onOwnThread {
            try IsolatedProcess.run(program, arguments, in: folder, inputs: inputs, limits: limits, sandbox: sandbox)
        }
    }

    /// A listening TCP socket on 127.0.0.1 (non-blocking) and its port.
    private func listener() throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 8) == 0
                && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// The offender: each attempt reported as `name=yes|no` in `report.txt` of its job folder, what it read
    /// of `/proc` environments in files there.
    static let offender = #"""
        server=$1 input=$2 parent=$3 port=$4 tmpfile=$5 rootfile=$6
        say() { echo "$1=$2" >> report.txt; }
        check() { name=$1; shift; if "$@" >/dev/null 2>&1; then say "$name" yes; else say "$name" no; fi; }
        check read-database cat "$server/kiosk.sqlite"
        check read-edition cat "$server/Editions/1/2025-06-01/pdf/001.pdf"
        check list-server ls "$server"
        cat "/proc/$parent/environ" > parent-environ.txt 2>/dev/null
        cat /proc/1/environ > init-environ.txt 2>/dev/null
        cat /proc/*/environ > all-environ.txt 2>/dev/null
        check write-server sh -c "echo planted > '$server/planted'"
        check write-tmp sh -c "echo planted > '$tmpfile'"
        check write-input-folder sh -c "echo planted > '$(dirname "$input")/planted'"
        check write-input sh -c "echo planted >> '$input'"
        check write-root sh -c "echo planted > '$rootfile'"
        check connect python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 3)"
        say uid "$(id -u)"
        check read-input cp "$input" copy.pdf
        check write-job sh -c "echo made > made.txt"
        """#

    private func report(_ layout: Layout) -> [String: String] {
        let lines = (layout.read(layout.job + "/report.txt") ?? "").split(separator: "\n")
        return Dictionary(lines.compactMap { line in
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            return parts.count == 2 ? (parts[0], parts[1]) : nil
        }, uniquingKeysWith: { $1 })
    }

    @Test func aHostileToolReachesOnlyItsJobFolderAndItsInput() async throws {
        let sandbox = try TestSandbox.require()
        let layout = try Layout()
        defer { layout.remove() }
        let secret = "sandbox-secret-\(layout.marker)"
        setenv("KIOSK_SECRET_FOR_THE_SANDBOX_TEST", secret, 1)
        let (listening, port) = try listener()
        defer { close(listening) }
        let tmpFile = "/tmp/kiosk-sandbox-planted-\(layout.marker)", rootFile = "/kiosk-sandbox-planted-\(layout.marker)"
        defer { unlink(tmpFile); unlink(rootFile) }
        let inputBefore = layout.read(layout.input)

        let outcome = try await isolated("/bin/sh", ["-c", Self.offender, "offender", layout.server, layout.input, String(getpid()),
                                                     String(port), tmpFile, rootFile],
                                         in: layout.job, inputs: [layout.input], sandbox: sandbox)
        #expect(outcome.succeeded, "\(outcome.summary): \(outcome.errorText)")
        let report = report(layout)

        // What it says it could not do.
        for attempt in ["read-database", "read-edition", "list-server", "write-server", "write-tmp", "write-input-folder",
                        "write-input", "write-root", "connect"] {
            #expect(report[attempt] == "no", "\(attempt): \(report[attempt] ?? "not reported")")
        }
        // What it could.
        #expect(report["read-input"] == "yes" && report["write-job"] == "yes", "\(report)")
        #expect(layout.read(layout.job + "/copy.pdf") == inputBefore)
        #expect(layout.read(layout.job + "/made.txt") == "made\n")
        // Its environment files hold none of this process's environment.
        for name in ["parent-environ.txt", "init-environ.txt", "all-environ.txt"] {
            #expect(!(layout.read(layout.job + "/" + name) ?? "").contains(secret), "\(name) holds the secret")
        }
        #expect(!(layout.read(layout.job + "/all-environ.txt") ?? "").contains("KIOSK_SECRET"))
        // Who it was: the sandbox's user inside, and outside too when this process is root.
        #expect(report["uid"] == String(sandbox.uid) && report["uid"] != "0", "uid inside: \(report["uid"] ?? "not reported")")
        if Self.asRoot {
            let made = try #require(FS.lstat(layout.job + "/made.txt"))
            #expect(made.st_uid == sandbox.uid && made.st_uid != 0, "made.txt is owned by uid \(made.st_uid) outside")
        }

        // From outside: nothing planted, the input unchanged, no connection made.
        for planted in [layout.server + "/planted", tmpFile, layout.base + "/input/planted", rootFile] {
            #expect(!FS.exists(planted), "\(planted) was written")
        }
        #expect(layout.read(layout.input) == inputBefore)
        #expect(accept(listening, nil, nil) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK), "the tool connected to the listener")
    }

    @Test func withoutTheSandboxTheSameToolReachesTheServersFiles() async throws {
        // The control: the offender's probes do find what is there when nothing stops them (its writes
        // outside the layout go to /dev/null here).
        let layout = try Layout()
        defer { layout.remove() }
        let outcome = try await isolated("/bin/sh", ["-c", Self.offender, "offender", layout.server, layout.input, String(getpid()),
                                                     "9", "/dev/null", "/dev/null"],
                                         in: layout.job, sandbox: nil)
        #expect(outcome.succeeded)
        let report = report(layout)
        #expect(report["read-database"] == "yes" && report["read-edition"] == "yes" && report["write-server"] == "yes", "\(report)")
        #expect(FS.exists(layout.server + "/planted"))
    }

    @Test func aQuickProgramRunsInItsJobFolderWithACleanEnvironment() async throws {
        let sandbox = try TestSandbox.require()
        let layout = try Layout()
        defer { layout.remove() }
        setenv("KIOSK_SECRET_FOR_THE_SANDBOX_TEST", "do-not-leak", 1)
        let outcome = try await isolated("sh", ["-c", "pwd; env | sort; echo oops >&2"], in: layout.job, sandbox: sandbox)
        #expect(outcome.succeeded)
        #expect(outcome.errorText == "oops")
        let lines = (layout.read(layout.job + "/" + IsolatedProcess.standardOutputName) ?? "").split(separator: "\n").map(String.init)
        #expect(lines.first == layout.job)
        let environment = Set(lines.dropFirst().filter { !$0.hasPrefix("PWD=") && !$0.hasPrefix("SHLVL=") && !$0.hasPrefix("_=") })
        #expect(environment == ["PATH=/usr/bin:/bin", "HOME=\(layout.job)", "TMPDIR=\(layout.job)", "LC_ALL=C.UTF-8"], "\(environment)")
    }

    @Test func exitStatusesAndSignalsAreThoseOfTheProgram() async throws {
        let sandbox = try TestSandbox.require()
        let layout = try Layout()
        defer { layout.remove() }
        #expect(try await isolated("sh", ["-c", "exit 7"], in: layout.job, sandbox: sandbox).ending == .exited(7))
        #expect(try await isolated("sh", ["-c", "kill -SEGV $$"], in: layout.job, sandbox: sandbox).ending == .signaled(SIGSEGV))
    }

    @Test func aHangingProgramIsKilledAtTheWallClockLimitWithEverythingItStarted() async throws {
        let sandbox = try TestSandbox.require()
        let layout = try Layout()
        defer { layout.remove() }
        let seconds = String(4000 + Int.random(in: 0..<1000))
        let started = Date()
        let outcome = try await isolated("sh", ["-c", "sleep \(seconds) & sleep \(seconds)"], in: layout.job,
                                         limits: ChildLimits(wallSeconds: 1), sandbox: sandbox)
        #expect(outcome.ending == .timedOut)
        #expect(Date().timeIntervalSince(started) < 20)
        try await Task.sleep(for: .milliseconds(300))
        // No sleeper left running anywhere on the host (a zombie waiting to be reaped is not running).
        let survivors = try FS.list("/proc").compactMap(Int32.init).filter { pid in
            guard let command = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")),
                  String(decoding: command, as: UTF8.self) == "sleep\u{0}\(seconds)\u{0}" else { return false }
            let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: ")").last?
                .split(separator: " ").first
            return state != nil && state != "Z"
        }
        #expect(survivors.isEmpty, "sleepers survived: \(survivors)")
    }

    @Test func theLimitsApplyInside() async throws {
        let sandbox = try TestSandbox.require()
        let layout = try Layout()
        defer { layout.remove() }
        let bomb = try await isolated("yes", [], in: layout.job, limits: ChildLimits(outputBytes: 1 << 20, wallSeconds: 30), sandbox: sandbox)
        #expect(bomb.ending == .signaled(SIGXFSZ))
        #expect(FS.treeSize(layout.job) <= 1 << 20)
        let many = try await isolated("sh", ["-c", "for i in 1 2 3 4 5 6 7 8; do head -c 500000 /dev/zero > f$i; done"],
                                      in: layout.job, limits: ChildLimits(outputBytes: 1 << 20, wallSeconds: 30), sandbox: sandbox)
        guard case .outputTooLarge(let bytes) = many.ending else { Issue.record("\(many.ending)"); return }
        #expect(bytes >= 4_000_000)
        let hog = try await isolated("sh", ["-c", "while :; do :; done"], in: layout.job,
                                     limits: ChildLimits(cpuSeconds: 1, wallSeconds: 30), sandbox: sandbox)
        #expect(hog.ending == .signaled(SIGXCPU) || hog.ending == .signaled(SIGKILL), "\(hog.ending)")
        let memory = try await isolated("python3", ["-c", "x = bytearray(2 * 1024 ** 3); print('allocated')"], in: layout.job,
                                        limits: ChildLimits(memoryBytes: 256 << 20), sandbox: sandbox)
        #expect(!memory.succeeded && memory.errorText.contains("MemoryError"), "\(memory.summary): \(memory.errorText)")
    }

    @Test func linksAndPipesLeftInTheJobFolderAreRefused() async throws {
        let sandbox = try TestSandbox.require()
        let layout = try Layout()
        defer { layout.remove() }
        // A link the server would follow when reading its output back (here to the database beside it).
        let linked = try await isolated("sh", ["-c", "ln -s '\(layout.database)' text.txt"], in: layout.job, sandbox: sandbox)
        #expect(linked.ending == .leftOddFile("text.txt"))
        let piped = try await isolated("sh", ["-c", "rm -f text.txt; mkdir -p out; mkfifo out/image.jpg"], in: layout.job, sandbox: sandbox)
        #expect(piped.ending == .leftOddFile("out/image.jpg"))
        // Standard error replaced by a link: its tail is not read through it.
        let swapped = try await isolated("sh", ["-c", "rm -rf out _stderr; ln -s '\(layout.database)' _stderr"], in: layout.job,
                                         sandbox: sandbox)
        #expect(swapped.ending == .leftOddFile(IsolatedProcess.standardErrorName))
        #expect(!swapped.errorText.contains("secret-database"))
    }

    @Test func inputsMustBeAbsoluteAndReadableByTheSandboxUser() async throws {
        let sandbox = try TestSandbox.require()
        let layout = try Layout()
        defer { layout.remove() }
        #expect(throws: SandboxError.relativePath("input/issue.pdf")) {
            try IsolatedProcess.run("/bin/true", [], in: layout.job, inputs: ["input/issue.pdf"], limits: ChildLimits(), sandbox: sandbox)
        }
        #expect(throws: SandboxError.self) {
            try IsolatedProcess.run("/bin/true", [], in: layout.job, inputs: [layout.base + "/missing.pdf"], limits: ChildLimits(),
                                    sandbox: sandbox)
        }
        if Self.asRoot {
            chmod(layout.input, 0o600)
            #expect(throws: SandboxError.unreadableInput(path: layout.input, uid: sandbox.uid)) {
                try IsolatedProcess.run("/bin/true", [], in: layout.job, inputs: [layout.input], limits: ChildLimits(), sandbox: sandbox)
            }
        }
    }

    @Test func theRealPopplerToolsWorkInTheSandbox() async throws {
        let sandbox = try TestSandbox.require()
        let page = try Array(Data(contentsOf: URL(fileURLWithPath: Self.samples + "/1/2025-06-01/pdf/001.pdf")))
        let layout = try Layout(input: page)
        defer { layout.remove() }
        let info = try await isolated("pdfinfo", [layout.input], in: layout.job, inputs: [layout.input], sandbox: sandbox)
        #expect(info.succeeded, "\(info.summary): \(info.errorText)")
        #expect((layout.read(layout.job + "/" + IsolatedProcess.standardOutputName) ?? "").contains("Pages:           1"))

        let job = layout.base + "/render"
        try FileManager.default.createDirectory(atPath: job, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let render = try await isolated("pdftoppm", ["-jpeg", "-scale-to-x", "150", "-scale-to-y", "200", "-singlefile", layout.input, "image"],
                                        in: job, inputs: [layout.input], sandbox: sandbox)
        #expect(render.succeeded, "\(render.summary): \(render.errorText)")
        let image = try Data(contentsOf: URL(fileURLWithPath: job + "/image.jpg"))
        #expect(image.starts(with: [0xFF, 0xD8, 0xFF]))
        if Self.asRoot { #expect(FS.lstat(job + "/image.jpg")?.st_uid == sandbox.uid) }
    }
}
