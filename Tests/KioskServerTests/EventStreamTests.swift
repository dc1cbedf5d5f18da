import Foundation
import KioskModels
import KioskSQLite
import KioskTestSupport
import Testing
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskPasswords

/// `GET /events` over real HTTP: read by a foreign SSE client (`httpx-sse`) that drops its connection and
/// resumes; who sees what; the NDJSON form; refusals.
@Suite struct EventStreamTests {
    static let operatorPassword = "operator-secret"

    static func kiosk() async throws -> TestKiosk {
        let hash = try await PasswordHashing().hash(operatorPassword, cost: 4)
        return try await TestKiosk { configuration in
            configuration.operators = [.init(username: "olga", passwordHash: hash, role: .operator)]
                + ["eddie", "otto", "ona", "pia"].map { .init(username: $0, passwordHash: hash, role: .editor) }
            configuration.publishers[0].publications = nil
            configuration.publishers[0].editions = [8]
        }
    }

    struct Answer: Sendable {
        var status: Int
        var type: String
        var body: String
    }

    /// One request with Python's standard library.
    static func get(_ port: Int, _ path: String, user: String, password: String, accept: String = "text/event-stream") async throws -> Answer {
        let answer = try await python(port, """
            import base64, urllib.request, urllib.error
            request = urllib.request.Request("http://127.0.0.1:\(port)\(path)", headers={
                "Authorization": "Basic " + base64.b64encode(b"\(user):\(password)").decode(), "Accept": "\(accept)"})
            try:
                with urllib.request.urlopen(request, timeout=30) as r:
                    result = [r.status, r.headers["Content-Type"], r.read().decode()]
            except urllib.error.HTTPError as e:
                result = [e.code, e.headers["Content-Type"], e.read().decode()]
            """).value as? [Any] ?? []
        return Answer(status: answer.first as? Int ?? 0, type: answer.dropFirst().first as? String ?? "", body: answer.last as? String ?? "")
    }

    @Test func aForeignClientResumesWithoutLosingOrRepeatingAnEvent() async throws {
        let kiosk = try await Self.kiosk()
        try await kiosk.addIssue(edition: 8, date: "2025-05-30")
        let day = try #require(IssueDate("2025-05-30"))
        let report = try await kiosk.withServer { port in
            async let reading = runClient("python3", [TestKiosk.repositoryRoot + "/Tests/Clients/event_stream.py",
                                                      "http://127.0.0.1:\(port)", "publisher", "publisher-secret", "41",
                                                      "--drop-every", "7", "--types", "issue.*"])
            // 40 more events while the client reads, drops and resumes.
            for round in 0..<20 {
                #expect(try await kiosk.store.withdrawIssue(editionID: 8, date: day, at: kiosk.clock.now))
                #expect(try await kiosk.store.restoreIssue(editionID: 8, date: day, revision: 1))
                if round % 5 == 0 { try await Task.sleep(for: .milliseconds(50)) }
            }
            return try await reading
        }
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any], "\(report)")
        let types = try #require(json["types"] as? [String])
        let ids = try #require(json["ids"] as? [Int])
        #expect(types.count == 41)
        #expect(types.first == "issue.published")
        #expect(Array(types.dropFirst()) == Array(repeating: ["issue.withdrawn", "issue.restored"], count: 20).flatMap { $0 })
        #expect(ids == ids.sorted() && Set(ids).count == ids.count)
        #expect((json["reconnects"] as? Int ?? 0) >= 5)
        // What the store holds is what was read, in order.
        let stored = try await kiosk.store.events(after: 0, types: [.issuePublished, .issueWithdrawn, .issueRestored], limit: 100)
        #expect(stored.map { Int($0.id) } == ids)
    }

    /// 64 open streams are the most one account holds (the next `429`, while another account still gets
    /// one), 256 the most an instance serves (the next `503` at once, whoever asks), and a place comes free
    /// once a reader leaves (noticed when a write to it fails: within two keep-alives).
    @Test func pastTheMostStreamsTheNextIsRefusedUntilOneLeaves() async throws {
        let kiosk = try await Self.kiosk()
        let controller = EventStreamController()
        let (limit, perAccount) = (controller.maxStreams, controller.maxStreamsPerAccount)
        #expect(limit == 4 * perAccount, "four accounts fill the server")
        let answer = try await kiosk.withServer { port in
            try await python(port, """
                import base64, socket, time
                def open_stream(user, query="after=0"):
                    auth = base64.b64encode(user.encode() + b":\(Self.operatorPassword)").decode()
                    s = socket.create_connection(("127.0.0.1", \(port)), timeout=30)
                    s.sendall(("GET /events?" + query + " HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Basic " + auth
                               + "\\r\\nAccept: text/event-stream\\r\\n\\r\\n").encode())
                    head = b""
                    while b"\\r\\n\\r\\n" not in head:
                        part = s.recv(4096)
                        if not part:
                            break
                        head += part
                    return s, head.split(b"\\r\\n")[0].decode()
                def try_once(user, query="after=0"):
                    s, status = open_stream(user, query)
                    s.close()
                    return status
                streams = [open_stream("olga") for _ in range(\(perAccount))]
                own_refused = try_once("olga")
                # (one that ends at once, so that it holds no place while the others fill the server)
                other_while_olga_full = try_once("pia", "after=0&follow=false")
                time.sleep(0.5)
                for user in ("eddie", "otto", "ona"):
                    streams += [open_stream(user) for _ in range(\(perAccount))]
                statuses = sorted(set(status for _, status in streams))
                server_refused = try_once("eddie")
                streams.pop()[0].close()
                freed, deadline = None, time.time() + 40
                while time.time() < deadline:
                    status = try_once("ona")
                    if status.startswith("HTTP/1.1 200"):
                        freed = status
                        break
                    time.sleep(1)
                for s, _ in streams:
                    s.close()
                result = {"statuses": statuses, "count": len(streams) + 1, "own_refused": own_refused,
                          "other": other_while_olga_full, "refused": server_refused, "freed": freed}
                """)
        }
        let result = answer.value as? [String: Any] ?? [:]
        #expect(result["statuses"] as? [String] == ["HTTP/1.1 200 OK"], "\(result)")
        #expect(result["count"] as? Int == limit, "\(result)")
        #expect(result["own_refused"] as? String == "HTTP/1.1 429 Too Many Requests", "\(result)")
        #expect(result["other"] as? String == "HTTP/1.1 200 OK", "\(result)")
        #expect(result["refused"] as? String == "HTTP/1.1 503 Service Unavailable", "\(result)")
        #expect(result["freed"] as? String == "HTTP/1.1 200 OK", "\(result)")
    }

    @Test func eachReaderSeesWhatItMay() async throws {
        let kiosk = try await Self.kiosk()
        try await kiosk.addIssue(edition: 8, date: "2025-05-30")
        try await kiosk.addIssue(edition: 1, date: "2025-05-30")
        try await kiosk.addUser("reader1", password: "pw")
        let answers = try await kiosk.withServer { port in
            [try await Self.get(port, "/events?after=0&follow=false", user: "publisher", password: "publisher-secret"),
             try await Self.get(port, "/events?after=0&follow=false", user: "olga", password: Self.operatorPassword,
                                accept: "application/x-ndjson"),
             try await Self.get(port, "/events?after=0&follow=false", user: "kiosk", password: TestKiosk.apiPassword),
             try await Self.get(port, "/events?after=0&follow=false&types=issue.nonsense", user: "olga", password: Self.operatorPassword),
             try await Self.get(port, "/events?after=banana", user: "olga", password: Self.operatorPassword),
             try await Self.get(port, "/events?after=0&follow=false", user: "eddie", password: Self.operatorPassword,
                                accept: "application/x-ndjson"),
             try await Self.get(port, "/events?after=evt_900000", user: "olga", password: Self.operatorPassword)]
        }
        // The publisher may publish to edition 8 only: it sees that issue, not edition 1's, not the reader.
        #expect(answers[0].status == 200)
        #expect(answers[0].type.hasPrefix("text/event-stream"))
        let publisherSees = answers[0].body.split(separator: "\n").filter { $0.hasPrefix("data: ") }
        #expect(!publisherSees.isEmpty && publisherSees.allSatisfy { $0.contains("\"edition\":8") })
        #expect(publisherSees.filter { $0.contains("issue.published") }.count == 1)
        #expect(!publisherSees.contains { $0.contains("reader.added") })
        // The operator reads NDJSON: both issues and the reader, one JSON object a line.
        #expect(answers[1].status == 200)
        let lines = answers[1].body.split(separator: "\n").map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        }
        #expect(lines.compactMap { $0["type"] as? String }.filter { $0 == "issue.published" }.count == 2)
        #expect(lines.contains { $0["type"] as? String == "reader.added" })
        #expect(lines.allSatisfy { ($0["id"] as? String)?.hasPrefix("evt_") == true && $0["timestamp"] is String })
        // An API client is no reader of events; a bad type or position is refused with what to send.
        #expect(answers[2].status == 401)
        #expect(answers[3].status == 400)
        #expect(answers[3].body.contains("issue.nonsense"))
        #expect(answers[4].status == 400)
        // An editor reads as a publisher of every edition: both issues, not the reader.
        #expect(answers[5].status == 200)
        let editorSees = answers[5].body.split(separator: "\n").compactMap { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["type"] as? String
        }
        #expect(editorSees.filter { $0 == "issue.published" }.count == 2 && !editorSees.contains("reader.added"), "\(editorSees)")
        // A position past the newest event is none of this server's: following it would skip what comes.
        #expect(answers[6].status == 400 && answers[6].body.contains("newer than the newest"), "\(answers[6])")
    }

    /// A graceful stop (SIGTERM) of the real binary ends a following stream properly (the chunked body's last
    /// chunk), and the process exits: an open stream does not hold the server up.
    @Test func aGracefulStopEndsAFollowingStream() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try writeTestConfiguration(in: directory)
        let server = try await ServerProcess(["--config", config], environment: ["KIOSK_SECRET": String(repeating: "e", count: 40)])
        let output = try await runClient("python3", ["-c", """
            import base64, json, os, signal, socket, time
            s = socket.create_connection(("127.0.0.1", \(server.port)), timeout=30)
            auth = base64.b64encode(b"publisher:publisher-secret").decode()
            s.sendall(("GET /events HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Basic " + auth
                       + "\\r\\nAccept: text/event-stream\\r\\n\\r\\n").encode())
            received = b""
            while b"retry: 2000" not in received:
                part = s.recv(4096)
                if not part:
                    break
                received += part
            opened = received.split(b"\\r\\n")[0].decode()
            os.kill(\(server.pid), signal.SIGTERM)
            start = time.time()
            s.settimeout(1)
            while time.time() - start < 40:   # keep-alives every 15 s: bounded by the clock, not the socket
                try:
                    part = s.recv(4096)
                except socket.timeout:
                    continue
                if not part:
                    break
                received += part
            print(json.dumps({"opened": opened, "seconds": time.time() - start,
                              "last chunk": received.endswith(b"\\r\\n0\\r\\n\\r\\n")}))
            """])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
        #expect(report["opened"] as? String == "HTTP/1.1 200 OK", "\(report)")
        #expect(report["last chunk"] as? Bool == true, "the stream ended with the chunked body's end: \(report)")
        // The stream notices the stop at its next poll (every second); 20 s leaves room for a crowded machine.
        #expect((report["seconds"] as? Double ?? 99) < 20, "\(report)")
        #expect(try await server.waitForExit(timeout: .seconds(30)) == 0, "\(server.log.suffix(2000))")
    }
}
