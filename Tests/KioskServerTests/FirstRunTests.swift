import Foundation
import KioskTestSupport
import Testing
@testable import KioskServer

/// A fresh deployment whose database owns the accounts reaches the console without editing any file: the
/// start-up log offers a one-time set-up link, usable once and only from this machine, that creates the
/// first operator and signs them in.
@Suite struct FirstRunTests {
    @Test func theSetUpLinkCreatesTheFirstOperatorOnceFromThisMachineOnly() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory) { $0 + "\ncatalogue_source: console\n" }
        let server = try await ServerProcess(["--config", config], environment: EndToEndTests.environment)
        defer { server.signal(SIGKILL) }
        let line = try #require(server.log.split(separator: "\n").first { $0.contains("/admin/setup?token=") }, "\(server.log)")
        let token = try #require(line.firstMatch(of: /token=([A-Za-z0-9_-]{43})/)?.1, "\(line)")
        let base = "http://127.0.0.1:\(server.port)"
        let output = try await runClient("python3", ["-c", """
            import http.cookiejar, json, re, urllib.error, urllib.parse, urllib.request
            base, link = "\(base)", "\(base)/admin/setup?token=\(token)"
            def status(request, opener=urllib.request.build_opener()):
                try:
                    return opener.open(request).status
                except urllib.error.HTTPError as e:
                    return e.code
            out = {"forwarded": status(urllib.request.Request(link, headers={"X-Forwarded-For": "203.0.113.7"})),
                   "wrong_token": status(base + "/admin/setup?token=" + "A" * 43)}
            jar = http.cookiejar.CookieJar()
            opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
            page = opener.open(link).read().decode()
            csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
            def send(**fields):
                try:
                    answer = opener.open(link, urllib.parse.urlencode(dict(csrf=csrf, **fields)).encode())
                    return answer.status, answer.geturl(), answer.read().decode()
                except urllib.error.HTTPError as e:
                    return e.code, "", e.read().decode()
            short = send(username="marta", password="short", password2="short")
            out["short"] = [short[0], int("at least 8 characters" in short[2])]
            created = send(username="marta", password="marta-password", password2="marta-password")
            out["created"] = [created[0], created[1], int("marta" in created[2])]
            out["again"] = status(link)
            out["again_post"] = send(username="other", password="other-password", password2="other-password")[0]
            print(json.dumps(out))
            """])
        let result = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
        #expect(result["forwarded"] as? Int == 403, "a request a proxy forwarded is not from this machine")
        #expect(result["wrong_token"] as? Int == 404)
        #expect(result["short"] as? [AnyHashable] == [422, 1], "the console's password rule, the link kept: \(result)")
        #expect(result["created"] as? [AnyHashable] == [200, "\(base)/admin", 1], "signed in on the dashboard: \(result)")
        #expect(result["again"] as? Int == 404 && result["again_post"] as? Int == 404, "used once: \(result)")

        let listed = try await ServerProcess.run(["account", "list", "--config", config])
        #expect(listed.output.contains("operator:marta (operator)"), "\(listed.output)")
        #expect(!listed.errors.contains("no operator"))
    }

    @Test func withTheFileOwningTheAccountsTheLogSaysHowToAddAnOperator() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory)
        let server = try await ServerProcess(["--config", config], environment: EndToEndTests.environment)
        defer { server.signal(SIGKILL) }
        #expect(server.log.contains("no operator can sign in to the console"), "\(server.log)")
        #expect(!server.log.contains("/admin/setup?token="))
    }
}
