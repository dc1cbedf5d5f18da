import Foundation
import KioskModels
import KioskStorage
import Testing
@testable import KioskServer

/// The real binary end to end: sample data, publishing through the CLI and over HTTP, downloads by
/// signed link checked with `unzip -t` and Python's `zipfile`, and `kill -9` during a publish.
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
        #expect(report["hash"] as? [String] == ["https://presencia.example.cat", "", "https://presencia.example.cat/?hash="])
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
        let first = try FileDeliveryTests.Fixture.writeIssue(directory.path + "/in-cli", pages: 5, seed: 3)
        let second = try FileDeliveryTests.Fixture.writeIssue(directory.path + "/in-http", pages: 3, seed: 9)
        let published = try await ServerProcess.run(
            ["publish", "--config", config, "--edition", "8", "--date", "2025-06-29", first], environment: Self.environment)
        #expect(published.status == 0, "\(published.errors)")
        #expect(published.output.contains("published edition 8 2025-06-29 revision 1"))

        let server = try await ServerProcess(["--config", config], environment: Self.environment)
        let archive = directory.path + "/issue.tar"
        try await runClient("tar", ["-C", second, "-cf", archive, "."])
        let upload = try await runClient("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-u", "publisher:publisher-secret",
                                                  "-T", archive, "http://127.0.0.1:\(server.port)/publish/8/2025-06-30"])
        #expect(upload == "201")

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
                page1 = urllib.request.urlopen(issue["pagines"][0]["jpgA"]).read()
                same = same and page1 == open(os.path.join(folder, manifest["pages"][0]["jpgA"]), "rb").read()
                out[date] = [int(ok), unzip, int(same), len(issue["pagines"]), int("edicio.xml" in z.namelist())]
            print(json.dumps(out))
            """
        let output = try await runClient("python3", ["-c", script])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: [Int]])
        // [sha-256 and size match, unzip -t exit status, bytes identical, pages, has edicio.xml]
        #expect(report["2025-06-29"] == [1, 0, 1, 5, 1])
        #expect(report["2025-06-30"] == [1, 0, 1, 3, 1])
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
    }

    @Test func killDuringPublishLeavesNothingHalfVisible() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory)
        let folder = try FileDeliveryTests.Fixture.writeIssue(directory.path + "/in", pages: 120, seed: 5)
        var interrupted = 0
        for (index, delay) in [5, 20, 40, 80, 120, 200, 400].enumerated() {
            let date = "2025-06-\(String(format: "%02d", index + 1))"
            let process = Process()
            process.executableURL = ServerProcess.executable
            process.arguments = ["publish", "--quiet", "--config", config, "--edition", "8", "--date", date, folder]
            process.environment = ProcessInfo.processInfo.environment.merging(Self.environment) { $1 }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            try await Task.sleep(for: .milliseconds(delay))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal { interrupted += 1 }
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
