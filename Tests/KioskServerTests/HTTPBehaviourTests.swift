import KioskRPC
import HummingbirdTesting
import Hummingbird
import Foundation
import Logging
import Testing
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles
@testable import KioskPasswords

/// HTTP behaviour the old apps and operators rely on, over raw sockets (Python) and the real binary.
@Suite struct HTTPBehaviourTests {
    static let getEdicions = #"<?xml version="1.0"?><methodCall><methodName>epquiosc.getEdicions</methodName><params><param><value>quiosc</value></param><param><value></value></param></params></methodCall>"#

    @Test func unauthorizedAnswerLeavesTheConnectionUsableForTheRetry() async throws {
        let kiosk = try await TestKiosk()
        let result = try await kiosk.withServer { port in
            try await python(port, """
                import socket, base64
                body = \(Self.pythonLiteral(Self.getEdicions)).encode()
                s = socket.create_connection(("127.0.0.1", \(port)))
                def exchange(headers):
                    s.sendall(("POST /RPC2 HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: text/xml\\r\\nContent-Length: %d\\r\\n%s\\r\\n" % (len(body), headers)).encode() + body)
                    data = b""
                    while b"\\r\\n\\r\\n" not in data:
                        data += s.recv(65536)
                    head, rest = data.split(b"\\r\\n\\r\\n", 1)
                    length = int([l.split(b":")[1] for l in head.split(b"\\r\\n") if l.lower().startswith(b"content-length")][0])
                    while len(rest) < length:
                        rest += s.recv(65536)
                    return head.decode(), rest.decode()
                first = exchange("")
                auth = base64.b64encode(b"kiosk:secret").decode()
                second = exchange("Authorization: Basic %s\\r\\n" % auth)
                wrong = exchange("Authorization: Basic %s\\r\\n" % base64.b64encode(b"kiosk:wrong").decode())
                result = {"first": first[0], "second": second, "wrong": wrong[0]}
                """)
        }.value as! [String: Any]
        let first = result["first"] as! String
        #expect(first.hasPrefix("HTTP/1.1 401"))
        #expect(first.contains("WWW-Authenticate: Basic realm=\"kiosk\""))
        let second = result["second"] as! [String]
        #expect(second[0].hasPrefix("HTTP/1.1 200"))
        #expect(second[0].lowercased().contains("content-type: text/xml"))
        #expect(second[1].contains("<methodResponse><params><param><value><array>"))
        #expect((result["wrong"] as! String).hasPrefix("HTTP/1.1 401"))
    }

    @Test func bodiesOverTheLimitGet413WithOrWithoutContentLength() async throws {
        let kiosk = try await TestKiosk()
        let result = try await kiosk.withServer { port in
            try await python(port, """
                import socket, base64
                auth = base64.b64encode(b"kiosk:secret").decode()
                def status(request, body_chunks):
                    s = socket.create_connection(("127.0.0.1", \(port)))
                    s.sendall(request.encode())
                    try:
                        for chunk in body_chunks:
                            s.sendall(chunk)
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    data = b""
                    while b"\\r\\n" not in data:
                        part = s.recv(4096)
                        if not part:
                            break
                        data += part
                    return data.split(b"\\r\\n")[0].decode()
                declared = status("POST /RPC2 HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Basic %s\\r\\nContent-Length: 2000000\\r\\n\\r\\n" % auth, [])
                big = b"<" * 65536
                chunked = status("POST /RPC2 HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Basic %s\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n" % auth,
                                 [b"%x\\r\\n" % len(big) + big + b"\\r\\n" for _ in range(20)] + [b"0\\r\\n\\r\\n"])
                result = [declared, chunked]
                """)
        }.value as! [String]
        #expect(result == ["HTTP/1.1 413 Payload Too Large", "HTTP/1.1 413 Payload Too Large"])
    }

    @Test func healthAndUnknownRoutes() async throws {
        let kiosk = try await TestKiosk()
        let result = try await kiosk.withServer { port in
            try await python(port, """
                import urllib.request, urllib.error
                def get(path):
                    try:
                        with urllib.request.urlopen("http://127.0.0.1:\(port)" + path) as r:
                            return [r.status, r.read().decode()]
                    except urllib.error.HTTPError as e:
                        return [e.code, ""]
                result = [get("/healthz"), get("/nothing-here")[0]]
                """)
        }.value as! [Any]
        #expect((result[0] as! [Any])[0] as! Int == 200)
        #expect((result[0] as! [Any])[1] as! String == "ok\n")
        #expect(result[1] as! Int == 404)
    }

    @Test func sigtermLetsTheRequestInFlightFinish() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory)
        let server = try await ServerProcess(["--config", config], environment: ["KIOSK_SECRET": String(repeating: "s", count: 40)])
        let body = Self.getEdicions
        let port = server.port
        // Send the headers and half the body, signal, then the rest: the answer must still come.
        let script = """
            import socket, base64, time, os, signal, sys
            body = \(Self.pythonLiteral(body)).encode()
            s = socket.create_connection(("127.0.0.1", \(port)))
            auth = base64.b64encode(b"kiosk:secret").decode()
            s.sendall(("POST /RPC2 HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Basic %s\\r\\nContent-Length: %d\\r\\n\\r\\n" % (auth, len(body))).encode() + body[:40])
            time.sleep(0.5)
            os.kill(\(server.pid), signal.SIGTERM)
            time.sleep(0.5)
            s.sendall(body[40:])
            data = b""
            while True:
                part = s.recv(65536)
                if not part:
                    break
                data += part
                if b"</methodResponse>" in data:
                    break
            print(data.split(b"\\r\\n")[0].decode())
            """
        let output = try await runClient("python3", ["-c", script])
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "HTTP/1.1 200 OK")
        let status = try await server.waitForExit()
        #expect(status == 0, "\(server.log)")
    }

    /// The stored API clients are checked: once the console owns them, a password changed there silences it.
    @Test func warnsWhenDevelopmentCredentialsListenBeyondLoopback() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory) { $0 + "\ncatalogue_source: console\n" }
        let environment = ["KIOSK_SECRET": String(repeating: "s", count: 40)]
        let server = try await ServerProcess(["--config", config, "--host", "0.0.0.0"], environment: environment)
        server.signal(SIGTERM)
        _ = try await server.waitForExit()
        #expect(server.log.contains("development password and the server listens beyond loopback"))

        let hash = try await PasswordHashing().hash("not-the-development-one", cost: 4)
        try await runClient("python3", ["-c", "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); "
                                        + "db.execute(\"UPDATE accounts SET password_hash = ? WHERE kind = 'api_client'\", (sys.argv[2],)); db.commit()",
                                        directory.path + "/kiosk.sqlite", hash])
        let again = try await ServerProcess(["--config", config, "--host", "0.0.0.0"], environment: environment)
        again.signal(SIGTERM)
        _ = try await again.waitForExit()
        #expect(again.log.contains("Kiosk listening") && !again.log.contains("development password"), "\(again.log)")
    }

    @Test func servesTLSDirectlyWhenConfigured() async throws {
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = directory.appendingPathComponent("key.pem").path
        let certificate = directory.appendingPathComponent("cert.pem").path
        try await runClient("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
                                        "-days", "2", "-subj", "/CN=127.0.0.1"])
        let config = try writeTestConfiguration(in: directory) {
            $0.replacingOccurrences(of: "  # tls: { certificate: /etc/kiosk/cert.pem, key: /etc/kiosk/key.pem }",
                                    with: "  tls: { certificate: \(certificate), key: \(key) }")
        }
        let server = try await ServerProcess(["--config", config], environment: ["KIOSK_SECRET": String(repeating: "t", count: 40)])
        let output = try await runClient("python3", ["-c", """
            import ssl, xmlrpc.client
            context = ssl._create_unverified_context()
            p = xmlrpc.client.ServerProxy("https://kiosk:secret@127.0.0.1:\(server.port)/RPC2", context=context)
            print(len(p.epquiosc.getEdicions("quiosc", "")), p.system.listMethods()[0])
            """])
        #expect(output == "0 epquiosc.cercar\n")
        #expect(server.log.contains("rpc=https://"))
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
    }

    @Test func routesAnEmbeddingProgramAddsAnswerOnlyAPIClientsOnThePinnedRuntime() async throws {
        let kiosk = try await TestKiosk()
        let app = try buildApplication(runtime: kiosk.runtime, host: "127.0.0.1", port: 0, logger: Logger(label: "test"),
                                       apiClientRoutes: { group in
            group.get("/added/:name") { _, context -> String in
                guard context.parameters.get("name") == "known" else { throw KioskHTTPError.notFound("No such thing.") }
                return "\(context.authenticatedUser ?? "-") \(context.environment.ownWebKiosks)"
            }
        })
        try await app.test(.live) { client in
            let base = "http://127.0.0.1:\(client.port!)/added/", url = base + "known"
            let refused = try await runClient("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code} %header{www-authenticate}", url])
            #expect(refused == "401 Basic realm=\"kiosk\"")
            let wrong = try await runClient("curl", ["-s", "-u", "kiosk:wrong", "-o", "/dev/null", "-w", "%{http_code}", url])
            #expect(wrong == "401")
            let publisher = try await runClient("curl", ["-s", "-u", "publisher:publisher-secret", "-o", "/dev/null", "-w", "%{http_code}", url])
            #expect(publisher == "401")
            let answered = try await runClient("curl", ["-s", "-u", "kiosk:secret", url])
            #expect(answered == "kiosk " + kiosk.configuration.publicURL + "/web")
            let missing = try await runClient("curl", ["-s", "-u", "kiosk:secret", "-w", " %{http_code}", base + "other"])
            #expect(missing == "No such thing.\n 404")
        }
    }

    /// A Python string literal for `text`.
    static func pythonLiteral(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
