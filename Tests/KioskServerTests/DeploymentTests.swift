import Foundation
import Testing
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles

/// The repository's deployment files, used as written: `Deploy/nginx-kiosk.conf` in front of the real
/// binary on loopback (TLS at nginx, XML-RPC proxied, `nginx`-format links served by nginx itself).
@Suite struct DeploymentTests {
    /// Both units restart the process whatever ended it and never give up: systemd's default start limit
    /// (five starts in ten seconds) would let a repeated crashing request keep the unit down.
    @Test(arguments: ["kiosk.service", "kiosk@.service"])
    func theUnitsRestartAlwaysWithNoStartLimit(_ unit: String) throws {
        let text = try String(contentsOfFile: TestKiosk.repositoryRoot + "/Deploy/" + unit, encoding: .utf8)
        var section = "", settings: [String: [String: String]] = [:]
        for line in text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) where !line.hasPrefix("#") {
            if line.hasPrefix("[") { section = line; continue }
            guard let equals = line.firstIndex(of: "=") else { continue }
            settings[section, default: [:]][String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        #expect(settings["[Service]"]?["Restart"] == "always")
        #expect(settings["[Unit]"]?["StartLimitIntervalSec"] == "0", "the start limit belongs in [Unit] and is off")
        #expect(settings["[Unit]"]?["StartLimitBurst"] == nil && settings["[Service]"]?["StartLimitBurst"] == nil)
        let pause = try #require(settings["[Service]"]?["RestartSec"].flatMap { Double($0) })
        #expect(pause > 0 && pause <= 5, "a pause between restarts, short enough to be no outage")
    }

    @Test func nginxInFrontServesTLSProxiesRPCAndServesSignedLinks() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"), "nginx is needed: apt-get install nginx")
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = directory.path + "/key.pem", certificate = directory.path + "/cert.pem"
        try await runClient("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
                                        "-days", "2", "-subj", "/CN=127.0.0.1"])
        let nginxPort = Int.random(in: 20_000...40_000)
        let linkSecret = "deployment-link-secret-0123456789"
        let config = try writeTestConfiguration(in: directory) {
            $0.replacingOccurrences(of: "# samples: none", with: "samples: \(TestKiosk.repositoryRoot)/Samples")
                .replacingOccurrences(of: "format: kiosk ", with: "format: nginx ")
                .replacingOccurrences(of: "  # public_url: https://kiosk.example.cat", with: "  public_url: https://127.0.0.1:\(nginxPort)")
        }
        let kiosk = try await ServerProcess(["--config", config], environment: [
            "KIOSK_SECRET": String(repeating: "d", count: 40), "KIOSK_LINK_SECRET": linkSecret])

        var conf = try String(contentsOfFile: TestKiosk.repositoryRoot + "/Deploy/nginx-kiosk.conf", encoding: .utf8)
        for (placeholder, value) in [("@LISTEN@", "127.0.0.1:\(nginxPort) ssl"), ("@CERTIFICATE@", certificate),
                                     ("@CERTIFICATE_KEY@", key), ("@KIOSK@", "127.0.0.1:\(kiosk.port)"),
                                     ("@EDITIONS@", directory.path + "/Editions/"), ("@LINK_SECRET@", linkSecret)] {
            conf = conf.replacingOccurrences(of: placeholder, with: value)
        }
        let main = """
            worker_processes 1;
            pid \(directory.path)/nginx.pid;
            error_log \(directory.path)/nginx-error.log;
            events { worker_connections 64; }
            http {
              access_log off;
              client_body_temp_path \(directory.path)/body; proxy_temp_path \(directory.path)/proxy;
              fastcgi_temp_path \(directory.path)/fcgi; uwsgi_temp_path \(directory.path)/uwsgi; scgi_temp_path \(directory.path)/scgi;
            \(conf)
            }
            """
        try main.write(toFile: directory.path + "/nginx.conf", atomically: true, encoding: .utf8)
        let client = """
            import hashlib, json, ssl, time, urllib.request, urllib.error, xmlrpc.client
            context = ssl._create_unverified_context()
            base = "https://127.0.0.1:\(nginxPort)"
            for _ in range(50):
                try:
                    urllib.request.urlopen(base + "/healthz", context=context, timeout=5); break
                except Exception:
                    time.sleep(0.1)
            p = xmlrpc.client.ServerProxy("https://kiosk:secret@127.0.0.1:\(nginxPort)/RPC2", context=context)
            issue = p.epquiosc.getEdicio("quiosc", "", "8", "2025-05-31", "", "Linux")
            def get(url):
                try:
                    with urllib.request.urlopen(url, context=context, timeout=10) as r:
                        return r.status, r.read()
                except urllib.error.HTTPError as e:
                    return e.code, b""
            status, blob = get(issue["zip"])
            tampered = get(issue["zip"].replace("md5=", "md5=A"))[0]
            metrics = get(base + "/metrics")[0]
            print(json.dumps([issue["zip"].startswith(base + "/files/8/2025-05-31/"), status,
                              hashlib.sha256(blob).hexdigest() == issue["zip_sha256"], tampered, metrics]))
            """
        try client.write(toFile: directory.path + "/client.py", atomically: true, encoding: .utf8)
        // nginx runs as a daemon for the client's duration and is stopped whatever the client does.
        let output = try await runClient("bash", ["-c", """
            /usr/sbin/nginx -p \(directory.path) -c \(directory.path)/nginx.conf || exit 1
            timeout 60 python3 \(directory.path)/client.py; status=$?
            /usr/sbin/nginx -p \(directory.path) -c \(directory.path)/nginx.conf -s stop
            exit $status
            """])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [Any])
        #expect(report[0] as? Bool == true, "links point at nginx: \(output)")
        #expect(report[1] as? Int == 200)
        #expect(report[2] as? Bool == true, "the bundle nginx served is the one getEdicio described")
        #expect(report[3] as? Int == 403)
        #expect(report[4] as? Int == 404, "metrics are not exposed through nginx")
        kiosk.signal(SIGTERM)
        _ = try await kiosk.waitForExit()
    }
}
