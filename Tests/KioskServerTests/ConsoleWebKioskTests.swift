import Foundation
import Hummingbird
import HummingbirdTesting
import KioskModels
import KioskSQLite
import KioskTestSupport
import Testing
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskPasswords

/// Each app's web kiosk on the console's apps page: edited (sections, aliases, default, base URL),
/// validated like the file, audited, refused without the session's token; answered by `hashQuiosc` on
/// another instance at once; written back by `config export`.
@Suite struct ConsoleWebKioskTests {
    /// The form of quiosc's web kiosk as the page shows it, with `rows` after the two stored sections.
    static func quioscForm(_ token: String, rows: [(String, String, String)] = [], aliases compte: String = "fitxa, usuari",
                           baseURL: String = "https://quiosc.example.cat", defaultRow: String = "0", extra: String = "") -> String {
        var fields = ["csrf=\(token)", "action=web_kiosk", "base_url=\(escape(baseURL))",
                      "section_name_0=portada", "section_path_0=\(escape("/?hash="))", "section_aliases_0=",
                      "section_name_1=compte", "section_path_1=\(escape("/compte?hash="))", "section_aliases_1=\(escape(compte))"]
        for (offset, row) in rows.enumerated() {
            fields += ["section_name_\(offset + 2)=\(escape(row.0))", "section_path_\(offset + 2)=\(escape(row.1))",
                       "section_aliases_\(offset + 2)=\(escape(row.2))"]
        }
        return (fields + ["default_section=\(defaultRow)"]).joined(separator: "&") + extra
    }

    static func escape(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text }

    @Test func sectionsAndAliasesAreEditedValidatedAndAudited() async throws {
        let kiosk = try await ConsoleTests.kiosk()
        try await ConsoleTests.app(kiosk).test(.router) { client in
            let (_, cookie) = try await ConsoleTests.signIn(client, "marta")
            var headers = ConsoleTests.form
            headers[.cookie] = cookie
            let page = ConsoleTests.text(try await client.execute(uri: "/admin/apps", method: .get, headers: [.cookie: cookie]))
            let token = try ConsoleTests.csrf(page)
            #expect(page.contains(#"value="https://quiosc.example.cat""#) && page.contains(#"aria-label="Altres noms: compte""#)
                    && page.contains(#"value="fitxa, usuari""#))
            #expect(page.contains(#"placeholder="http://127.0.0.1:"#) && page.contains("/web/presencia"),
                    "presencia has none stored: Kiosk's own, its sections shown as they act")
            let stored = SampleCatalogue.quioscWebKiosk
            let audited = try await kiosk.store.auditEntries(limit: 100).count
            func post(_ body: String, app: String = "quiosc") async throws -> TestResponse {
                try await client.execute(uri: "/admin/apps/\(app)", method: .post, headers: headers, body: ByteBuffer(string: body))
            }

            // Without the session's token: refused, nothing changed.
            let forged = try await post(Self.quioscForm("AAAA", rows: [("cerca", "/cerca?hash=", "")]))
            #expect(forged.status == .forbidden)
            #expect(try await kiosk.store.webKiosk(appKey: "quiosc") == stored)

            // Refused by the rules the file has too, naming the field in the operator's words; nothing changed, nothing audited.
            let refusals = [
                (Self.quioscForm(token, aliases: "fitxa, PORTADA"), "The web kiosk of app quiosc, aliases of section \"compte\": \"PORTADA\" already names section \"portada\""),
                (Self.quioscForm(token, rows: [("Compte", "/x?hash=", "")]), "The web kiosk of app quiosc, section \"Compte\": is listed twice"),
                (Self.quioscForm(token, baseURL: "quiosc.example.cat"), "The web kiosk of app quiosc, base URL: must start with http:// or https://"),
                (Self.quioscForm(token, rows: [("", "/cerca?hash=", "")]), "The web kiosk of app quiosc, sections: a section name must not be empty"),
                (Self.quioscForm(token, extra: "&section_remove_0=1"), "The web kiosk of app quiosc, default section: \"portada\" is not one of the sections"),
            ]
            for (body, message) in refusals {
                let refused = try await post(body)
                let html = ConsoleTests.text(refused)
                #expect(refused.status == .unprocessableContent && html.contains(message.replacingOccurrences(of: "\"", with: "&quot;")),
                        "\(message): \(html.firstMatch(of: /class="notice"[^>]*>([^<]*)/)?.1 ?? "no notice")")
            }
            #expect(try await kiosk.store.webKiosk(appKey: "quiosc") == stored)
            #expect(try await kiosk.store.auditEntries(limit: 100).count == audited)

            // A section added with its aliases, another alias, compte made the default.
            let added = try await post(Self.quioscForm(token, rows: [("cerca", "/cerca?hash=", " buscar , Recerca,")],
                                                       aliases: "fitxa, usuari, perfil", defaultRow: "1"))
            #expect(added.status == .seeOther && added.headers[.location] == "/admin/apps#app-quiosc", "\(ConsoleTests.text(added))")
            let edited = AppWebKiosk(appKey: "quiosc", baseURL: "https://quiosc.example.cat", sections: [
                WebKiosk.Section(name: "portada", path: "/?hash="),
                WebKiosk.Section(name: "compte", path: "/compte?hash=", aliases: ["fitxa", "usuari", "perfil"]),
                WebKiosk.Section(name: "cerca", path: "/cerca?hash=", aliases: ["buscar", "Recerca"]),
            ], defaultSection: "compte")
            #expect(try await kiosk.store.webKiosk(appKey: "quiosc") == edited)
            let entry = try #require(try await kiosk.store.auditEntries(limit: 1).first)
            #expect(entry.actor == "marta" && entry.action == "app.web_kiosk" && entry.subject == "quiosc")
            #expect(entry.before == stored.summary && entry.after == edited.summary)
            #expect(entry.after.contains("cerca /cerca?hash= (buscar, Recerca)") && entry.after.hasSuffix("default compte"))

            // The page shows it back; a section removed by its box.
            let shown = ConsoleTests.text(try await client.execute(uri: "/admin/apps", method: .get, headers: [.cookie: cookie]))
            #expect(shown.contains(#"name="section_name_2" value="cerca""#) && shown.contains(#"value="buscar, Recerca""#))
            let removed = try await post(Self.quioscForm(token, rows: [("cerca", "/cerca?hash=", "buscar")], extra: "&section_remove_2=1"))
            #expect(removed.status == .seeOther)
            #expect(try await kiosk.store.webKiosk(appKey: "quiosc")?.sections.map(\.name) == ["portada", "compte"])

            // Kiosk's own sent back unchanged stores nothing; Kiosk's own base URL with a section of its own does.
            let own = "csrf=\(token)&action=web_kiosk&base_url=&section_name_0=portada&section_path_0=%2F%3Fhash%3D&section_name_1=compte"
                + "&section_path_1=%2Fcompte%3Fhash%3D&section_name_2=&section_path_2=&section_aliases_2=&default_section="
            let before = try await kiosk.store.auditEntries(limit: 100).count
            #expect(try await post(own, app: "presencia").status == .seeOther)
            #expect(try await kiosk.store.webKiosk(appKey: "presencia") == nil)
            #expect(try await kiosk.store.auditEntries(limit: 100).count == before, "no change, no entry")
            #expect(try await post(own.replacingOccurrences(of: "section_name_1=compte", with: "section_name_1=compte")
                                   + "&section_aliases_1=usuari", app: "presencia").status == .seeOther)
            #expect(try await kiosk.store.webKiosk(appKey: "presencia")
                    == AppWebKiosk(appKey: "presencia", sections: [WebKiosk.Section(name: "portada", path: "/?hash="),
                                                                   WebKiosk.Section(name: "compte", path: "/compte?hash=", aliases: ["usuari"])]))
        }
    }

    @Test func withCatalogueSourceFileTheWebKioskIsShownNotEdited() async throws {
        let kiosk = try await ConsoleTests.kiosk(source: .file)
        try await ConsoleTests.app(kiosk).test(.router) { client in
            let (_, cookie) = try await ConsoleTests.signIn(client, "marta")
            let page = ConsoleTests.text(try await client.execute(uri: "/admin/apps", method: .get, headers: [.cookie: cookie]))
            #expect(page.contains(#"name="section_name_0" value="portada" aria-label="Nom de la secció: portada" disabled"#))
            var headers = ConsoleTests.form
            headers[.cookie] = cookie
            let refused = try await client.execute(uri: "/admin/apps/quiosc", method: .post, headers: headers, body: ByteBuffer(
                string: Self.quioscForm(try ConsoleTests.csrf(page), rows: [("cerca", "/cerca?hash=", "")])))
            #expect(refused.status == .conflict)
            #expect(try await kiosk.store.webKiosk(appKey: "quiosc") == SampleCatalogue.quioscWebKiosk)
        }
    }

    // MARK: Two instances

    @Test func aChangeOnOneInstanceIsWhatHashQuioscAnswersOnAnotherAtOnceOnSQLite() async throws {
        let directory = temporaryDirectory()
        try await Self.twoInstances(directory: directory, database: directory.appendingPathComponent("kiosk.sqlite").path)
    }

    @Test(.enabled(if: TestPostgresServer.configured, TestPostgresServer.skipReason))
    func aChangeOnOneInstanceIsWhatHashQuioscAnswersOnAnotherAtOnceOnPostgreSQL() async throws {
        try await TestPostgresServer.withDatabase { database in
            try await Self.twoInstances(directory: temporaryDirectory(), database: database)
        }
    }

    /// Python's `xmlrpc.client` asks the second instance for a section it does not know yet (the default
    /// opens, and is kept in its memo), an operator adds it on the first instance's console, and the
    /// second answers the new section's URL at the very next call.
    static func twoInstances(directory: URL, database: String) async throws {
        let hash = try await PasswordHashing().hash(ConsoleTests.password, cost: 4)
        let config = try writeTestConfiguration(in: directory) {
            $0 + "\ncatalogue_source: console\noperators:\n  - { username: marta, password_hash: \"\(hash)\", role: operator }\n"
        }
        let arguments = ["--config", config, "--database", database]
        let first = try await ServerProcess(arguments, environment: EndToEndTests.environment)
        let second = try await ServerProcess(arguments, environment: EndToEndTests.environment)
        let script = #"""
            import http.client, json, re, sys, urllib.parse, xmlrpc.client
            console_port, rpc_port, password = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
            app = xmlrpc.client.ServerProxy("http://kiosk:secret@127.0.0.1:%d/RPC2" % rpc_port)
            report = {"before": [app.epusuaris.hashQuiosc("quiosc", "", "", name)["url"] for name in ("cerca", "cerca")]}
            cookies = {}
            def request(method, path, fields=None):
                connection = http.client.HTTPConnection("127.0.0.1", console_port, timeout=30)
                headers = {"Cookie": "; ".join("%s=%s" % pair for pair in cookies.items())}
                body = None
                if fields is not None:
                    body = urllib.parse.urlencode(fields)
                    headers["Content-Type"] = "application/x-www-form-urlencoded"
                connection.request(method, path, body=body, headers=headers)
                response = connection.getresponse()
                for name, value in response.getheaders():
                    if name.lower() == "set-cookie":
                        key, _, rest = value.split(";")[0].partition("=")
                        cookies[key] = rest
                text = response.read().decode()
                connection.close()
                return response.status, text
            def csrf(html):
                return re.search(r'name="csrf" value="([^"]+)"', html).group(1)
            _, page = request("GET", "/admin/sign-in")
            report["sign_in"] = request("POST", "/admin/sign-in", {"csrf": csrf(page), "username": "marta", "password": password})[0]
            _, apps = request("GET", "/admin/apps")
            form = {"csrf": csrf(apps), "action": "web_kiosk", "base_url": "https://quiosc.example.cat",
                    "section_name_0": "portada", "section_path_0": "/?hash=", "section_aliases_0": "",
                    "section_name_1": "compte", "section_path_1": "/compte?hash=", "section_aliases_1": "fitxa, usuari",
                    "section_name_2": "cerca", "section_path_2": "/cerca?hash=", "section_aliases_2": "buscar",
                    "default_section": "0"}
            report["change"] = request("POST", "/admin/apps/quiosc", form)[0]
            report["after"] = app.epusuaris.hashQuiosc("quiosc", "", "", "cerca")["url"]
            report["alias"] = app.epusuaris.hashQuiosc("quiosc", "", "", "BUSCAR")["url"]
            print(json.dumps(report))
            """#
        let result = try await ChildProcess.run("/usr/bin/env", ["python3", "-c", script, String(first.port), String(second.port),
                                                                 ConsoleTests.password])
        for server in [first, second] {
            server.signal(SIGTERM)
            _ = try await server.waitForExit()
        }
        #expect(result.status == 0, "\(result.errors)\n\(first.log)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any],
                                  "\(result.output)\n\(result.errors)")
        #expect(report["before"] as? [String] == ["https://quiosc.example.cat/?hash=", "https://quiosc.example.cat/?hash="],
                "not a section yet: the default")
        #expect(report["sign_in"] as? Int == 303 && report["change"] as? Int == 303)
        #expect(report["after"] as? String == "https://quiosc.example.cat/cerca?hash=", "the other instance, at the next call")
        #expect(report["alias"] as? String == "https://quiosc.example.cat/cerca?hash=")
    }

    // MARK: The file

    /// The file's web kiosks seed the database; the console's hold against the file; `config export`
    /// writes them back as `web_kiosk` the file accepts, and that file brings back the same catalogue.
    @Test func configExportWritesTheStoredWebKiosksBack() async throws {
        let directory = temporaryDirectory()
        let config = try writeTestConfiguration(in: directory) { $0 + "\ncatalogue_source: console\n" }
        let database = directory.appendingPathComponent("kiosk.sqlite").path
        let environment = CatalogueSourceTests.environment
        let seed = try await ServerProcess(["--config", config], environment: environment)
        seed.signal(SIGTERM)
        #expect(try await seed.waitForExit() == 0)

        let edited = AppWebKiosk(appKey: "quiosc", baseURL: "https://quiosc.example.cat", sections: [
            WebKiosk.Section(name: "portada", path: "/?hash="),
            WebKiosk.Section(name: "compte", path: "/compte?hash=", aliases: ["fitxa", "usuari"]),
            WebKiosk.Section(name: "cerca", path: "/cerca?hash=", aliases: ["buscar"]),
        ], defaultSection: "cerca")
        let presencia = AppWebKiosk(appKey: "presencia", sections: [WebKiosk.Section(name: "compte", path: "/compte?hash=",
                                                                                     aliases: ["Perfil", "usuari"])])
        let stored: Catalogue
        do {
            let store = try SQLiteKioskStore(path: database)
            var catalogue = try await store.catalogue()
            #expect(catalogue.webKiosks == [SampleCatalogue.quioscWebKiosk], "seeded from the file")
            catalogue.webKiosks = [edited, presencia]
            #expect(try await store.syncCatalogue(catalogue, dryRun: false).count == 2)
            stored = try await store.catalogue()
            await store.close()
        }
        let start = try await ServerProcess(["--config", config], environment: environment)
        start.signal(SIGTERM)
        #expect(try await start.waitForExit() == 0)
        #expect(start.log.contains("remove web kiosk of app presencia") && start.log.contains("set web kiosk of app quiosc"),
                "the file's differences reported, not applied: \(start.log)")

        let export = try await ServerProcess.run(["config", "export", "--config", config], environment: environment)
        #expect(export.status == 0, "\(export.errors)")
        #expect(export.output.contains("web_kiosk:") && export.output.contains("default_section: cerca"), "\(export.output)")
        let exported = directory.appendingPathComponent("exported.yaml").path
        try ("catalogue_source: console\nsecret_file: \(directory.path)/secret\n"
             + "server:\n  database: \(database)\n  editions: \(directory.path)/Editions\n" + export.output)
            .write(toFile: exported, atomically: true, encoding: .utf8)
        let reloaded = try KioskConfiguration.load(from: exported)
        #expect(Set(reloaded.catalogue.webKiosks) == Set(stored.webKiosks))
        #expect(reloaded.webKiosks["presencia"]?.baseURL == reloaded.publicURL + "/web/presencia", "no base_url: Kiosk's own")
        #expect(reloaded.webKiosks["presencia"]?.resolve("PERFIL").section.path == "/compte?hash=")

        // The exported file is the database's catalogue: checking it against the database finds nothing to change.
        let check = try await ServerProcess.run(["config", "check", "--config", exported], environment: environment)
        #expect(check.status == 0 && check.output.contains("up to date"), "\(check.output)\n\(check.errors)")
    }
}
