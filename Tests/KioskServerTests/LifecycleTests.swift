import KioskSQLite
import GRDB
import Foundation
import KioskTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles

/// Health and readiness, configuration reload on SIGHUP, and JSON logs, on the real binary where it matters.
@Suite struct LifecycleTests {
    static func get(_ port: Int, _ paths: [String]) async throws -> ClientJSON {
        try await python(port, """
            import urllib.request, urllib.error, json
            def get(path):
                try:
                    with urllib.request.urlopen("http://127.0.0.1:\(port)" + path) as r:
                        return [r.status, r.headers["Content-Type"], r.read().decode()]
                except urllib.error.HTTPError as e:
                    return [e.code, e.headers["Content-Type"], e.read().decode()]
            result = [get(p) for p in \(paths)]
            """)
    }

    static func json(_ text: Any) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data((text as! String).utf8)) as? [String: Any])
    }

    @Test func readyWhenDatabaseEditionsAndConfigurationAreThere() async throws {
        let kiosk = try await TestKiosk()
        let before = try FileManager.default.contentsOfDirectory(atPath: kiosk.configuration.server.editions)
        // Each check must answer within 3 s; on a test machine starved by the parallel suites the database
        // check may not, once, so a timed-out probe is asked again (a real failure never turns ready).
        let answers = try await kiosk.withServer { port in
            var answers = try await Self.get(port, ["/healthz", "/readyz"]).value as! [[Any]]
            for _ in 0..<4 where (answers[1][2] as? String)?.contains("no answer within") == true {
                answers = try await Self.get(port, ["/healthz", "/readyz"]).value as! [[Any]]
            }
            return ClientJSON(value: answers)
        }.value as! [[Any]]
        #expect(answers[0][0] as! Int == 200)
        #expect(answers[0][2] as! String == "ok\n")
        #expect(answers[1][0] as! Int == 200)
        #expect(answers[1][1] as! String == "application/json")
        let body = try Self.json(answers[1][2])
        #expect(body["status"] as? String == "ready")
        #expect(body["checks"] as? [String: String] == ["database": "ok", "editions": "ok", "configuration": "ok"])
        #expect(body["failed"] == nil)
        // The probe leaves nothing behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: kiosk.configuration.server.editions) == before)
    }

    @Test func notReadyNamesWhatFailed() async throws {
        // The editions directory is replaced by a plain file (e.g. a lost mount): nothing can be created in it.
        let kiosk = try await TestKiosk()
        let blocker = kiosk.configuration.server.editions
        try FileManager.default.removeItem(atPath: blocker)
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data("not a directory".utf8)))
        // As in the test above, a database check timed out on a starved machine is asked again.
        let answers = try await kiosk.withServer { port in
            var answers = try await Self.get(port, ["/readyz"]).value as! [[Any]]
            for _ in 0..<4 where (answers[0][2] as? String)?.contains("no answer within") == true {
                answers = try await Self.get(port, ["/readyz"]).value as! [[Any]]
            }
            return ClientJSON(value: answers)
        }.value as! [[Any]]
        let editions = answers[0]
        #expect(editions[0] as! Int == 503)
        let body = try Self.json(editions[2])
        #expect(body["status"] as? String == "not ready")
        #expect(body["failed"] as? [String] == ["editions"])
        let checks = try #require(body["checks"] as? [String: String])
        #expect(checks["database"] == "ok" && checks["configuration"] == "ok")
        #expect(checks["editions"]?.hasPrefix("failed: cannot create a file in the editions directory: ") == true, "\(checks)")

        // The database stops answering.
        let closed = try await TestKiosk()
        try FileManager.default.createDirectory(atPath: closed.configuration.server.editions, withIntermediateDirectories: true)
        try closed.store.pool.close()
        let database = try await closed.withServer { port in try await Self.get(port, ["/readyz", "/healthz"]) }.value as! [[Any]]
        #expect(database[0][0] as! Int == 503)
        let failed = try Self.json(database[0][2])
        #expect(failed["failed"] as? [String] == ["database"])
        #expect((failed["checks"] as? [String: String])?["database"]?.hasPrefix("failed: ") == true)
        #expect(database[1][0] as! Int == 200)            // still alive, just not ready
    }

    @Test func aStuckCheckFailsInsteadOfHanging() async {
        let start = ContinuousClock.now
        let check = await HealthController.bounded("database", .milliseconds(200)) { try await Task.sleep(for: .seconds(3600)) }
        #expect(check.failure == "no answer within 0.2 seconds")
        // Long before the stuck work would end (generous: a loaded machine may starve the test's own tasks).
        #expect(start.duration(to: .now) < .seconds(600))
        let fine = await HealthController.bounded("editions", .seconds(5)) {}
        #expect(fine.failure == nil)
    }

    /// The real binary, one keep-alive connection held through two SIGHUPs: a good edit is visible on
    /// that same connection; a broken file is reported in the log and the previous configuration kept.
    @Test func sighupReloadsOnTheSameConnectionAndKeepsTheOldConfigurationWhenBroken() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory)
        let server = try await ServerProcess(["--config", config], environment: ["KIOSK_SECRET": String(repeating: "h", count: 40)])
        let script = """
            import socket, base64, json, os, signal, time, xmlrpc.client
            auth = base64.b64encode(b"kiosk:secret").decode()
            s = socket.create_connection(("127.0.0.1", \(server.port)))
            def receive():
                data = b""
                while b"\\r\\n\\r\\n" not in data:
                    part = s.recv(65536)
                    if not part: raise Exception("the server closed the connection")
                    data += part
                head, rest = data.split(b"\\r\\n\\r\\n", 1)
                length = int([l.split(b":")[1] for l in head.split(b"\\r\\n") if l.lower().startswith(b"content-length")][0])
                while len(rest) < length:
                    part = s.recv(65536)
                    if not part: raise Exception("the server closed the connection")
                    rest += part
                return head, rest
            def call(method, *params):
                body = xmlrpc.client.dumps(params, method).encode()
                s.sendall(("POST /RPC2 HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Basic %s\\r\\nContent-Type: text/xml\\r\\nContent-Length: %d\\r\\n\\r\\n" % (auth, len(body))).encode() + body)
                head, rest = receive()
                if b"connection: close" in head.lower(): raise Exception("the server asked to close the connection")
                try:
                    return xmlrpc.client.loads(rest.decode())[0][0]
                except xmlrpc.client.Fault as f:
                    return {"fault": f.faultCode}
            def log_count(text):
                with open(\(Self.pythonString(server.logFile.path))) as f:
                    return f.read().count(text)
            def reload(text, expect):
                before = log_count(expect)
                with open(\(Self.pythonString(config)), "w") as f:
                    f.write(text)
                os.kill(\(server.pid), signal.SIGHUP)
                deadline = time.time() + 20
                while log_count(expect) == before:
                    if time.time() > deadline: raise Exception("no %r in the log" % expect)
                    time.sleep(0.05)
            demo = lambda: call("epusuaris.consumirDemo", "presencia", "device-1", "", {}, "iOS", 0)["servir_demo"]
            archive = lambda: call("epquiosc.getDarrersEdicio", "presencia", "", "1", "", 7, "DESC")
            local = s.getsockname()
            with open(\(Self.pythonString(config))) as f:
                original = f.read()
            before = [demo(), demo(), archive()]                   # quota 1: granted, refused; edition 1 not offered
            line = "      - { edition: 8, order: 1, access: subscribers }"
            edited = original.replace("demo_quota: 1", "demo_quota: 2").replace(line, line + "\\n      - { edition: 1, order: 2, access: free }")
            reload(edited, "configuration reloaded")
            after = [demo(), demo(), archive()]                    # quota 2: one more; edition 1 offered (no issue yet)
            reload(edited + "\\napps: [\\n", "configuration reload failed")                  # not YAML
            reload(edited.replace("demo_quota: 2", "demo_quota: -1"), "configuration reload failed")   # invalid value
            kept = [demo(), archive()]
            result = {"before": before, "after": after, "kept": kept, "same_socket": s.getsockname() == local}
            print(json.dumps(result))
            """
        let output = try await runClient("python3", ["-c", script])
        let result = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(server.log)")
        #expect(result["same_socket"] as? Bool == true)
        let before = try #require(result["before"] as? [Any])
        #expect(before[0] as? String == "1" && before[1] as? String == "0")
        #expect((before[2] as? [String: Int])?["fault"] == 3)
        let after = try #require(result["after"] as? [Any])
        #expect(after[0] as? String == "1" && after[1] as? String == "0")
        #expect((after[2] as? [Any])?.isEmpty == true)
        let kept = try #require(result["kept"] as? [Any])
        #expect(kept[0] as? String == "0")                    // still quota 2, both used
        #expect((kept[1] as? [Any])?.isEmpty == true)         // still offered

        let log = server.log
        #expect(log.contains("changes=\"update app presencia (demo quota 2); "), "logfmt quotes a value with spaces: \(log)")
        #expect(log.components(separatedBy: "configuration reload failed; keeping the previous one").count - 1 == 2, "\(log)")
        #expect(log.contains("apps[1].demo_quota: must be 0 to 1000000"), "\(log)")
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
    }

    /// Runs `serve` at debug level with JSON or text logs, asks three routes, reloads a broken
    /// configuration (an error line with metadata) and stops; returns the log's lines and the config path.
    static func serveAndReloadBadly(json: Bool) async throws -> (lines: [String], config: String) {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory) { $0.replacingOccurrences(of: "json_logs: false", with: "json_logs: \(json)") }
        let logFile = directory.appendingPathComponent("serve.log")
        #expect(FileManager.default.createFile(atPath: logFile.path, contents: nil))
        let process = try ChildProcess(ServerProcess.executable.path, ["serve", "--config", config, "--port", "0", "--log-level", "debug"],
                                       environment: ["KIOSK_SECRET": String(repeating: "j", count: 40)], directory: TestKiosk.repositoryRoot,
                                       output: .file(logFile.path), errors: .file(logFile.path))

        func lines() -> [String] {
            ((try? String(contentsOf: logFile, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        var port: Int?
        for _ in 0..<600 where port == nil {
            for line in lines() where line.contains("Kiosk listening") {
                if let match = line.firstMatch(of: #/:(\d+)/RPC2\b/#) { port = Int(match.1) }
            }
            if port == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let listening = try #require(port, "no 'Kiosk listening' line: \(lines())")
        _ = try await Self.get(listening, ["/healthz", "/readyz", "/nothing"])
        try "apps: [".write(toFile: config, atomically: true, encoding: .utf8)
        process.signal(SIGHUP)
        for _ in 0..<200 where !lines().contains(where: { $0.contains("configuration reload failed") }) {
            try await Task.sleep(for: .milliseconds(50))
        }
        process.signal(SIGTERM)
        for _ in 0..<300 where process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!process.isRunning)
        #expect(process.terminationStatus == 0)
        return (lines(), config)
    }

    @Test func jsonLogsAreOneObjectPerLine() async throws {
        let (all, config) = try await Self.serveAndReloadBadly(json: true)
        #expect(all.count >= 4)
        for line in all {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
            #expect(object != nil, "not a JSON object of strings: \(line)")
            guard let object else { continue }
            #expect(["time", "level", "label", "message"].allSatisfy { object[$0] != nil }, "\(line)")
            #expect(ISO8601DateFormatter().date(from: object["time"] ?? "") != nil, "\(line)")
            #expect(Logger.Level(rawValue: object["level"] ?? "") != nil, "\(line)")
        }
        let failure = try #require(all.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String] }
            .first { $0["message"] == "configuration reload failed; keeping the previous one" })
        #expect(failure["level"] == "error")
        #expect(failure["error"]?.contains(config) == true)
    }

    @Test func textLogsAreOneLinePerEventWithTheirMetadata() async throws {
        let (all, config) = try await Self.serveAndReloadBadly(json: false)
        #expect(all.count >= 4)
        let shape = #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} (trace|debug|info|notice|warning|error|critical) [a-z.]+:( [^ =]+=.*)? \[[A-Za-z]+\] .+$/#
        for line in all {
            #expect(line.wholeMatch(of: shape) != nil, "not a log line: \(line)")
        }
        let failure = try #require(all.first { $0.contains("configuration reload failed; keeping the previous one") })
        #expect(failure.contains(" error kiosk: error=") && failure.contains(config), "\(failure)")
        let listening = try #require(all.first { $0.hasSuffix("Kiosk listening") })
        #expect(listening.contains(" notice kiosk: ") && listening.contains(" rpc=http://"), "metadata sorted into the line: \(listening)")
    }

    static func pythonString(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
