import GRDB
import Foundation
import KioskModels
import KioskSQLite
import KioskTestSupport
import Testing
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles

/// The real binary end to end: sample data, publishing through the CLI and over HTTP, downloads by
/// signed link checked with `unzip -t` and Python's `zipfile`, withdrawal, a republish while a reader
/// downloads, and `kill -9` during a publish.
@Suite struct EndToEndTests {
    static let environment = ["KIOSK_SECRET": String(repeating: "e", count: 40)]

    @Test func sampleDataAnswersEveryMethodForRuby() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory) {
            $0.replacingOccurrences(of: "# samples: none", with: "samples: \(TestKiosk.repositoryRoot)/Samples")
        }
        let server = try await ServerProcess(["--config", config], environment: Self.environment)
        let output = try await runClient("ruby", [TestKiosk.repositoryRoot + "/Tests/Clients/kiosk_ruby.rb",
                                                  "http://kiosk:secret@127.0.0.1:\(server.port)/RPC2"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect(report["editions"] as? [[String]] == [["1", "10", "2025-06-02"], ["2", "20", "2025-06-02"], ["8", "30", "2025-05-31"]])
        #expect(report["types"] as? [String] == ["String"])
        #expect(report["issues"] as? [String] == ["2025-05-31", "2025-05-24"])
        #expect(report["registrar"] as? [String] == ["0", "0", "8"])
        #expect(report["not_entitled"] as? Int == 5)
        #expect(report["demo"] as? [String] == ["1", "1", ""])
        #expect(report["issue"] as? [String] == ["1", "2025-06-02", "4", "64", "true"])
        #expect(report["seccions"] as? [String] == ["Portada", "Política", "Esports", "Contraportada"])
        // Presència has no web_kiosk in the sample configuration: Kiosk's own web kiosk.
        let ownKiosk = "http://127.0.0.1:\(server.port)/web/presencia"
        #expect(report["hash"] as? [String] == [ownKiosk, "", ownKiosk + "/?hash="])
        #expect(report["wrong_credentials"] as? Int == 6)
        #expect(report["unknown_app"] as? Int == 1)
        #expect(report["not_offered"] as? Int == 3)
        #expect(report["no_issue"] as? Int == 4)
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
    }

    @Test func issuesPublishedByCLIAndHTTPDownloadIntact() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory)
        let first = try await IssueFolders.writeIssue(directory.path + "/in-cli", pages: 5, seed: 3)
        let second = try await IssueFolders.writeIssue(directory.path + "/in-http", pages: 3, seed: 9)
        let published = try await ServerProcess.run(
            ["publish", "--config", config, "--edition", "8", "--date", "2025-06-29", first], environment: Self.environment)
        #expect(published.status == 0, "\(published.errors)")
        #expect(published.output.contains("published edition 8 2025-06-29 revision 1"))
        // Progress on standard error (a pipe here: a line per phase), ending with the files, bytes and rate.
        let pageFiles = try FileManager.default.subpathsOfDirectory(atPath: first).filter { $0.contains("/") }
        let pageBytes = try pageFiles.reduce(0) { $0 + ((try FileManager.default.attributesOfItem(atPath: first + "/" + $1)[.size] as? Int) ?? 0) }
        let megabytes = String(format: "%.1f MB", Double(pageBytes) / 1e6)
        let phases = published.errors.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(phases.contains("copying") && phases.last == "done", "\(published.errors)")
        let done = try #require(published.errors.split(separator: "\n").last { $0.hasPrefix("done ") })
        #expect(done.hasPrefix("done 15/15 files, \(megabytes)/\(megabytes), "), "\(done)")
        #expect(done.contains(" MB/s, "), "\(done)")

        let server = try await ServerProcess(["--config", config], environment: Self.environment)
        let archive = directory.path + "/issue.tar"
        try await runClient("tar", ["-C", second, "-cf", archive, "."])
        let upload = try await runClient("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-u", "publisher:publisher-secret",
                                                  "-T", archive, "http://127.0.0.1:\(server.port)/publish/8/2025-06-30"])
        #expect(upload == "201")
        // An API client's credentials are not a publisher's.
        let asClient = try await runClient("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-u", "kiosk:secret",
                                                    "-T", archive, "http://127.0.0.1:\(server.port)/publish/8/2025-07-01"])
        #expect(asClient == "401")

        // Python's client fetches both issues and checks every byte against the published folders.
        let script = """
            import hashlib, io, json, os, subprocess, sys, tempfile, urllib.request, xmlrpc.client, zipfile
            p = xmlrpc.client.ServerProxy("http://kiosk:secret@127.0.0.1:\(server.port)/RPC2")
            out = {}
            for date, folder in (("2025-06-29", "\(first)"), ("2025-06-30", "\(second)")):
                issue = p.epquiosc.getEdicio("quiosc", "", "8", date, "", "Linux")
                blob = urllib.request.urlopen(issue["zip"]).read()
                ok = hashlib.sha256(blob).hexdigest() == issue["zip_sha256"] and len(blob) == int(issue["zip_size"])
                with tempfile.NamedTemporaryFile(suffix=".zip") as f:
                    f.write(blob); f.flush()
                    unzip = subprocess.run(["unzip", "-tq", f.name], capture_output=True).returncode
                z = zipfile.ZipFile(io.BytesIO(blob))
                same = z.testzip() is None
                manifest = json.load(open(os.path.join(folder, "issue.json")))
                for page in manifest["pages"]:
                    n = "%03d" % page["number"]
                    for kind, name in (("pdf", "pdf/%s.pdf" % n), ("jpg", "jpg/%s.jpg" % n), ("jpgA", "jpgA/%s.jpg" % n)):
                        same = same and z.read(name) == open(os.path.join(folder, page[kind]), "rb").read()
                # Every page link serves the published file, with its type.
                types = set()
                for page, listed in zip(manifest["pages"], issue["pagines"]):
                    for kind in ("pdf", "jpg", "jpgA"):
                        with urllib.request.urlopen(listed[kind]) as answer:
                            same = same and answer.read() == open(os.path.join(folder, page[kind]), "rb").read()
                            types.add((kind, answer.headers["Content-Type"]))
                out[date] = [int(ok), unzip, int(same), len(issue["pagines"]), int("edicio.xml" in z.namelist())]
                out[date + " types"] = sorted("%s %s" % t for t in types)
            # The cover links of both listings serve page 1's thumbnail of the newest issue.
            cover = open(os.path.join("\(second)", json.load(open("\(second)/issue.json"))["pages"][0]["jpg"]), "rb").read()
            listed = [e for e in p.epquiosc.getEdicions("quiosc", "") if e["id"] == "8"]
            recent = p.epquiosc.getDarrersEdicio("quiosc", "", "8", "", 7, "DESC")
            out["covers"] = [int(urllib.request.urlopen(e["portada"]).read() == cover) for e in listed + recent[:1]]
            out["dates"] = [i["data"] for i in recent]
            print(json.dumps(out))
            """
        let output = try await runClient("python3", ["-c", script])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        // [sha-256 and size match, unzip -t exit status, bytes identical, pages, has edicio.xml]
        #expect(report["2025-06-29"] as? [Int] == [1, 0, 1, 5, 1])
        #expect(report["2025-06-30"] as? [Int] == [1, 0, 1, 3, 1])
        let types = ["jpg image/jpeg", "jpgA image/jpeg", "pdf application/pdf"]
        #expect(report["2025-06-29 types"] as? [String] == types)
        #expect(report["2025-06-30 types"] as? [String] == types)
        #expect(report["covers"] as? [Int] == [1, 1])
        #expect(report["dates"] as? [String] == ["2025-06-30", "2025-06-29"])

        // `withdraw` hides an issue from the running server; a second withdraw says there is nothing to hide.
        let withdrawn = try await ServerProcess.run(
            ["withdraw", "--config", config, "--edition", "8", "--date", "2025-06-29"], environment: Self.environment)
        #expect(withdrawn.status == 0, "\(withdrawn.errors)")
        #expect(withdrawn.output.contains("withdrew edition 8 2025-06-29"))
        let after = try await runClient("python3", ["-c", """
            import json, xmlrpc.client
            p = xmlrpc.client.ServerProxy("http://kiosk:secret@127.0.0.1:\(server.port)/RPC2")
            try:
                p.epquiosc.getEdicio("quiosc", "", "8", "2025-06-29", "", "Linux"); fault = 0
            except xmlrpc.client.Fault as f:
                fault = f.faultCode
            print(json.dumps([fault, [i["data"] for i in p.epquiosc.getDarrersEdicio("quiosc", "", "8", "", 7, "DESC")]]))
            """])
        #expect(after.trimmingCharacters(in: .whitespacesAndNewlines) == #"[4, ["2025-06-30"]]"#)
        let again = try await ServerProcess.run(
            ["withdraw", "--config", config, "--edition", "8", "--date", "2025-06-29"], environment: Self.environment)
        #expect(again.status != 0)
        #expect(again.errors.contains("has no visible issue on 2025-06-29; nothing changed"))
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
    }

    @Test func republishDuringAnHTTPDownloadLetsItFinish() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory)
        let old = try await IssueFolders.writeIssue(directory.path + "/old", pages: 120, seed: 1)
        let new = try await IssueFolders.writeIssue(directory.path + "/new", pages: 120, seed: 2)
        let publish = ["publish", "--quiet", "--config", config, "--edition", "8", "--date", "2025-06-29"]
        #expect(try await ServerProcess.run(publish + [old], environment: Self.environment).status == 0)
        let server = try await ServerProcess(["--config", config], environment: Self.environment)
        let bundleLink = """
            import sys, xmlrpc.client
            issue = xmlrpc.client.ServerProxy("http://kiosk:secret@127.0.0.1:\(server.port)/RPC2").epquiosc.getEdicio("quiosc", "", "8", "2025-06-29", "", "Linux")
            print(issue["zip"], issue["zip_sha256"], issue["zip_size"])
            """
        let before = try await runClient("python3", ["-c", bundleLink]).split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        let size = try #require(Int(before[2]))
        #expect(size > 5_000_000, "the bundle must outgrow the socket buffers (4 MiB at most here)")

        // A reader with a small receive buffer takes the first 64 KiB, then stops reading until told to go on:
        // the rest of the bundle is still to be read from disk when the same date is published again.
        let started = directory.path + "/started", proceed = directory.path + "/proceed"
        let reader = try ChildProcess("/usr/bin/env", ["python3", "-c", """
            import hashlib, os, socket, sys, time, urllib.parse
            link, started, proceed = sys.argv[1:4]
            url = urllib.parse.urlsplit(link)
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
            s.connect((url.hostname, url.port))
            s.sendall(("GET %s HTTP/1.1\\r\\nHost: %s\\r\\nConnection: close\\r\\n\\r\\n" % (url.path + ("?" + url.query if url.query else ""), url.netloc)).encode())
            data = b""
            while b"\\r\\n\\r\\n" not in data:
                data += s.recv(16384)
            head, body = data.split(b"\\r\\n\\r\\n", 1)
            while len(body) < 65536:
                body += s.recv(16384)
            open(started, "w").close()
            while not os.path.exists(proceed):
                time.sleep(0.02)
            while True:
                chunk = s.recv(1 << 16)
                if not chunk:
                    break
                body += chunk
            print(head.split(b"\\r\\n")[0].decode(), len(body), hashlib.sha256(body).hexdigest())
            """, before[0], started, proceed], output: .pipe)
        for _ in 0..<400 where !FileManager.default.fileExists(atPath: started) { try await Task.sleep(for: .milliseconds(25)) }
        #expect(FileManager.default.fileExists(atPath: started), "the download did not start")

        let republished = try await ServerProcess.run(publish + [new], environment: Self.environment)
        #expect(republished.status == 0, "\(republished.errors)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/Editions/8/2025-06-29/r1"), "the old revision is still on disk")
        #expect(reader.isRunning)

        // The reader gets every byte of the old bundle; new readers get the new one.
        #expect(FileManager.default.createFile(atPath: proceed, contents: nil))
        let result = String(decoding: try await onOwnThread { reader.readOutput() }, as: UTF8.self)
        while reader.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        #expect(result.trimmingCharacters(in: .whitespacesAndNewlines) == "HTTP/1.1 200 OK \(size) \(before[1])")
        let after = try await runClient("python3", ["-c", bundleLink]).split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(after[1] != before[1] && after[0].contains("/r2/"), "\(after)")
        let target = directory.path + "/download.zip"
        try await runClient("curl", ["-sS", "--fail", "-o", target, after[0]])
        #expect(String(try await runClient("sha256sum", [target]).prefix(64)) == after[1])
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
    }

    @Test func killDuringPublishLeavesNothingHalfVisible() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory)
        let folder = try await IssueFolders.writeIssue(directory.path + "/in", pages: 120, seed: 5)
        var interrupted = 0
        for (index, delay) in [5, 20, 40, 80, 120, 200, 400].enumerated() {
            let date = "2025-06-\(String(format: "%02d", index + 1))"
            let process = try ChildProcess(ServerProcess.executable.path,
                                           ["publish", "--quiet", "--config", config, "--edition", "8", "--date", date, folder],
                                           environment: Self.environment)
            // Timed and waited for on a thread of its own: a busy test process's shared threads must not
            // stretch the delay until the publish has finished.
            let killed = try await onOwnThread {
                usleep(UInt32(delay * 1000))
                process.signal(SIGKILL)
                process.waitUntilExit()
                return process.wasSignaled
            }
            if killed { interrupted += 1 }
        }
        #expect(interrupted > 0)
        // The next start cleans up; every visible issue is complete, with its bundle intact.
        let server = try await ServerProcess(["--config", config], environment: Self.environment)
        server.signal(SIGTERM)
        _ = try await server.waitForExit()
        let store = try SQLiteKioskStore(path: directory.path + "/kiosk.sqlite")
        let dates = try await store.pool.read { db in try String.fetchAll(db, sql: "SELECT date FROM issues ORDER BY date") }
        let editions = directory.path + "/Editions"
        for date in dates {
            let contents = try #require(try await store.issueContents(editionID: 8, date: IssueDate(date)!))
            #expect(contents.pages.count == 120, "issue \(date) is visible with \(contents.pages.count) pages")
            for page in contents.pages {
                for path in [page.files.pdf, page.files.jpg, page.files.jpgA] {
                    #expect(FileManager.default.fileExists(atPath: editions + "/" + path), "\(path) missing")
                }
            }
            let bundle = try #require(contents.bundle)
            let size = (try? FileManager.default.attributesOfItem(atPath: editions + "/" + bundle.path)[.size] as? Int) ?? -1
            #expect(Int64(size) == bundle.size, "bundle of \(date) is \(size) bytes")
            let check = try await runClient("unzip", ["-tq", editions + "/" + bundle.path])
            #expect(check.contains("No errors"))
        }
        let staging = (try? FileManager.default.contentsOfDirectory(atPath: editions + "/.staging")) ?? []
        #expect(staging.isEmpty, "left in staging: \(staging)")
        let integrity = try await store.pool.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") }
        #expect(integrity == "ok")
    }
}
