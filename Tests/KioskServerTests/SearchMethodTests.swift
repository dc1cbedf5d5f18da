import KioskEditions
import Foundation
import Testing
import KioskModels
import KioskTestSupport
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskWiring

/// `epquiosc.cercar` over real HTTP with Python's `xmlrpc.client`, on issues published from folders
/// with page texts (`txt/NNN.txt`).
@Suite struct SearchMethodTests {
    /// Edition 1 on 2025-05-30 and 2025-05-31 (12 pages each), edition 8 on 2025-05-25; a word printed
    /// only on page 7 of edition 1's 2025-05-31 issue ("hidroavió").
    static func searchKiosk(_ adjust: (inout KioskConfiguration) -> Void = { _ in }) async throws -> TestKiosk {
        let kiosk = try await TestKiosk(adjust)
        func publish(_ edition: Int, _ date: String, _ text: (Int) -> String) async throws {
            var pages = IssueFolders.smallPages(12)
            for index in pages.indices { pages[index].text = text(pages[index].number) }
            let folder = try await IssueFolders.writeFolder(kiosk.directory.path + "/in-\(edition)-\(date)", pages: pages,
                                                      sections: [(1, "Portada")])
            _ = try await kiosk.editions.publisher().publish(editionID: edition, date: IssueDate(date)!, from: folder)
        }
        try await publish(1, "2025-05-30") { "Pàgina \($0) de la Presència al Ple municipal de Girona." }
        try await publish(1, "2025-05-31") { n in
            n == 7 ? "L'hidroavió de Roses & <Cadaqués> aterra al port." : "Pàgina \(n): el pressupost municipal de Girona."
        }
        try await publish(8, "2025-05-25") { "Presencia, setmanari: pàgina \($0)." }
        return kiosk
    }

    @Test func findsAWordOnItsPageNewestFirstOnlyInOfferedEditions() async throws {
        let kiosk = try await Self.searchKiosk()
        _ = try await kiosk.addUser("reader", password: "pw-reader", subscriptions: [(1, "2025-12-31")])
        let result = try await kiosk.withServer { port in
            try await python(port, """
                c = lambda *a: p.epquiosc.cercar(*a)
                key = p.epusuaris.registrar("quiosc", "some-device", "reader", "pw-reader", {}, "iOS")["iden_key"]
                hits = c("quiosc", key, "hidroavio", "", "", "", 20)
                result = {
                  "hits": hits,
                  "anonymous": c("quiosc", "some-device", "hidroavio", "", "", "", 20),
                  "types": sorted({type(v).__name__ for h in hits for v in h.values()}),
                  "presencia": [(h["id"], h["data"], h["numero"]) for h in c("quiosc", "", "PRESÈNCIA", "", "", "", 30)],
                  "presencia_app": [(h["id"], h["data"]) for h in c("presencia", "", "presencia", "", "", "", 100)],
                  "edition": [h["data"] for h in c("quiosc", "", "girona", "1", "", "", 100)][:3],
                  "range": sorted({h["data"] for h in c("quiosc", "", "pagina", 1, "2025-05-30", "2025-05-30", 100)}),
                  "num": len(c("quiosc", "", "girona", "", "", "", 5)),
                  "absent": len(c("quiosc", "", "girona")),
                  "phrase": [(h["data"], h["numero"]) for h in c("quiosc", "", '"pressupost municipal"', "", "", "", 1)],
                  "prefix": [(h["data"], h["numero"]) for h in c("quiosc", "", "hidroav*", "", "", "", 5)],
                  "not_offered": fault(lambda: c("presencia", "", "girona", "1", "", "", 5)),
                  "unknown_app": fault(lambda: c("nope", "", "girona", "", "", "", 5)),
                  "bad_desde": fault(lambda: c("quiosc", "", "girona", "", "2025-02-30", "", 5)),
                  "bad_fins": fault(lambda: c("quiosc", "", "girona", "", "", "demà", 5)),
                  "bad_num": fault(lambda: c("quiosc", "", "girona", "", "", "", 101)),
                }
                """)
        }.value as! [String: Any]
        let hits = result["hits"] as! [[String: String]]
        #expect(hits.count == 1)
        let hit = try #require(hits.first)
        #expect(hit["id"] == "1" && hit["data"] == "2025-05-31" && hit["numero"] == "7", "page 7 of the right issue")
        #expect(hit["titol"] == "El Punt Avui" && hit["edicio"] == "Nacional")
        #expect(Set(hit.keys) == ["id", "titol", "edicio", "data", "numero", "fragment"])
        #expect(hit["fragment"]?.contains("<b>hidroavió</b>") == true, "\(hit["fragment"] ?? "")")
        #expect(hit["fragment"]?.contains("&amp; &lt;Cadaqués&gt;") == true, "text escaped as HTML: \(hit["fragment"] ?? "")")
        let anonymous = result["anonymous"] as? [[String: String]] ?? []
        #expect(anonymous.count == 1 && anonymous.first?["numero"] == "7" && anonymous.first?["fragment"] == "",
                "without a subscription the hit says where, not what: \(anonymous)")
        #expect(result["types"] as! [String] == ["str"])
        let presencia = result["presencia"] as! [[String]]
        #expect(presencia.count == 24, "12 pages of 2025-05-30 and 12 of edition 8")
        #expect(presencia.first == ["1", "2025-05-30", "1"] && presencia.last == ["8", "2025-05-25", "12"], "newest first, pages in order")
        #expect(Set((result["presencia_app"] as! [[String]]).map { $0[0] }) == ["8"], "only the editions the app offers")
        #expect(result["edition"] as! [String] == ["2025-05-31", "2025-05-31", "2025-05-31"])
        #expect(result["range"] as! [String] == ["2025-05-30"])
        #expect(result["num"] as! Int == 5)
        #expect(result["absent"] as! Int == 20, "edicio_id, desde, fins and num may be absent")
        #expect(result["phrase"] as! [[String]] == [["2025-05-31", "1"]])
        #expect(result["prefix"] as! [[String]] == [["2025-05-31", "7"]])
        func fault(_ key: String) -> (Int, String) {
            let f = result[key] as! [String: Any]
            return (f["faultCode"] as! Int, f["faultString"] as! String)
        }
        #expect(fault("not_offered").0 == 3)
        #expect(fault("unknown_app").0 == 1)
        #expect(fault("bad_desde").0 == -32602 && fault("bad_desde").1.contains("desde"))
        #expect(fault("bad_fins").0 == -32602 && fault("bad_fins").1.contains("fins"))
        #expect(fault("bad_num").0 == -32602 && fault("bad_num").1.contains("num"))
    }

    /// Operators, quotes, syntax of both engines, huge and empty texts: an answer or a -32602 naming
    /// `text`, never -32603; the server answers normally afterwards.
    @Test func hostileQueriesAreAnsweredOrRefusedCleanly() async throws {
        let kiosk = try await Self.searchKiosk()
        let result = try await kiosk.withServer { port in
            try await python(port, #"""
                texts = ["", " ", "\"", "\"\"", "\"girona", "girona\"", "AND", "OR NOT AND", "NEAR(girona pressupost)",
                         "girona NEAR/2 pressupost", "(((", ")))", "*", "**", "girona*", "*girona", "text:girona",
                         "{text}: girona", "^girona", "-girona", "+girona", "girona & pressupost", "girona | !x",
                         "girona <-> pressupost", "girona:*", "girona:A", "'", "''", "\\", "'; DROP TABLE pages; --",
                         "\"a\" AND \"b\" OR", "a" * 10000, "girona " * 400, " ".join(["w%d" % i for i in range(40)]),
                         "💥🚀", "ﬁ", "İstanbul", "\u0301", "x\u200by", "\ufeffgirona", "girona\u2028pressupost",
                         "a" * 499 + "*", "\"" * 501, "<b>girona</b>", "&amp;", "]]>", "girona\ttab"]
                answers = []
                for t in texts:
                    try:
                        answers.append(["ok", len(p.epquiosc.cercar("quiosc", "", t, "", "", "", 10))])
                    except xmlrpc.client.Fault as f:
                        answers.append([f.faultCode, f.faultString])
                after = len(p.epquiosc.cercar("quiosc", "", "hidroavió", "", "", "", 10))
                result = {"answers": answers, "after": after}
                """#)
        }.value as! [String: Any]
        let answers = result["answers"] as! [[Any]]
        #expect(answers.count == 47)
        for answer in answers {
            if let code = answer[0] as? Int {
                #expect(code == -32602 && (answer[1] as? String)?.contains("text") == true, "\(answer)")
            } else {
                #expect(answer[0] as? String == "ok", "\(answer)")
            }
        }
        #expect(answers[0][0] as? Int == -32602, "empty: no words")
        #expect(answers[31][0] as? Int == -32602, "10 000 characters: too long")
        #expect(answers[4][0] as? String == "ok" && answers[4][1] as? Int == 10, "a stray quote is ignored")
        #expect(result["after"] as! Int == 1)
    }

    /// Control characters cannot travel in XML 1.0; sent anyway (as the 2012 app's framework might) the
    /// call is refused as not well-formed or searched as separators, never an internal error.
    @Test func controlCharactersNeverMakeAnInternalError() async throws {
        let kiosk = try await Self.searchKiosk()
        let result = try await kiosk.withServer { port in
            try await python(port, #"""
                import urllib.request, base64
                codes = []
                for raw in ["girona\x01", "\x00", "gi\x1frona", "&#1;girona", "&#0;"]:
                    body = ("<?xml version='1.0'?><methodCall><methodName>epquiosc.cercar</methodName><params>"
                            "<param><value>quiosc</value></param><param><value></value></param>"
                            "<param><value>%s</value></param></params></methodCall>" % raw).encode("utf-8")
                    req = urllib.request.Request("http://127.0.0.1:PORT/RPC2", data=body,
                        headers={"Content-Type": "text/xml", "Authorization": "Basic " + base64.b64encode(b"%s").decode()})
                    answer = urllib.request.urlopen(req).read().decode()
                    codes.append(int(answer.split("<name>faultCode</name><value><int>")[1].split("<")[0]) if "faultCode" in answer else 0)
                result = codes
                """#.replacingOccurrences(of: "PORT", with: String(port))
                .replacingOccurrences(of: "b\"%s\"", with: "b\"\(TestKiosk.apiUser):\(TestKiosk.apiPassword)\""))
        }.value as! [Int]
        #expect(result.count == 5)
        #expect(!result.contains(-32603), "\(result)")
    }
}
