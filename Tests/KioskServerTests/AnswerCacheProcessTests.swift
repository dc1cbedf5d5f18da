import Foundation
import KioskTestSupport
import Testing

/// Catalogue answers kept by a running server are never stale after a change made by another process:
/// the CLI publishes and withdraws while `serve` runs, and the very next call sees it. On SQLite the
/// version is known from the shared count of changes, on PostgreSQL from the notifications of a
/// listening connection; both are tested.
@Suite struct AnswerCacheProcessTests {
    static let environment = ["KIOSK_SECRET": String(repeating: "a", count: 40)]

    /// The test configuration in `directory`, on `database` (nil: a SQLite file there).
    static func configuration(in directory: URL, database: String?) throws -> String {
        try writeTestConfiguration(in: directory) { text in
            guard let database else { return text }
            return text.replacingOccurrences(of: "database: \(directory.path)/kiosk.sqlite", with: "database: \(database)")
        }
    }

    @Test func aCLIPublishOrWithdrawWhileServingIsSeenByTheNextCall() async throws {
        try await Self.cliChangesAreSeenAtTheNextCall(database: nil)
    }

    @Test(.enabled(if: TestPostgresServer.configured, TestPostgresServer.skipReason))
    func aCLIPublishOrWithdrawWhileServingIsSeenByTheNextCallOnPostgreSQL() async throws {
        try await TestPostgresServer.withDatabase { try await Self.cliChangesAreSeenAtTheNextCall(database: $0) }
    }

    static func cliChangesAreSeenAtTheNextCall(database: String?) async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try configuration(in: directory, database: database)
        let server = try await ServerProcess(["--config", config], environment: Self.environment)
        let folder = try await IssueFolders.writeIssue(directory.path + "/in", pages: 2, seed: 5)
        let larger = try await IssueFolders.writeIssue(directory.path + "/in3", pages: 3, seed: 6)
        let script = """
            import json, os, subprocess, sys, urllib.request, xmlrpc.client
            p = xmlrpc.client.ServerProxy("http://kiosk:secret@127.0.0.1:\(server.port)/RPC2")
            def newest():
                listed = [e["data"] for e in p.epquiosc.getEdicions("quiosc", "d") if e["id"] == "8"]
                recent = [i["data"] for i in p.epquiosc.getDarrersEdicio("quiosc", "d", "8", "", 3, "DESC")][:1]
                return listed + recent
            def pages():
                try:
                    issue = p.epquiosc.getEdicio("quiosc", "d", "8", "2031-01-01", "", "iOS")
                    return [len(issue["pagines"]), issue["zip_sha256"]]
                except xmlrpc.client.Fault as fault:
                    return fault.faultCode
            def cli(*args):
                subprocess.run(["\(ServerProcess.executable.path)"] + list(args) + ["--config", "\(config)"], check=True,
                               capture_output=True, cwd="\(TestKiosk.repositoryRoot)",
                               env=dict(os.environ, KIOSK_SECRET="\(Self.environment["KIOSK_SECRET"]!)"))
            out = {"before": newest(), "kept": newest(), "issue before": [pages(), pages()]}
            cli("publish", "--quiet", "--edition", "8", "--date", "2031-01-01", "\(folder)")
            out["after publish"] = newest()
            out["again"] = newest()
            out["issue after publish"] = [pages(), pages()]
            cli("publish", "--quiet", "--edition", "8", "--date", "2031-01-01", "\(larger)")
            out["issue after republish"] = [pages(), pages()]
            cli("withdraw", "--edition", "8", "--date", "2031-01-01")
            out["after withdraw"] = newest()
            out["issue after withdraw"] = pages()
            metrics = urllib.request.urlopen("http://127.0.0.1:\(server.port)/metrics").read().decode()
            out["hits"] = sum(float(l.split()[-1]) for l in metrics.splitlines()
                              if l.startswith("kiosk_answer_cache_total") and 'result="hit"' in l)
            out["on connection"] = sum(float(l.split()[-1]) for l in metrics.splitlines()
                                       if l.startswith("kiosk_rpc_answered_on_connection_total"))
            out["issue hits"] = sum(float(l.split()[-1]) for l in metrics.splitlines()
                                    if l.startswith("kiosk_answer_cache_total") and 'method="getEdicio.issue"' in l and 'result="hit"' in l)
            print(json.dumps(out))
            """
        let output = try await runClient("python3", ["-c", script])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        let before = try #require(report["before"] as? [String], "\(report)")
        #expect(before.allSatisfy { $0 != "2031-01-01" }, "\(report)")
        #expect(report["kept"] as? [String] == before)
        #expect(report["after publish"] as? [String] == ["2031-01-01", "2031-01-01"], "no stale answer after a CLI publish")
        #expect(report["again"] as? [String] == ["2031-01-01", "2031-01-01"])
        #expect(report["after withdraw"] as? [String] == before, "no stale answer after a CLI withdraw")
        let missing = try #require(report["issue before"] as? [Int], "\(report)")
        #expect(missing.count == 2 && missing.allSatisfy { $0 != 0 && $0 == missing[0] }, "getEdicio refuses an issue not yet published")
        let published = try #require(report["issue after publish"] as? [[Any]], "\(report)")
        #expect(published.map { $0.first as? Int } == [2, 2], "the very next getEdicio after a CLI publish sees its pages")
        let republished = try #require(report["issue after republish"] as? [[Any]], "\(report)")
        #expect(republished.map { $0.first as? Int } == [3, 3], "and after a republish, the new revision's")
        #expect(republished.first?.last as? String != published.first?.last as? String, "the new revision's bundle")
        #expect(report["issue after withdraw"] as? Int == missing[0], "and after a withdraw, the refusal")
        #expect((report["issue hits"] as? Double ?? 0) >= 3, "getEdicio's second calls read the issue from memory: \(report)")
        #expect((report["hits"] as? Double ?? 0) >= 4, "answers were kept between calls: \(report["hits"] ?? "none")")
        #expect((report["on connection"] as? Double ?? 0) >= 2,
                "repeated catalogue calls were answered on the connection (KeptAnswerHandler), and none of them was stale: \(report)")
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
    }

    /// A reload on one instance that changes the catalogue (here an edition's line order) is seen by the
    /// very next call to another instance on the same database, whose answers were kept.
    @Test func aReloadOnOneInstanceIsSeenByTheNextCallToAnother() async throws {
        try await Self.anotherInstancesChangeIsSeenAtTheNextCall(database: nil)
    }

    @Test(.enabled(if: TestPostgresServer.configured, TestPostgresServer.skipReason))
    func aReloadOnOneInstanceIsSeenByTheNextCallToAnotherOnPostgreSQL() async throws {
        try await TestPostgresServer.withDatabase { try await Self.anotherInstancesChangeIsSeenAtTheNextCall(database: $0) }
    }

    static func anotherInstancesChangeIsSeenAtTheNextCall(database: String?) async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try configuration(in: directory, database: database)
        let folder = try await IssueFolders.writeIssue(directory.path + "/in", pages: 2, seed: 7)
        let publish = try await ChildProcess.run(ServerProcess.executable.path, ["publish", "--quiet", "--edition", "8", "--date", "2031-02-01",
                                                                      folder, "--config", config], environment: Self.environment)
        #expect(publish.status == 0, "\(publish.errors)")
        let reloading = try await ServerProcess(["--config", config], environment: Self.environment)
        let other = try await ServerProcess(["--config", config], environment: Self.environment)
        let script = """
            import json, os, signal, sys, time, urllib.request, xmlrpc.client
            proxies = {}
            def orders(port):
                p = proxies.setdefault(port, xmlrpc.client.ServerProxy(f"http://kiosk:secret@127.0.0.1:{port}/RPC2"))
                return {e["id"]: e["ordre"] for e in p.epquiosc.getEdicions("quiosc", "d")}
            out = {"before": [orders(\(other.port)), orders(\(other.port))]}
            text = open("\(config)").read()
            open("\(config)", "w").write(text.replace("{ edition: 8, order: 30, access: free }", "{ edition: 8, order: 5, access: free }"))
            os.kill(\(reloading.pid), signal.SIGHUP)
            for _ in range(200):
                if orders(\(reloading.port)).get("8") == "5": break
                time.sleep(0.05)
            out["reloaded"] = orders(\(reloading.port))
            out["other"] = orders(\(other.port))
            out["other again"] = orders(\(other.port))
            metrics = urllib.request.urlopen("http://127.0.0.1:\(other.port)/metrics").read().decode()
            out["on connection"] = sum(float(l.split()[-1]) for l in metrics.splitlines()
                                       if l.startswith("kiosk_rpc_answered_on_connection_total"))
            print(json.dumps(out))
            """
        let output = try await runClient("python3", ["-c", script])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        let before = try #require(report["before"] as? [[String: String]], "\(report)")
        #expect(before.map { $0["8"] } == ["30", "30"], "\(report)")
        #expect((report["reloaded"] as? [String: String])?["8"] == "5", "\(report)")
        #expect((report["other"] as? [String: String])?["8"] == "5", "the other instance's kept answer is not served after the reload")
        #expect((report["other again"] as? [String: String])?["8"] == "5", "\(report)")
        #expect((report["on connection"] as? Double ?? 0) >= 2,
                "the other instance answered from kept answers on the connection, before and after the change: \(report)")
        for server in [reloading, other] {
            server.signal(SIGTERM)
            #expect(try await server.waitForExit() == 0)
        }
    }

    /// PostgreSQL: with the connection that listens for catalogue changes terminated again and again
    /// (`pg_terminate_backend`) while the CLI publishes and withdraws, no call is ever answered with the
    /// catalogue as it was before a change the CLI finished; once the listener is left alone it
    /// reconnects (`kiosk_catalogue_listener_up` 1 again) and calls are answered from kept answers again.
    @Test(.enabled(if: TestPostgresServer.configured, TestPostgresServer.skipReason))
    func aTerminatedListenerNeverServesStaleAnswersAndResumes() async throws {
        try await TestPostgresServer.withDatabase { database in
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let config = try Self.configuration(in: directory, database: database)
            let server = try await ServerProcess(["--config", config], environment: Self.environment)
            let folder = try await IssueFolders.writeIssue(directory.path + "/in", pages: 2, seed: 9)
            let script = """
                import json, os, subprocess, threading, time, urllib.request, xmlrpc.client
                p = xmlrpc.client.ServerProxy("http://kiosk:secret@127.0.0.1:\(server.port)/RPC2")
                def newest():
                    return [e["data"] for e in p.epquiosc.getEdicions("quiosc", "d") if e["id"] == "8"]
                def metric(name):
                    text = urllib.request.urlopen("http://127.0.0.1:\(server.port)/metrics").read().decode()
                    return sum(float(l.split()[-1]) for l in text.splitlines() if l.startswith(name + " ") or l.startswith(name + "{"))
                def psql(sql):
                    return subprocess.run(["psql", "-X", "-q", "-At", "\(database)", "-c", sql], check=True,
                                          capture_output=True, text=True).stdout.strip()
                def cli(*args):
                    subprocess.run(["\(ServerProcess.executable.path)"] + list(args) + ["--config", "\(config)"], check=True,
                                   capture_output=True, env=dict(os.environ, KIOSK_SECRET="\(Self.environment["KIOSK_SECRET"]!)"))
                def wait_for(condition, seconds=20):
                    deadline = time.time() + seconds
                    while time.time() < deadline:
                        if condition(): return True
                        time.sleep(0.05)
                    return False
                out = {"up at start": wait_for(lambda: metric("kiosk_catalogue_listener_up") == 1)}
                before = newest(); newest()
                out["before"] = before
                out["on connection at start"] = metric("kiosk_rpc_answered_on_connection_total")
                killing = True
                kills = []
                def killer():
                    while killing:
                        kills.append(int(psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                              "WHERE query LIKE '%kiosk catalogue listener%' AND datname = current_database() "
                                              "AND pid <> pg_backend_pid()")))
                        time.sleep(0.02)
                thread = threading.Thread(target=killer)
                thread.start()
                stale = []
                try:
                    for round in range(3):
                        cli("publish", "--quiet", "--edition", "8", "--date", "2031-03-0%d" % (round + 1), "\(folder)")
                        expected = "2031-03-0%d" % (round + 1)
                        for _ in range(20):
                            seen = newest()
                            if seen != [expected]: stale.append(["after publish", expected, seen])
                        cli("withdraw", "--edition", "8", "--date", expected)
                        for _ in range(20):
                            seen = newest()
                            if seen != before: stale.append(["after withdraw", expected, seen])
                finally:
                    killing = False
                    thread.join()
                out["stale"] = stale
                out["listeners terminated"] = sum(kills)
                out["losses"] = metric("kiosk_catalogue_listener_losses_total")
                out["up again"] = wait_for(lambda: metric("kiosk_catalogue_listener_up") == 1)
                newest()
                resumed = metric("kiosk_rpc_answered_on_connection_total")
                for _ in range(5): newest()
                out["answered on connection after reconnecting"] = metric("kiosk_rpc_answered_on_connection_total") - resumed
                print(json.dumps(out))
                """
            let output = try await runClient("python3", ["-c", script])
            let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
            #expect(report["up at start"] as? Bool == true, "the listener was up at start: \(report)")
            #expect(report["before"] as? [String] == [], "edition 8 has no issue before the first publish: \(report)")
            #expect((report["stale"] as? [Any])?.isEmpty == true, "no stale answer while the listener was terminated: \(report)")
            #expect((report["listeners terminated"] as? Int ?? 0) >= 3, "the listening connection was found and terminated: \(report)")
            #expect((report["losses"] as? Double ?? 0) >= 1, "the losses are counted in /metrics: \(report)")
            #expect(report["up again"] as? Bool == true, "the listener reconnected: \(report)")
            #expect((report["answered on connection after reconnecting"] as? Double ?? 0) >= 4,
                    "answering from kept answers resumed: \(report)")
            let log = try String(contentsOf: server.logFile, encoding: .utf8)
            #expect(log.contains("catalogue listener lost"), "the loss is logged")
            server.signal(SIGTERM)
            #expect(try await server.waitForExit() == 0)
        }
    }
}
