import Foundation
import KioskModels
import KioskTestSupport
import Testing
@testable import KioskServer
@testable import KioskFiles

/// Publishing from PDFs alone through the real binary: the CLI with a PDF-only folder, and over HTTP a
/// single PDF body and a ZIP of a PDF-only folder; then the issues as Python's `xmlrpc.client` sees them,
/// and hostile PDFs refused or rendered while the server keeps answering.
@Suite struct PDFPublishingTests {
    static let environment = ["KIOSK_SECRET": String(repeating: "p", count: 40)]

    @Test func pdfOnlyIssuesThroughTheCLIAndHTTP() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory)
        let samples = TestKiosk.repositoryRoot + "/Samples/1/2025-06-02/pdf"
        let pages = try FileManager.default.contentsOfDirectory(atPath: samples).sorted().map { samples + "/" + $0 }

        // The CLI: one multi-page PDF merged by qpdf from the data set's pages.
        let cliFolder = directory.path + "/cli"
        try FileManager.default.createDirectory(atPath: cliFolder, withIntermediateDirectories: true)
        #expect(try await runClient("qpdf", ["--empty", "--pages"] + pages + ["--", cliFolder + "/issue.pdf"]).isEmpty)
        let published = try await ServerProcess.run(
            ["publish", "--config", config, "--edition", "8", "--date", "2025-06-28", cliFolder], environment: Self.environment)
        #expect(published.status == 0, "\(published.errors)")
        #expect(published.output.contains("rendered \(pages.count) pages from 1 PDF (sections from single)"), "\(published.output)")
        // Progress on standard error (a pipe here: a line per phase): rendering first, in pages.
        #expect(published.errors.hasPrefix("rendering 0/\(pages.count) pages, "), "\(published.errors)")

        let server = try await ServerProcess(["--config", config], environment: Self.environment)
        let base = "http://127.0.0.1:\(server.port)/publish/8"
        // HTTP: the issue as one PDF body, with an outline.
        let single = directory.path + "/outlined.pdf"
        _ = FileManager.default.createFile(atPath: single, contents: Data(TestPDFs.make(
            texts: ["Portada del dia", "Politica", "Mes politica", "Esports del dia"],
            outline: [("Portada", 1), ("Política", 2), ("Esports", 4)])))
        let answer = try await runClient("curl", ["-sS", "-u", "publisher:publisher-secret", "-H", "Content-Type: application/pdf",
                                                  "-T", single, "\(base)/2025-06-29"])
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any], "\(answer)")
        #expect(summary["pages"] as? Int == 4)
        #expect(summary["revision"] as? Int == 1)
        let rendering = try #require(summary["rendering"] as? [String: Any])
        #expect(rendering["pages"] as? Int == 4 && rendering["sections"] as? String == "outline", "\(rendering)")

        // HTTP: a ZIP of one PDF per page with a sections manifest.
        let perPage = directory.path + "/per-page"
        try FileManager.default.createDirectory(atPath: perPage, withIntermediateDirectories: true)
        for (index, page) in pages.enumerated() { try FileManager.default.copyItem(atPath: page, toPath: "\(perPage)/page\(index + 1).pdf") }
        _ = FileManager.default.createFile(atPath: perPage + "/sections.json", contents: Data(
            #"[{"id": 1, "name": "Portada", "pages": "1"}, {"id": 2, "name": "Política", "pages": "2-\#(pages.count)"}]"#.utf8))
        try await runClient("sh", ["-c", "cd '\(perPage)' && zip -q -r ../per-page.zip ."])
        let zipped = try await runClient("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-u", "publisher:publisher-secret",
                                                  "-T", directory.path + "/per-page.zip", "\(base)/2025-06-30"])
        #expect(zipped == "201")

        // Hostile uploads: refused (422) or rendered; the server answers after each, nothing stays in staging.
        let truncated = TestPDFs.make(texts: ["a", "b"])
        let hostile: [(String, [UInt8], Set<String>)] = [
            ("truncated", Array(truncated.prefix(truncated.count / 2)), ["422"]),
            ("not-a-pdf", Array("GIF89a, not a PDF".utf8), ["422"]),
            ("nested", TestPDFs.deeplyNested(depth: 100_000), ["201", "422"]),
            ("huge", TestPDFs.make(texts: ["Huge"], mediaBox: "0 0 1036800 1036800"), ["201"]),
            ("scripted", TestPDFs.withJavaScriptAndAttachment(), ["201"]),
        ]
        for (name, bytes, expected) in hostile {
            let file = directory.path + "/\(name).pdf"
            _ = FileManager.default.createFile(atPath: file, contents: Data(bytes))
            let status = try await runClient("curl", ["-sS", "-o", directory.path + "/\(name).answer", "-w", "%{http_code}",
                                                      "-u", "publisher:publisher-secret", "-H", "Content-Type: application/pdf",
                                                      "-T", file, "\(base)/2025-07-01"])
            let body = (try? String(contentsOfFile: directory.path + "/\(name).answer", encoding: .utf8)) ?? ""
            #expect(expected.contains(status), "\(name): \(status) \(body)")
            if status == "422" { #expect(body.contains("issue.pdf"), "\(name): \(body)") }
            let health = try await runClient("curl", ["-sS", "http://127.0.0.1:\(server.port)/healthz"])
            #expect(health.hasPrefix("ok"), "\(name): the server stopped answering")
            let staging = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/Editions/.staging")
            #expect(staging.isEmpty, "\(name) left \(staging)")
        }

        // Python's client: the PDF issues are listed and downloaded like classic ones.
        let script = """
            import io, json, struct, subprocess, tempfile, urllib.request, xmlrpc.client, zipfile
            def size(jpeg):
                i = 2
                while i < len(jpeg):
                    marker, length = jpeg[i + 1], struct.unpack(">H", jpeg[i + 2:i + 4])[0]
                    if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                        h, w = struct.unpack(">HH", jpeg[i + 5:i + 9]); return [w, h]
                    i += 2 + length
            p = xmlrpc.client.ServerProxy("http://kiosk:secret@127.0.0.1:\(server.port)/RPC2")
            out = {}
            for date in ("2025-06-28", "2025-06-29", "2025-06-30"):
                issue = p.epquiosc.getEdicio("quiosc", "", "8", date, "", "Linux")
                blob = urllib.request.urlopen(issue["zip"]).read()
                with tempfile.NamedTemporaryFile(suffix=".zip") as f:
                    f.write(blob); f.flush()
                    unzip = subprocess.run(["unzip", "-tq", f.name], capture_output=True).returncode
                first = issue["pagines"][0]
                out[date] = {"pages": len(issue["pagines"]), "unzip": unzip,
                             "sections": [q["seccio"] for q in issue["pagines"]],
                             "jpg": size(urllib.request.urlopen(first["jpg"]).read()),
                             "jpgA": size(urllib.request.urlopen(first["jpgA"]).read()),
                             "pdf": urllib.request.urlopen(first["pdf"]).read()[:5].decode()}
            print(json.dumps(out))
            """
        let output = try await runClient("python3", ["-c", script])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: [String: Any]], "\(output)")
        for (date, count) in [("2025-06-28", pages.count), ("2025-06-29", 4), ("2025-06-30", pages.count)] {
            let issue = try #require(report[date])
            #expect(issue["pages"] as? Int == count, "\(date)")
            #expect(issue["unzip"] as? Int == 0, "\(date)")
            #expect(issue["jpg"] as? [Int] == [300, 400] && issue["jpgA"] as? [Int] == [1200, 1600], "\(date): \(issue)")
            #expect(issue["pdf"] as? String == "%PDF-", "\(date)")
        }
        #expect(report["2025-06-28"]?["sections"] as? [String] == Array(repeating: "Presència", count: pages.count))
        #expect(report["2025-06-29"]?["sections"] as? [String] == ["Portada", "Política", "Política", "Esports"])
        #expect(report["2025-06-30"]?["sections"] as? [String] == ["Portada"] + Array(repeating: "Política", count: pages.count - 1))

        // Search: a word printed on page 7 of a PDF issue is found on page 7 of that issue, accents folded.
        let tenPages = directory.path + "/ten-pages.pdf"
        _ = FileManager.default.createFile(atPath: tenPages, contents: Data(TestPDFs.make(
            texts: (1...10).map { $0 == 7 ? "La presencia del consell a Girona" : "Pagina \($0) del dia" })))
        let searched = try await runClient("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-u", "publisher:publisher-secret",
                                                    "-H", "Content-Type: application/pdf", "-T", tenPages, "\(base)/2025-07-02"])
        #expect(searched == "201")
        let found = try await runClient("python3", ["-c", """
            import json, xmlrpc.client
            p = xmlrpc.client.ServerProxy("http://kiosk:secret@127.0.0.1:\(server.port)/RPC2")
            hits = p.epquiosc.cercar("quiosc", "", "Presència", "8", "", "", 10)
            phrase = p.epquiosc.cercar("quiosc", "", '"consell a Girona"', "", "2025-07-01", "2025-07-31", 5)
            print(json.dumps([[h["id"], h["data"], h["numero"], h["fragment"]] for h in hits + phrase]))
            """])
        let hits = try #require(try JSONSerialization.jsonObject(with: Data(found.utf8)) as? [[String]], "\(found)")
        #expect(hits.map { Array($0.prefix(3)) } == [["8", "2025-07-02", "7"], ["8", "2025-07-02", "7"]], "\(hits)")
        #expect(hits.first?.last?.contains("<b>presencia</b>") == true, "\(hits)")
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
    }

    /// With `Accept: application/x-ndjson` the upload's answer streams the server's progress (rendering
    /// in pages first, then the publish's phases) and ends with the outcome, a success or a refusal.
    @Test func theCLIPublishesTheArchiveOrPDFFileThatPUTTakes() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory)
        func publish(_ date: String, _ path: String) async throws -> (status: Int32, output: String, errors: String) {
            try await ServerProcess.run(["publish", "--config", config, "--edition", "8", "--date", date, path],
                                        environment: Self.environment)
        }
        // The issue as one PDF file.
        let single = directory.path + "/Outlined.PDF"
        _ = FileManager.default.createFile(atPath: single, contents: Data(TestPDFs.make(
            texts: ["Portada", "Politica", "Esports"], outline: [("Portada", 1), ("Esports", 3)])))
        let pdf = try await publish("2025-06-28", single)
        #expect(pdf.status == 0, "\(pdf.errors)")
        #expect(pdf.output.contains("rendered 3 pages from 1 PDF (sections from outline)"), "\(pdf.output)")
        #expect(pdf.output.contains("published edition 8 2025-06-28 revision 1: 3 pages"), "\(pdf.output)")

        // A gzip'd tar and a ZIP of a classic publish folder.
        let folder = try await IssueFolders.writeIssue(directory.path + "/classic", pages: 4, seed: 5)
        try await runClient("tar", ["-C", folder, "-czf", directory.path + "/issue.tar.gz", "."])
        try await runClient("sh", ["-c", "cd '\(folder)' && zip -q -r ../issue.zip ."])
        for (date, archive) in [("2025-06-29", "issue.tar.gz"), ("2025-06-30", "issue.zip")] {
            let result = try await publish(date, directory.path + "/" + archive)
            #expect(result.status == 0, "\(archive): \(result.errors)")
            #expect(result.output.contains("published edition 8 \(date) revision 1: 4 pages"), "\(archive): \(result.output)")
        }

        // A damaged archive and a missing path: refused with the reason, nothing published or left behind.
        let damaged = directory.path + "/damaged.zip"
        _ = FileManager.default.createFile(atPath: damaged, contents: Data("PK\u{3}\u{4} not really a zip".utf8))
        let refused = try await publish("2025-07-01", damaged)
        #expect(refused.status != 0)
        #expect(refused.errors.contains("publish refused"), "\(refused.errors)")
        let missing = try await publish("2025-07-01", directory.path + "/nowhere.zip")
        #expect(missing.status != 0 && missing.errors.contains("does not exist"), "\(missing.errors)")
        let staging = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/Editions/.staging")
        #expect(staging.isEmpty, "left \(staging)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/Editions/8/2025-07-01"))
    }

    @Test func theUploadAnswerStreamsProgress() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try writeTestConfiguration(in: directory)
        let server = try await ServerProcess(["--config", config], environment: Self.environment)
        let pdf = directory.path + "/issue.pdf"
        _ = FileManager.default.createFile(atPath: pdf, contents: Data(TestPDFs.make(texts: (1...6).map { "Pagina \($0)" })))
        let notPDF = directory.path + "/not.pdf"
        _ = FileManager.default.createFile(atPath: notPDF, contents: Data("GIF89a, not a PDF".utf8))

        func upload(_ file: String, date: String) async throws -> (status: String, lines: [[String: Any]]) {
            let answer = directory.path + "/\(date).answer"
            let status = try await runClient("curl", ["-sS", "-N", "-o", answer, "-w", "%{http_code}", "-u", "publisher:publisher-secret",
                                                      "-H", "Content-Type: application/pdf", "-H", "Accept: application/x-ndjson",
                                                      "-T", file, "http://127.0.0.1:\(server.port)/publish/8/\(date)"])
            let text = try String(contentsOfFile: answer, encoding: .utf8)
            let lines = try text.split(separator: "\n").map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON line: \(line)")
            }
            return (status, lines)
        }

        let (status, lines) = try await upload(pdf, date: "2025-08-01")
        #expect(status == "200")
        let steps = lines.dropLast()
        let phases = steps.compactMap { $0["phase"] as? String }
        #expect(phases.first == "rendering", "\(lines)")
        #expect(steps.contains { $0["phase"] as? String == "rendering" && $0["files_total"] as? Int == 6 }, "rendering counts pages: \(lines)")
        for phase in ["checking", "bundling", "committing"] { #expect(phases.contains(phase), "\(phase) missing from \(phases)") }
        let order = ["rendering", "checking", "copying", "bundling", "committing", "done"]
        #expect(phases == phases.sorted { order.firstIndex(of: $0) ?? 9 < order.firstIndex(of: $1) ?? 9 }, "phases in order: \(phases)")
        let outcome = try #require(lines.last)
        #expect(outcome["status"] as? Int == 201, "\(outcome)")
        let published = try #require(outcome["published"] as? [String: Any])
        #expect(published["pages"] as? Int == 6 && (published["rendering"] as? [String: Any])?["pages"] as? Int == 6, "\(published)")

        let refused = try await upload(notPDF, date: "2025-08-02")
        #expect(refused.status == "200")
        let last = try #require(refused.lines.last)
        #expect(last["status"] as? Int == 422 && (last["error"] as? String)?.contains("issue.pdf") == true, "\(refused.lines)")
        let staging = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/Editions/.staging")
        #expect(staging.isEmpty, "a refused upload left \(staging)")
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0)
    }
}
