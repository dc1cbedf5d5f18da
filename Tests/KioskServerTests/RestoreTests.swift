import Foundation
import KioskTestSupport
import Testing

/// Restoring a withdrawn issue end to end: over the publishers' HTTP endpoint, a reader app's `cercar` and
/// `getEdicions` lose the issue at the withdrawal and get it back at the restore; refusals say why; and
/// the CLI's `restore` next to `withdraw`.
@Suite struct RestoreTests {
    @Test func aWithdrawnIssueComesBackToListingsAndSearchOverHTTP() async throws {
        let kiosk = try await SearchMethodTests.searchKiosk()
        let result = try await kiosk.withServer { port in
            try await python(port, """
                import base64, urllib.error, urllib.request
                def call(method, path):
                    request = urllib.request.Request("http://127.0.0.1:\(port)/publish/" + path, method=method)
                    request.add_header("Authorization", "Basic " + base64.b64encode(b"publisher:publisher-secret").decode())
                    try:
                        return urllib.request.urlopen(request).status
                    except urllib.error.HTTPError as e:
                        return e.code
                def state():
                    newest = [e["data"] for e in p.epquiosc.getEdicions("quiosc", "") if e["id"] == "1"]
                    return newest + [len(p.epquiosc.cercar("quiosc", "", "hidroavió", "", "", "", 10))]
                result = {"before": state(), "withdraw": call("DELETE", "1/2025-05-31")}
                result["withdrawn"] = state()
                result["restore"] = call("POST", "1/2025-05-31/restore")
                result["restored"] = state()
                result["again"] = call("POST", "1/2025-05-31/restore")
                result["never"] = call("POST", "1/2020-01-01/restore")
                call("DELETE", "1/2025-05-30")
                import shutil; shutil.rmtree("\(kiosk.directory.path)/Editions/1/2025-05-30")
                result["gone"] = call("POST", "1/2025-05-30/restore")
                """)
        }
        let report = try #require(result.value as? [String: Any])
        func state(_ key: String) -> [String] { (report[key] as? [Any] ?? []).map { "\($0)" } }
        #expect(state("before") == ["2025-05-31", "1"])
        #expect(report["withdraw"] as? Int == 200)
        #expect(state("withdrawn") == ["2025-05-30", "0"], "getEdicions no longer shows it, cercar no longer finds its word")
        #expect(report["restore"] as? Int == 200)
        #expect(state("restored") == ["2025-05-31", "1"], "both back")
        #expect(report["again"] as? Int == 409 && report["never"] as? Int == 404 && report["gone"] as? Int == 410, "\(report)")
    }

    @Test func theCLIRestoresWhatItWithdrew() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try writeTestConfiguration(in: directory)
        let folder = try await IssueFolders.writeIssue(directory.path + "/in", pages: 2, seed: 5)
        let environment = OperatorCommandTests.secret
        let publish = try await ServerProcess.run(["publish", "--quiet", "--config", config, "--edition", "8", "--date", "2031-01-01", folder],
                                                  environment: environment)
        #expect(publish.status == 0, "\(publish.errors)")
        let arguments = ["--config", config, "--edition", "8", "--date", "2031-01-01"]
        #expect(try await ServerProcess.run(["withdraw"] + arguments, environment: environment).status == 0)
        let restore = try await ServerProcess.run(["restore"] + arguments, environment: environment)
        #expect(restore.status == 0 && restore.output.contains("restored edition 8 2031-01-01 (revision 1)"), "\(restore.errors)")
        let again = try await ServerProcess.run(["restore"] + arguments, environment: environment)
        #expect(again.status != 0 && again.errors.contains("is not withdrawn"), "\(again.errors)")
    }
}
