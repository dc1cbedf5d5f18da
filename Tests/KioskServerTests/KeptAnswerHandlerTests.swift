import NIOHTTPTypes
import KioskSQLite
import KioskModels
import KioskConfig
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KioskTestSupport
import Logging
import NIOCore
import Testing
@testable import KioskHTTP
@testable import KioskPasswords

/// Catalogue calls answered on the connection's event loop from kept answers (`KeptAnswerHandler`):
/// the same bytes as the router's, never stale, never past a refused password, in request order, and
/// without upsetting the connection's idle timeout.
@Suite struct KeptAnswerHandlerTests {
    /// A raw HTTP/1.1 client over one socket (Python), with the helpers the tests share.
    static let client = """
        import base64, socket, time, urllib.request
        def call(method, params):
            values = "".join("<param><value><string>%s</string></value></param>" % p for p in params)
            return ('<?xml version="1.0"?><methodCall><methodName>%s</methodName><params>%s</params></methodCall>' % (method, values)).encode()
        def request(body, password="secret", extra=""):
            auth = base64.b64encode(("kiosk:" + password).encode()).decode()
            return ("POST /RPC2 HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: text/xml\\r\\nAuthorization: Basic %s\\r\\nContent-Length: %d\\r\\n%s\\r\\n" % (auth, len(body), extra)).encode() + body
        class Connection:
            def __init__(self):
                self.s = socket.create_connection(("127.0.0.1", PORT))
                self.buffer = b""
            def response(self):
                while b"\\r\\n\\r\\n" not in self.buffer:
                    data = self.s.recv(65536)
                    if not data:
                        return None
                    self.buffer += data
                head, self.buffer = self.buffer.split(b"\\r\\n\\r\\n", 1)
                lines = head.decode().split("\\r\\n")
                headers = {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip() for l in lines[1:]}
                length = int(headers.get("content-length", "0"))
                while len(self.buffer) < length:
                    self.buffer += self.s.recv(65536)
                body, self.buffer = self.buffer[:length], self.buffer[length:]
                return {"status": lines[0], "headers": sorted(headers), "body": body.decode()}
            def exchange(self, body, password="secret", extra=""):
                self.s.sendall(request(body, password, extra))
                return self.response()
        def on_connection():
            text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % PORT).read().decode()
            return sum(float(l.split()[-1]) for l in text.splitlines() if l.startswith("kiosk_rpc_answered_on_connection_total"))
        editions = call("epquiosc.getEdicions", ["quiosc", "device-1"])
        """

    /// Runs the Python `body` (after `client`, with `PORT` set) against a server with metrics.
    static func run(_ kiosk: TestKiosk, _ body: String) async throws -> [String: Any] {
        let app = try buildApplication(runtime: kiosk.runtime, host: "127.0.0.1", port: 0, logger: Logger(label: "test"),
                                       metrics: KioskMetrics())
        return try await app.test(.live) { client in
            let output = try await runClient("python3", ["-c", "PORT = \(client.port!)\n" + Self.client + "\n" + body + "\nimport json\nprint(json.dumps(result))"])
            return ClientJSON(value: try JSONSerialization.jsonObject(with: Data(output.utf8)))
        }.value as? [String: Any] ?? [:]
    }

    @Test func aKeptAnswerIsGivenOnTheConnectionAsTheRouterGivesIt() async throws {
        let kiosk = try await TestKiosk()
        try await kiosk.addIssue(edition: 1, date: "2025-05-30", pages: 2)
        let result = try await Self.run(kiosk, """
            c = Connection()
            made = c.exchange(editions)
            kept = [c.exchange(editions), c.exchange(call("epquiosc.getEdicions", ["quiosc", "device-2"]))]
            answered = on_connection()
            wrong = c.exchange(editions, password="wrong")
            after_wrong = c.exchange(editions)
            result = {"made": made, "kept": kept, "answered": answered, "wrong": wrong["status"], "after wrong": after_wrong,
                      "total": on_connection()}
            """)
        let made = try #require(result["made"] as? [String: Any], "\(result)")
        let kept = try #require(result["kept"] as? [[String: Any]], "\(result)")
        #expect(made["status"] as? String == "HTTP/1.1 200 OK")
        #expect((made["body"] as? String)?.contains("2025-05-30") == true)
        for answer in kept {
            #expect(answer["status"] as? String == "HTTP/1.1 200 OK")
            #expect(answer["headers"] as? [String] == made["headers"] as? [String], "the same headers: \(answer)")
            #expect(answer["body"] as? String == made["body"] as? String, "the same answer, whatever the device")
        }
        #expect(made["headers"] as? [String] == ["content-length", "content-type", "date", "server"])
        #expect(result["answered"] as? Double == 2, "the two repeated calls were answered on the connection: \(result)")
        #expect(result["wrong"] as? String == "HTTP/1.1 401 Unauthorized", "a wrong password is refused, as always")
        #expect((result["after wrong"] as? [String: Any])?["body"] as? String == made["body"] as? String)
        #expect(result["total"] as? Double == 3)
    }

    @Test func keepAliveIsAnsweredOnTheConnectionAndCloseByTheRouter() async throws {
        let kiosk = try await TestKiosk()
        let result = try await Self.run(kiosk, """
            c = Connection()
            c.exchange(editions)
            before = on_connection()
            alive = c.exchange(editions, extra="Connection: keep-alive\\r\\n")["status"]
            after_alive = on_connection()
            closing = c.exchange(editions, extra="Connection: close\\r\\n")
            c.s.settimeout(5)
            closed = c.s.recv(1) == b""
            result = {"alive": alive, "answered": after_alive - before, "closing": closing["status"], "closed": closed,
                      "total": on_connection() - before}
            """)
        #expect(result["alive"] as? String == "HTTP/1.1 200 OK")
        #expect(result["answered"] as? Double == 1, "Connection: keep-alive is answered on the connection: \(result)")
        #expect(result["closing"] as? String == "HTTP/1.1 200 OK")
        #expect(result["total"] as? Double == 1, "Connection: close goes to the router")
        #expect(result["closed"] as? Bool == true, "which closes the connection after the answer")
    }

    @Test func aChangeInTheStoreIsSeenByTheNextCall() async throws {
        let kiosk = try await TestKiosk()
        try await kiosk.addIssue(edition: 1, date: "2025-05-30", pages: 2)
        let app = try buildApplication(runtime: kiosk.runtime, host: "127.0.0.1", port: 0, logger: Logger(label: "test"),
                                       metrics: KioskMetrics())
        let bodies = try await app.test(.live) { client in
            var bodies: [String] = []
            let port = client.port!
            let script = "PORT = \(port)\n" + Self.client + "\n" + """
                import sys
                c = Connection()
                for line in sys.stdin:
                    print(json.dumps(c.exchange(editions)["body"]), flush=True)
                """
            // One connection, one call per line: the publish happens between the second and third call.
            let (status, output, errors) = try await ChildProcess.run("/usr/bin/env", ["python3", "-c", "import json\n" + script],
                                                                      stdin: "1\n2\n")
            #expect(status == 0, "\(errors)")
            bodies += output.split(separator: "\n").map(String.init)
            try await kiosk.addIssue(edition: 1, date: "2025-05-31", pages: 2)
            let (_, after, _) = try await ChildProcess.run("/usr/bin/env", ["python3", "-c", "import json\n" + script], stdin: "3\n")
            bodies += after.split(separator: "\n").map(String.init)
            return bodies
        }
        #expect(bodies.count == 3)
        #expect(bodies[0] == bodies[1] && bodies[0].contains("2025-05-30"))
        #expect(bodies[2].contains("2025-05-31"), "the publish is seen by the very next call")
    }

    @Test func aPasswordChangedWhileAConnectionIsOpenIsSeenByItsNextCall() async throws {
        let kiosk = try await TestKiosk()
        let ready = FileManager.default.temporaryDirectory.appendingPathComponent("kept-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: ready) }
        let app = try buildApplication(runtime: kiosk.runtime, host: "127.0.0.1", port: 0, logger: Logger(label: "test"),
                                       metrics: KioskMetrics())
        let output = try await app.test(.live) { client in
            // One connection: calls answered on it with the old password, then (after the change) the old
            // and the new password in turn.
            let script = "PORT = \(client.port!)\n" + Self.client + "\n" + """
                import json, sys
                c = Connection()
                before = [c.exchange(editions)["status"], c.exchange(editions)["status"]]
                answered = on_connection()
                open("\(ready)", "w").close()
                sys.stdin.readline()
                after = [c.exchange(editions, password=p)["status"] for p in ["secret", "changed", "secret", "changed"]]
                print(json.dumps({"before": before, "answered": answered, "after": after,
                                  "answered after": on_connection() - answered}))
                """
            let process = try ChildProcess("/usr/bin/env", ["python3", "-c", script], input: .pipe, output: .pipe, errors: .inherit)
            for _ in 0..<200 where !FileManager.default.fileExists(atPath: ready) { try await Task.sleep(for: .milliseconds(50)) }
            var catalogue = try await kiosk.store.catalogue()
            let client = try #require(catalogue.accounts.firstIndex { $0.kind == .apiClient && $0.username == "kiosk" })
            catalogue.accounts[client].passwordHash = try await PasswordHashing().hash("changed", cost: 4)
            try await kiosk.store.syncCatalogue(catalogue, dryRun: false)
            process.write("go\n")
            process.closeInput()
            let output = try await onOwnThread { process.readOutput() }
            #expect(try await process.exited() == 0)
            return String(decoding: output, as: UTF8.self)
        }
        let result = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
        #expect(result["before"] as? [String] == ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"])
        #expect(result["answered"] as? Double == 1, "the second call was answered on the connection: \(result)")
        // The second old-password call comes when the new accounts are known and an answer is kept again:
        // the connection's memory of the old header must not let it in.
        #expect(result["after"] as? [String] == ["HTTP/1.1 401 Unauthorized", "HTTP/1.1 200 OK", "HTTP/1.1 401 Unauthorized", "HTTP/1.1 200 OK"],
                "the old password is refused on the same connection, the new one accepted: \(result)")
        #expect(result["answered after"] as? Double == 1, "the new password's second call is answered on the connection: \(result)")
    }

    /// Repeated `Authorization` fields are refused; repeated `Content-Type` fields are read as none (the
    /// XML declaration decides), on the connection and by the router alike.
    @Test func repeatedFieldsAreReadAsTheRouterReadsThem() async throws {
        let kiosk = try await TestKiosk()
        let result = try await Self.run(kiosk, """
            c = Connection()
            first = [c.exchange(editions) for _ in range(2)]
            twice = "Authorization: Basic " + base64.b64encode(b"kiosk:secret").decode() + "\\r\\n"
            repeated = c.exchange(editions, extra=twice)["status"]
            types = c.exchange(editions, extra="Content-Type: text/xml; charset=utf-16\\r\\n")
            after = c.exchange(editions)["status"]
            result = {"first": [a["status"] for a in first], "repeated": repeated, "after": after,
                      "types": types["status"], "same answer": types["body"] == first[0]["body"]}
            """)
        #expect(result["first"] as? [String] == ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"], "\(result)")
        #expect(result["repeated"] as? String == "HTTP/1.1 401 Unauthorized", "two Authorization fields, even both valid: \(result)")
        #expect(result["types"] as? String == "HTTP/1.1 200 OK")
        #expect(result["same answer"] as? Bool == true, "two Content-Type fields: no charset, the answer as usual: \(result)")
        #expect(result["after"] as? String == "HTTP/1.1 200 OK")
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        let kiosk = try await TestKiosk()
        let result = try await Self.run(kiosk, """
            c = Connection()
            c.exchange(editions)
            listing = call("system.listMethods", [])
            c.s.sendall(request(listing) + request(editions) + request(editions) + request(listing))
            answers = [c.response() for _ in range(4)]
            result = {"kinds": ["methods" if "epquiosc.getEdicio" in a["body"] else "editions" if "<array><data>" in a["body"] else a["body"][:80]
                                for a in answers]}
            """)
        #expect(result["kinds"] as? [String] == ["methods", "editions", "editions", "methods"], "\(result)")
    }

    @Test func answersOnTheConnectionKeepItAliveAndIdleConnectionsStillClose() async throws {
        // Calls 0.4 s apart for longer than the idle timeout, with seconds to spare for a starved machine.
        let kiosk = try await TestKiosk { $0.server.idleTimeoutSeconds = 3 }
        let result = try await Self.run(kiosk, """
            c = Connection()
            answers = []
            for _ in range(10):
                answers.append(c.exchange(editions)["status"])
                time.sleep(0.4)
            time.sleep(6)
            c.s.settimeout(10)
            closed = c.s.recv(1) == b""
            result = {"answers": answers, "closed": closed, "answered": on_connection()}
            """)
        #expect(result["answers"] as? [String] == Array(repeating: "HTTP/1.1 200 OK", count: 10),
                "4 s of calls on one connection with a 3 s idle timeout: \(result)")
        #expect(result["answered"] as? Double == 9)
        #expect(result["closed"] as? Bool == true, "then idle, it is closed")
    }

    @Test func aDebugLevelServerAnswersTheSameBytesAsAnInfoLevelOne() async throws {
        func answers(logLevel: String) async throws -> (bodies: [String], log: String, onConnection: Double) {
            let directory = temporaryDirectory()
            let config = try writeTestConfiguration(in: directory) {
                $0.replacingOccurrences(of: "# samples: none", with: "samples: \(TestKiosk.repositoryRoot)/Samples")
            }
            let server = try await ServerProcess(["--config", config, "--log-level", logLevel], environment: EndToEndTests.environment)
            defer { server.signal(SIGKILL) }
            let output = try await runClient("python3", ["-c", """
                import base64, http.client, json, re, xmlrpc.client
                auth = "Basic " + base64.b64encode(b"kiosk:secret").decode()
                c = http.client.HTTPConnection("127.0.0.1", \(server.port))
                calls = [("epquiosc.getEdicions", ("quiosc", "")), ("epquiosc.getDarrersEdicio", ("quiosc", "", "1", "", 7, "DESC")),
                         ("epquiosc.getEdicio", ("quiosc", "", "8", "2025-05-31", "", "ios"))]
                bodies = []
                for _ in range(3):   # the second and third of each are kept answers
                    for method, params in calls:
                        c.request("POST", "/RPC2", xmlrpc.client.dumps(params, method), {"Authorization": auth, "Content-Type": "text/xml"})
                        r = c.getresponse()
                        bodies.append("%d %s %s" % (r.status, r.getheader("Content-Type"),
                                                    r.read().decode().replace(":\(server.port)/", ":PORT/")))
                c.request("GET", "/metrics")
                text = c.getresponse().read().decode()
                found = re.search(r"^kiosk_rpc_answered_on_connection_total (\\S+)$", text, re.M)
                print(json.dumps({"bodies": bodies, "on_connection": float(found.group(1)) if found else -1}))
                """])
            let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
            return (report["bodies"] as? [String] ?? [], server.log, report["on_connection"] as? Double ?? -1)
        }
        let info = try await answers(logLevel: "info")
        let debug = try await answers(logLevel: "debug")
        #expect(info.bodies.count == 9 && info.bodies.allSatisfy { $0.hasPrefix("200 text/xml") }, "\(info.bodies.map { $0.prefix(80) })")
        #expect(debug.bodies == info.bodies, "the same answers, byte for byte, at both levels")
        #expect(info.onConnection > 0 && debug.onConnection == info.onConnection,
                "kept answers are given on the connection at both levels: \(info.onConnection) and \(debug.onConnection)")
        #expect(debug.log.contains("kiosk.answered_on_connection"), "and logged at debug as the router logs a request")
        #expect(!info.log.contains("kiosk.answered_on_connection"))
        // The service group describes its services at debug: by name, never what they hold (the secret).
        let secret = try #require(EndToEndTests.environment["KIOSK_SECRET"])
        let secretBytes = Array(secret.utf8).prefix(8).map(String.init).joined(separator: ", ")
        #expect(debug.log.contains("Starting service"), "the lines that once printed the secret are there")
        #expect(!debug.log.contains(secret) && !debug.log.contains(secretBytes), "no secret in the debug log")
    }

    @Test func theStateMachineHoldsOnlyWhatItMayAnswer() {
        var state = KeptAnswerHandler.StateMachine()
        let post = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/RPC2")
        let head = KeptAnswerHandler.InboundIn.head(post)
        let yes: (HTTPRequest) -> Bool = { _ in true }
        guard case .hold = state.read(head, mayAnswer: yes) else { Issue.record("held"); return }
        guard case .hold = state.read(.body(ByteBuffer(string: "abc")), mayAnswer: yes) else { Issue.record("body held"); return }
        guard case .complete(_, let body) = state.read(.end(nil), mayAnswer: yes) else { Issue.record("complete"); return }
        #expect(String(buffer: body) == "abc")

        // Not answered here: passed on. The next request waits, complete, for that response's end.
        state.passedOn()
        guard case .hold = state.read(head, mayAnswer: yes) else { Issue.record("held behind"); return }
        guard case .hold = state.read(.end(nil), mayAnswer: yes) else { Issue.record("waits"); return }
        #expect(state.unanswered == 1)
        guard state.responseEnded() != nil else { Issue.record("answerable once the owed response ended"); return }
        #expect(state.unanswered == 0)

        // A request pipelined behind a waiting one: both are passed on, in order.
        state.passedOn()
        _ = state.read(head, mayAnswer: yes)
        _ = state.read(.end(nil), mayAnswer: yes)
        guard case .passHeld(_, _, complete: true) = state.read(head, mayAnswer: yes) else { Issue.record("released"); return }
        #expect(state.unanswered == 3)
        guard case .pass = state.read(.end(nil), mayAnswer: yes) else { Issue.record("end passed"); return }
        for _ in 0..<3 { #expect(state.responseEnded() == nil) }
        #expect(state.unanswered == 0)

        // A body over the limit releases what was held.
        guard case .hold = state.read(head, mayAnswer: yes) else { Issue.record("held again"); return }
        let large = ByteBuffer(repeating: 0x41, count: KeptRPCAnswers.bodyLimit + 1)
        guard case .passHeld(_, _, complete: false) = state.read(.body(large), mayAnswer: yes) else { Issue.record("over the limit"); return }
        #expect(state.unanswered == 1)
        guard case .pass = state.read(.end(nil), mayAnswer: yes) else { Issue.record("end of released"); return }
        guard case .pass = state.read(head, mayAnswer: { _ in false }) else { Issue.record("refused head"); return }
    }
}
