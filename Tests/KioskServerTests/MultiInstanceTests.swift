import Foundation
import KioskTestSupport
import Testing

/// The scenarios `Tests/Clients/cluster.py` runs against three instances of the real binary on one
/// database and one editions directory, behind a real nginx configured by `Deploy/nginx-kiosk-cluster.conf`:
/// `startup` (all three start at once on an empty database), `demo` (200 concurrent `consumirDemo` for one
/// device, quota 3: exactly 3 granted), `bundle` (20 first-demand `getEdicio` of a missing bundle: built
/// once), `publish` (HTTP and CLI publishes and withdrawals seen at once by the other instances; concurrent
/// publishes of one issue serialized), `kill` (`kill -9` of one instance under a mixed load: only its
/// requests in flight fail, nothing acknowledged is lost, it restarts cleanly).
let clusterScenarios = ["startup", "demo", "bundle", "publish", "kill"]

/// Each scenario on one SQLite file (one host), and on PostgreSQL when `KIOSK_TEST_POSTGRES` names a
/// server (a fresh database per test; failing, not skipped, under `KIOSK_REQUIRE_POSTGRES=1`), plus
/// PostgreSQL stopped and started under load on a server of the test's own. Serialized: each run is
/// three servers, nginx and a load, timed.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct MultiInstanceTests {
    @Test(arguments: clusterScenarios)
    func onOneSQLiteFile(_ scenario: String) async throws {
        let directory = temporaryDirectory()
        try await Self.cluster(scenario, directory: directory, database: directory.path + "/kiosk.sqlite")
    }

    @Test(.enabled(if: TestPostgresServer.configured, TestPostgresServer.skipReason), arguments: clusterScenarios)
    func onPostgreSQL(_ scenario: String) async throws {
        try await TestPostgresServer.withDatabase { database in
            try await Self.cluster(scenario, directory: temporaryDirectory(), database: database)
        }
    }

    /// `pgrestart`: calls fail with -32603 (not another fault, not a hang) while the server is down, and the
    /// instances recover by themselves. On a server of its own: stopping the shared one would break the
    /// suites running alongside.
    @Test(.enabled(if: TestPostgresServer.configured, TestPostgresServer.skipReason))
    func postgreSQLStoppedAndStartedUnderLoad() async throws {
        let server = try await PrivatePostgres.start()
        do {
            let database = try await server.createDatabase()
            try await Self.cluster("pgrestart", directory: temporaryDirectory(), database: database,
                                   options: ["--pg-ctl", server.control])
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// Runs `cluster.py BINARY DIRECTORY DATABASE SCENARIO OPTIONS…`; every violated expectation it reports
    /// is a failure here. The directory (logs, nginx's, the answers) is kept when something failed.
    static func cluster(_ scenario: String, directory: URL, database: String, options: [String] = [],
                        sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"), "nginx is needed: apt-get install nginx",
                     sourceLocation: sourceLocation)
        let script = TestKiosk.repositoryRoot + "/Tests/Clients/cluster.py"
        // A bound on the whole run (each scenario takes well under a minute); cluster.py stops its servers on SIGTERM.
        // Never beside the purchases end to end (`HeavyRuns`): both time what other instances see at once.
        let result = try await HeavyRuns.shared.exclusive {
            try await ChildProcess.run("/usr/bin/env",
                                       ["timeout", "-k", "10", "240", "python3", script, ServerProcess.executable.path,
                                        directory.path, database, scenario] + options)
        }
        let report = (try? JSONSerialization.jsonObject(with: Data(result.output.utf8))) as? [String: Any]
        let violations = report?["violations"] as? [String] ?? []
        let store = database.hasPrefix("postgres") ? "PostgreSQL" : "SQLite"
        if let details = (report?["scenarios"] as? [String: Any])?[scenario],
           let data = try? JSONSerialization.data(withJSONObject: details, options: [.sortedKeys]) {
            print("multi-instance \(scenario) on \(store): \(String(decoding: data, as: UTF8.self))")
        }
        let failed = result.status != 0 || !violations.isEmpty
        if failed || ProcessInfo.processInfo.environment["KEEP_CLUSTER_DIR"] != nil {
            print("kept \(directory.path)")
        } else {
            try? FileManager.default.removeItem(at: directory)
        }
        let reported = report != nil
        let timedOut = result.status == 124 ? ", timed out" : ""
        let listed = violations.joined(separator: "\n")
        #expect(reported, "cluster.py \(scenario) on \(store) printed no report (exit \(result.status)\(timedOut)): \(result.errors.suffix(3000))",
                sourceLocation: sourceLocation)
        #expect(violations.isEmpty, "cluster.py \(scenario) on \(store), \(violations.count) violated:\n\(listed)\n(logs in \(directory.path))",
                sourceLocation: sourceLocation)
        #expect(result.status == 0 || !violations.isEmpty,
                "cluster.py \(scenario) on \(store) exited \(result.status): \(result.errors.suffix(3000))",
                sourceLocation: sourceLocation)
    }
}

/// A PostgreSQL server of the test's own: `initdb` in a temporary directory, its own port, run as the
/// `postgres` user when the tests run as root (PostgreSQL refuses root). `control` is the `pg_ctl` command
/// line cluster.py appends `stop -m fast` and `start -w` to.
struct PrivatePostgres {
    let directory: URL
    let port: Int
    let control: String
    var url: String { "postgres://postgres@127.0.0.1:\(port)/postgres" }
    /// The server's certificate, when started with `tls`.
    var certificate: String { directory.path + "/data/server.crt" }

    /// The newest installed PostgreSQL's programs (Debian: /usr/lib/postgresql/<major>/bin).
    static var programs: String? {
        let root = "/usr/lib/postgresql"
        let majors = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap { Int($0) }.sorted()
        return majors.reversed().map { "\(root)/\($0)/bin" }.first { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }
    }

    /// With `tls`, the server takes TLS connections only (`hostssl`), with a self-signed certificate for
    /// 127.0.0.1 in `certificate`.
    static func start(tls: Bool = false) async throws -> PrivatePostgres {
        let bin = try #require(Self.programs, "PostgreSQL's server programs are needed for pgrestart: apt-get install postgresql")
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        let free = try await ChildProcess.run("/usr/bin/env", ["python3", "-c",
            "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"])
        let port = try #require(Int(free.output.trimmingCharacters(in: .whitespacesAndNewlines)), "no free port: \(free.errors)")
        let user = getuid() == 0 ? "runuser -u postgres -- " : ""
        let path = directory.path
        let control = "\(user)\(bin)/pg_ctl -D \(path)/data -l \(path)/log "
            + "-o '-p \(port) -k \(path) -c listen_addresses=127.0.0.1"
            + (tls ? " -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key'" : "'")
        let tlsSetup = !tls ? "" : """
            openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \\
                -keyout \(path)/data/server.key -out \(path)/data/server.crt 2>/dev/null || exit 1
            chown postgres \(path)/data/server.key \(path)/data/server.crt 2>/dev/null; chmod 600 \(path)/data/server.key
            printf 'local all all trust\\nhostssl all all 127.0.0.1/32 trust\\n' > \(path)/data/pg_hba.conf
            """
        let started = try await Self.runDetached("""
            \(user)\(bin)/initdb -D \(path)/data -U postgres --auth=trust -E UTF8 >\(path)/initdb.log 2>&1 || { cat \(path)/initdb.log >&2; exit 1; }
            \(tlsSetup)
            # The server must not inherit this process's descriptors (Foundation watches one to see it end).
            for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null
            \(control) -w start >/dev/null || { cat \(path)/log >&2; exit 1; }
            """, errors: path + "/start.err")
        let server = PrivatePostgres(directory: directory, port: port, control: control)
        guard started.status == 0 else {
            await server.stop()
            Issue.record("could not start a PostgreSQL server of the test's own: \(started.errors)")
            throw PrivatePostgresError.didNotStart
        }
        return server
    }

    /// Runs a shell script with no pipes (output to /dev/null, errors to a file); returns its status and errors.
    static func runDetached(_ script: String, errors: String) async throws -> (status: Int32, errors: String) {
        try await onOwnThread {
            _ = FileManager.default.createFile(atPath: errors, contents: nil)
            let process = try ChildProcess("/bin/bash", ["-c", script], errors: .file(errors))
            return (process.waitUntilExit(), (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
        }
    }

    /// A new, empty database on this server; its URL.
    func createDatabase() async throws -> String {
        let name = "kiosk_t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await TestPostgresServer.psql(url, "CREATE DATABASE \(name)")
        return "postgres://postgres@127.0.0.1:\(port)/\(name)"
    }

    func stop() async {
        _ = try? await ChildProcess.run("/bin/bash", ["-c", "\(control) -m immediate stop >/dev/null 2>&1"])
        try? FileManager.default.removeItem(at: directory)
    }
}

enum PrivatePostgresError: Error {
    case didNotStart
}
