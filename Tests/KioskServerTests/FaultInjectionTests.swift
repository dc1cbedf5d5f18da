import Foundation
import KioskTestSupport
import Testing
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles

/// Faults from below the server: a full editions disk and a locked database. Each must fail the one
/// operation with a clear answer, change nothing, and leave the server serving.
@Suite struct FaultInjectionTests {
    static let environment = ["KIOSK_SECRET": String(repeating: "f", count: 40)]

    /// Mounting a small tmpfs needs root (CI runs as root); elsewhere the disk-full test is skipped.
    static let canMountTmpfs: Bool = {
        guard getuid() == 0 else { return false }
        let probe = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: probe) }
        guard (try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true)) != nil,
              run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe.path]) else { return false }
        return run("/bin/umount", [probe.path])
    }()

    /// Runs `mount` or `umount` (quick) and says whether it succeeded.
    static func run(_ tool: String, _ arguments: [String]) -> Bool {
        (try? ChildProcess(tool, arguments).waitUntilExit()) == 0
    }

    @Test(.enabled(if: canMountTmpfs, "needs root to mount a small tmpfs as the editions directory"))
    func fullDiskFailsThePublishCleanlyAndSaysSo() async throws {
        let directory = temporaryDirectory()
        let editions = directory.path + "/Editions"
        try FileManager.default.createDirectory(atPath: editions, withIntermediateDirectories: true)
        try #require(Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", editions]))
        defer {
            _ = Self.run("/bin/umount", [editions])
            try? FileManager.default.removeItem(at: directory)
        }
        let config = try writeTestConfiguration(in: directory)
        let small = try await IssueFolders.writeIssue(directory.path + "/small", pages: 3)
        let large = try await IssueFolders.writeIssue(directory.path + "/large", pages: 120)   // ~5.6 MB
        func publish(_ folder: String, date: String) async throws -> (Int32, String) {
            let (status, _, errors) = try await ServerProcess.run(
                ["publish", "--quiet", "--config", config, "--edition", "8", "--date", date, folder], environment: Self.environment)
            return (status, errors)
        }
        func used() throws -> UInt64 {
            var info = statvfs()
            try #require(statvfs(editions, &info) == 0)
            return UInt64(info.f_blocks - info.f_bfree) * UInt64(info.f_frsize)
        }
        let (firstStatus, firstErrors) = try await publish(small, date: "2025-07-01")
        try #require(firstStatus == 0, "\(firstErrors)")
        let before = try used()

        // Through the CLI: a new date and a republish of the existing one.
        for date in ["2025-07-02", "2025-07-01"] {
            let (status, errors) = try await publish(large, date: date)
            #expect(status != 0)
            #expect(errors.contains("the editions disk is full"), "\(errors)")
            #expect(errors.contains("No space left on device"), "\(errors)")
            #expect(errors.contains("nothing was published"), "\(errors)")
            #expect(try used() == before, "the failed publish of \(date) left files behind")
        }

        // Over HTTP: 507 with a message, and the server still serves the issue it had.
        let archive = directory.path + "/large.zip"
        try await runClient("python3", ["-c", "import shutil, sys; shutil.make_archive(sys.argv[1], 'zip', sys.argv[2])",
                                        String(archive.dropLast(4)), large])
        let server = try await ServerProcess(["--config", config], environment: Self.environment)
        let answer = try await runClient("curl", ["-s", "-u", "publisher:publisher-secret", "-T", archive,
                                                  "-w", "\n%{http_code}", "http://127.0.0.1:\(server.port)/publish/8/2025-07-03"])
        #expect(answer.hasSuffix("\n507"), "\(answer)")
        #expect(answer.contains("editions disk is full"), "\(answer)")
        #expect(try used() == before, "the failed upload left files behind")
        let issue = try await python(server.port, """
            i = p.epquiosc.getEdicio("quiosc", "", 8, "2025-07-01", "0", "ios")
            import urllib.request, hashlib
            data = urllib.request.urlopen(i["zip"]).read()
            result = [len(i["pagines"]), hashlib.sha256(data).hexdigest() == i["zip_sha256"],
                      [e["data"] for e in p.epquiosc.getDarrersEdicio("quiosc", "", 8, "", 10, "DESC")]]
            """).value as? [Any]
        #expect(issue?[0] as? Int == 3)
        #expect(issue?[1] as? Bool == true)
        #expect(issue?[2] as? [String] == ["2025-07-01"])
        server.signal(SIGTERM)
        _ = try await server.waitForExit()
        let report = try await runClient("python3", [TestKiosk.repositoryRoot + "/Tests/Clients/crash_check.py",
                                                     directory.path + "/kiosk.sqlite", editions, "/nonexistent", "0", "--clean"])
        #expect(report.contains("\"problems\": []"), "\(report)")
    }

    @Test func lockedDatabaseFailsWritesWithInternalErrorAfterTheBoundedWait() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try writeTestConfiguration(in: directory) {
            $0.replacingOccurrences(of: "database_busy_timeout_seconds: 5", with: "database_busy_timeout_seconds: 1")
        }
        let server = try await ServerProcess(["--config", config], environment: Self.environment)
        let result = try await python(server.port, """
            import sqlite3, time
            lock = sqlite3.connect("\(directory.path)/kiosk.sqlite", isolation_level=None, timeout=10)
            lock.execute("BEGIN EXCLUSIVE")               # another process holds the write lock
            start = time.time()
            locked = fault(lambda: p.epusuaris.consumirDemo("quiosc", "dev-1", "", "info", "ios", ""))
            waited = time.time() - start
            start = time.time()
            # WAL: readers are not blocked, nor delayed by the device's first sighting of the day (written later).
            reads = len(p.epquiosc.getEdicions("quiosc", "device-under-lock"))
            read_time = time.time() - start
            lock.execute("ROLLBACK")
            after = p.epusuaris.consumirDemo("quiosc", "dev-1", "", "info", "ios", "")["servir_demo"]
            result = {"locked": locked, "waited": waited, "reads": reads, "read_time": read_time, "after": after}
            """).value as! [String: Any]
        let locked = result["locked"] as? [String: Any]
        #expect(locked?["faultCode"] as? Int == -32603, "\(result)")
        let waited = result["waited"] as? Double ?? 0
        #expect(waited >= 0.9 && waited < 5, "waited \(waited) s for a 1 s busy timeout")
        #expect(result["reads"] is Int)
        #expect((result["read_time"] as? Double ?? 99) < 0.9)
        #expect(result["after"] as? String == "1")
        #expect(server.log.contains("database is locked"), "the failure is logged: \(server.log)")
    }
}
