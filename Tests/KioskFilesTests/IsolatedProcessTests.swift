import Foundation
@testable import KioskFiles
import KioskTestSupport
import Testing

/// The child-process runner on real programs: each limit stops a real offender, and the child sees
/// nothing of the server but its own folder.
/// Serialized: the CPU and output hogs would otherwise run at once, on the cores the other suites share.
@Suite(.serialized) struct IsolatedProcessTests {
    /// A fresh folder for one child.
    private func folder() -> String {
        var template = Array("/tmp/kiosk-child-XXXXXX".utf8CString)
        let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(result != nil)
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// `IsolatedProcess.run`, waited for on a thread of its own rather than one the other suites' tasks share.
    private func isolated(_ program: String, _ arguments: [String], in folder: String, limits: ChildLimits) async throws -> ChildOutcome {
        try await onOwnThread { try IsolatedProcess.run(program, arguments, in: folder, limits: limits) }
    }

    private func output(_ folder: String) -> String {
        (try? String(contentsOfFile: folder + "/" + IsolatedProcess.standardOutputName, encoding: .utf8)) ?? ""
    }

    @Test func aQuickProgramSucceedsInItsOwnFolder() async throws {
        let dir = folder()
        defer { try? FS.removeTree(dir) }
        let outcome = try await isolated("sh", ["-c", "pwd; echo done > made.txt; echo oops >&2"], in: dir, limits: ChildLimits())
        #expect(outcome.succeeded)
        #expect(output(dir) == dir + "\n")
        #expect(FileManager.default.fileExists(atPath: dir + "/made.txt"))
        #expect(outcome.errorText == "oops")
    }

    @Test func aFailingProgramReportsItsStatus() async throws {
        let dir = folder()
        defer { try? FS.removeTree(dir) }
        let outcome = try await isolated("sh", ["-c", "exit 7"], in: dir, limits: ChildLimits())
        #expect(outcome.ending == .exited(7))
        #expect(outcome.summary == "exit status 7")
    }

    @Test func aCrashIsReportedAsTheSignal() async throws {
        let dir = folder()
        defer { try? FS.removeTree(dir) }
        let outcome = try await isolated("sh", ["-c", "kill -SEGV $$"], in: dir, limits: ChildLimits())
        #expect(outcome.ending == .signaled(SIGSEGV))
        #expect(outcome.summary == "killed by signal \(SIGSEGV) (crashed)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/core"))
    }

    /// A wall limit that is not a number (or infinite) leaves the child to finish: the wait's poll timeout
    /// is capped at a minute instead of converting NaN to milliseconds.
    @Test func aWallLimitThatIsNotANumberWaitsForTheChild() async throws {
        for seconds in [Double.nan, .infinity] {
            let dir = folder()
            defer { try? FS.removeTree(dir) }
            let outcome = try await isolated("sh", ["-c", "sleep 0.2; echo done"], in: dir, limits: ChildLimits(wallSeconds: seconds))
            #expect(outcome.succeeded, "wall limit \(seconds)")
            #expect(output(dir) == "done\n")
        }
    }

    @Test func aMissingProgramOrFolderIsAnErrorNotAChild() async throws {
        let dir = folder()
        defer { try? FS.removeTree(dir) }
        #expect(throws: SystemError.self) { try IsolatedProcess.run("no-such-tool-here", [], in: dir, limits: ChildLimits()) }
        #expect(throws: SystemError.self) { try IsolatedProcess.run("/bin/true", [], in: dir + "/missing", limits: ChildLimits()) }
    }

    @Test func aHangingProgramIsKilledAtTheWallClockLimitWithItsChildren() async throws {
        let dir = folder()
        defer { try? FS.removeTree(dir) }
        let started = Date()
        // The shell starts a second sleeper in the background: the whole group goes.
        let outcome = try await isolated("sh", ["-c", "sleep 100 & echo $! > bg.pid; sleep 100"], in: dir,
                                              limits: ChildLimits(wallSeconds: 1))
        #expect(outcome.ending == .timedOut)
        #expect(Date().timeIntervalSince(started) < 20, "killed at 1 s, long before the sleeps end at 100 s")
        let background = try #require(Int32((try String(contentsOfFile: dir + "/bg.pid", encoding: .utf8))
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        try await Task.sleep(for: .milliseconds(200))
        // Gone, or a zombie waiting for whoever reaps orphans here: either way, not running.
        let state = (try? String(contentsOfFile: "/proc/\(background)/stat", encoding: .utf8))?
            .split(separator: ")").last?.split(separator: " ").first
        #expect(state == nil || state == "Z", "the background sleeper survived: state \(state ?? "")")
    }

    @Test func aMemoryHogFailsUnderTheAddressSpaceLimit() async throws {
        let dir = folder()
        defer { try? FS.removeTree(dir) }
        let outcome = try await isolated("python3", ["-c", "x = bytearray(2 * 1024 ** 3); print('allocated')"], in: dir,
                                              limits: ChildLimits(memoryBytes: 256 << 20))
        #expect(!outcome.succeeded)
        #expect(!output(dir).contains("allocated"))
        #expect(outcome.errorText.contains("MemoryError"))
    }

    @Test func aProcessorHogIsStoppedAtTheCPULimit() async throws {
        let dir = folder()
        defer { try? FS.removeTree(dir) }
        let started = Date()
        let outcome = try await isolated("sh", ["-c", "while :; do :; done"], in: dir,
                                              limits: ChildLimits(cpuSeconds: 1, wallSeconds: 30))
        #expect(outcome.ending == .signaled(SIGXCPU) || outcome.ending == .signaled(SIGKILL))
        // Stopped by the CPU limit, not the wall one: well before 30 s even when a loaded machine gives it a
        // fraction of a core.
        #expect(Date().timeIntervalSince(started) < 25)
    }

    @Test func anOutputBombStopsAtTheFileSizeLimit() async throws {
        let dir = folder()
        defer { try? FS.removeTree(dir) }
        // `yes` writes to standard output, a file of the child's folder.
        let outcome = try await isolated("yes", [], in: dir, limits: ChildLimits(outputBytes: 1 << 20, wallSeconds: 30))
        #expect(outcome.ending == .signaled(SIGXFSZ))
        #expect(FS.treeSize(dir) <= 1 << 20)
        // Many files, each under the limit: the folder's total is checked when it ends.
        let many = try await isolated("sh", ["-c", "for i in 1 2 3 4 5 6 7 8; do head -c 500000 /dev/zero > f$i; done"],
                                           in: dir, limits: ChildLimits(outputBytes: 1 << 20, wallSeconds: 30))
        guard case .outputTooLarge(let bytes) = many.ending else { Issue.record("\(many.ending)"); return }
        #expect(bytes >= 4_000_000)
    }

    @Test func aLinkOrPipeLeftInItsFolderIsReportedNotFollowed() async throws {
        let dir = folder()
        defer { try? FS.removeTree(dir) }
        let linked = try await isolated("sh", ["-c", "ln -s /etc/hostname out.txt"], in: dir, limits: ChildLimits())
        #expect(linked.ending == .leftOddFile("out.txt"))
        #expect(linked.summary == "left out.txt, neither a regular file nor a folder")
        let piped = try await isolated("sh", ["-c", "rm out.txt; mkfifo pipe"], in: dir, limits: ChildLimits())
        #expect(piped.ending == .leftOddFile("pipe"))
    }

    @Test func theChildSeesNoEnvironmentDescriptorsOrNetwork() async throws {
        let dir = folder()
        defer { try? FS.removeTree(dir) }
        setenv("KIOSK_SECRET_FOR_THE_TEST", "do-not-leak", 1)
        let leaked = open("/etc/hostname", O_RDONLY)   // without O_CLOEXEC: would be inherited
        defer { close(leaked) }
        let outcome = try await isolated("sh", ["-c", "env | sort; ls /proc/self/fd | sort -n | tr '\\n' ' '; echo; "
                                                     + "read line; echo \"stdin:$line\"; cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '"],
                                              in: dir, limits: ChildLimits())
        #expect(outcome.succeeded)
        let lines = output(dir).split(separator: "\n").map(String.init)
        let environment = lines.filter { $0.contains("=") }
        #expect(!environment.contains { $0.contains("KIOSK_SECRET") })
        #expect(environment.contains("PATH=/usr/bin:/bin"))
        #expect(environment.contains("TMPDIR=\(dir)"))
        // sh's own descriptors: 0, 1, 2 and the one `ls` reads the folder with.
        let descriptors = try #require(lines.first { $0.hasPrefix("0 1 2") })
        #expect(descriptors.split(separator: " ").count <= 4, "inherited descriptors: \(descriptors)")
        #expect(lines.contains("stdin:"))
        if IsolatedProcess.isolatesNetwork {
            #expect(lines.last == "lo", "network interfaces: \(lines)")
        }
    }
}
