import Foundation
import KioskTestSupport
import Testing

/// The event outbox, webhooks and the event stream end to end (issue 30), run by `Tests/Clients/events_cluster.py`:
/// three instances of the real binary on one PostgreSQL database of a server the script starts itself (`initdb` in a
/// temporary directory, so that it can restart it), webhook endpoints on `Tests/Clients/webhook_receiver.py` (every
/// delivery verified with PyPI `standardwebhooks`, a fast endpoint and a slow one). Scenarios: `steady` (30 issues
/// published over the instances: every event delivered to each endpoint, signed, its body the outbox's, one distinct
/// webhook-id per event, no two tries of one event overlapping); `kill` (`kill -9` of the instance holding leases, at
/// three points of a try: each leased delivery tried again only after its lease ran out, and delivered); `pgrestart`
/// (`pg_ctl restart -m fast` and a stop of 3 s under publishing: the instances recover by themselves, nothing answered
/// 201 lost, deliveries resume, a stream reader follows through); `stream` (`GET /events` read from instance 0, cut,
/// resumed with `Last-Event-ID` on instance 1, ended by its graceful stop, resumed on instance 2: every event once, in
/// order); `final` (everything delivered, `crash_check.py`'s invariants).
///
/// Enabled when PostgreSQL's server programs are installed (`/usr/lib/postgresql/*/bin/initdb` and `pg_ctl`); failing,
/// not skipped, without them under `KIOSK_REQUIRE_POSTGRES=1`.
@Suite(.serialized, .timeLimit(.minutes(6)))
struct EventsClusterTests {
    /// The newest installed PostgreSQL's programs, when both `initdb` and `pg_ctl` are there.
    static var programs: String? {
        PrivatePostgres.programs.flatMap { FileManager.default.isExecutableFile(atPath: $0 + "/pg_ctl") ? $0 : nil }
    }

    static var enabled: Bool { programs != nil || TestPostgresServer.environment["KIOSK_REQUIRE_POSTGRES"] == "1" }
    static let skipReason: Comment = "no PostgreSQL server programs (initdb, pg_ctl) in /usr/lib/postgresql/*/bin: apt-get install postgresql"

    @Test(.enabled(if: EventsClusterTests.enabled, EventsClusterTests.skipReason))
    func outboxWebhooksAndStreamAcrossThreeInstances() async throws {
        let bin = try #require(Self.programs, "KIOSK_REQUIRE_POSTGRES=1 but PostgreSQL's initdb and pg_ctl are not in /usr/lib/postgresql/*/bin")
        let check = try await ChildProcess.run("/usr/bin/env", ["python3", "-c", "import standardwebhooks, httpx, httpx_sse"])
        try #require(check.status == 0, "events_cluster.py needs PyPI standardwebhooks, httpx and httpx-sse: \(check.errors.suffix(500))")
        let directory = temporaryDirectory()
        let script = TestKiosk.repositoryRoot + "/Tests/Clients/events_cluster.py"
        // A bound on the whole run (it takes about two minutes, most of it waiting for leases of killed instances to run
        // out); events_cluster.py stops what it started (instances, receiver, its PostgreSQL server) on SIGTERM.
        // Never beside the other heavy runs (`HeavyRuns`): they all time what other instances do.
        let result = try await HeavyRuns.shared.exclusive {
            try await ChildProcess.run("/usr/bin/env",
                                       ["timeout", "-k", "10", "300", "python3", script, ServerProcess.executable.path,
                                        directory.path, "--postgres-bin", bin])
        }
        let report = (try? JSONSerialization.jsonObject(with: Data(result.output.utf8))) as? [String: Any]
        let violations = report?["violations"] as? [String] ?? []
        if let scenarios = report?["scenarios"] as? [String: Any] {
            for (name, details) in scenarios.sorted(by: { $0.key < $1.key }) {
                let seconds = (details as? [String: Any])?["seconds"].map { "\($0)" } ?? "?"
                let failed = ((details as? [String: Any])?["violations"] as? [Any])?.count ?? 0
                print("events cluster \(name): \(seconds) s, \(failed) violated")
            }
        }
        let failed = result.status != 0 || !violations.isEmpty
        if failed || ProcessInfo.processInfo.environment["KEEP_EVENTS_DIR"] != nil {
            print("kept \(directory.path)")
        } else {
            try? FileManager.default.removeItem(at: directory)
        }
        let timedOut = result.status == 124 ? ", timed out" : ""
        #expect(report != nil, "events_cluster.py printed no report (exit \(result.status)\(timedOut)): \(result.errors.suffix(3000))")
        #expect(violations.isEmpty,
                "events_cluster.py, \(violations.count) violated:\n\(violations.joined(separator: "\n"))\n(logs in \(directory.path))")
        #expect(result.status == 0 || !violations.isEmpty, "events_cluster.py exited \(result.status): \(result.errors.suffix(3000))")
    }
}
