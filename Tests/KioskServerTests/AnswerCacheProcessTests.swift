import Foundation
import KioskTestSupport
import Testing

/// Catalogue answers kept by a running server are never stale after a change made by another process:
/// the CLI publishes and withdraws while `serve` runs, and the very next call sees it.
@Suite struct AnswerCacheProcessTests {
    static let environment = ["KIOSK_SECRET": String(repeating: "a", count: 40)]

    @Test func aCLIPublishOrWithdrawWhileServingIsSeenByTheNextCall() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try writeTestConfiguration(in: directory)
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
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try writeTestConfiguration(in: directory)
        let folder = try await IssueFolders.writeIssue(directory.path + "/in", pages: 2, seed: 7)
        let publish = try await ChildProcess.run(ServerProcess.executable.path, ["publish", "--quiet", "--edition", "8", "--date", "2031-02-01",
                                                                      folder, "--config", config], environment: Self.environment)
        #expect(publish.status == 0, "\(publish.errors)")
        let reloading = try await ServerProcess(["--config", config], environment: Self.environment)
        let other = try await ServerProcess(["--config", config], environment: Self.environment)
        let script = """
            import json, os, signal, sys, time, xmlrpc.client
            def orders(port):
                p = xmlrpc.client.ServerProxy(f"http://kiosk:secret@127.0.0.1:{port}/RPC2")
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
            print(json.dumps(out))
            """
        let output = try await runClient("python3", ["-c", script])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        let before = try #require(report["before"] as? [[String: String]], "\(report)")
        #expect(before.map { $0["8"] } == ["30", "30"], "\(report)")
        #expect((report["reloaded"] as? [String: String])?["8"] == "5", "\(report)")
        #expect((report["other"] as? [String: String])?["8"] == "5", "the other instance's kept answer is not served after the reload")
        for server in [reloading, other] {
            server.signal(SIGTERM)
            #expect(try await server.waitForExit() == 0)
        }
    }
}
