import KioskTestSupport
import KioskSQLite
import GRDB
import Foundation
import Testing
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles

/// The six wire methods over real HTTP with Python's `xmlrpc.client`, on a real SQLite file.
@Suite struct KioskMethodsTests {
    /// Editions 1 (subscribers) and 8 (free on quiosc, subscribers on presencia) have issues; 2 has none.
    static func sampleKiosk() async throws -> TestKiosk {
        let kiosk = try await TestKiosk()
        for date in ["2025-05-28", "2025-05-29", "2025-05-30", "2025-05-31"] {
            try await kiosk.addIssue(edition: 1, date: date)
        }
        try await kiosk.addIssue(edition: 8, date: "2025-05-25")
        return kiosk
    }

    @Test func getEdicionsListsOfferedEditionsWithIssuesInOrder() async throws {
        let kiosk = try await Self.sampleKiosk()
        let result = try await kiosk.withServer { port in
            try await python(port, """
                eds = p.epquiosc.getEdicions("quiosc", "")
                result = {"eds": eds, "types": sorted({type(v).__name__ for e in eds for v in e.values()}),
                          "unknown": fault(lambda: p.epquiosc.getEdicions("nope", ""))}
                """)
        }.value as! [String: Any]
        let editions = result["eds"] as! [[String: String]]
        #expect(editions.map { $0["id"] } == ["1", "8"])
        #expect(editions.map { $0["ordre"] } == ["10", "30"])
        #expect(editions[0]["titol"] == "El Punt Avui")
        #expect(editions[0]["edicio"] == "Nacional")
        #expect(editions[0]["data"] == "2025-05-31")
        #expect(editions[0]["data_alta"] == "2010-03-01")
        #expect(editions[1]["titol"] == "Presència")
        #expect(editions[0]["portada"]!.hasSuffix("1/2025-05-31/r1/jpg/001.jpg"))
        #expect(Set(editions[0].keys) == ["id", "titol", "edicio", "data", "data_alta", "ordre", "portada"])
        #expect(result["types"] as! [String] == ["str"])
        #expect((result["unknown"] as! [String: Any])["faultCode"] as! Int == 1)
    }

    @Test func getDarrersEdicioWalksBothWaysAndChecksParameters() async throws {
        let kiosk = try await Self.sampleKiosk()
        let result = try await kiosk.withServer { port in
            try await python(port, """
                d = lambda *a: [i["data"] for i in p.epquiosc.getDarrersEdicio(*a)]
                result = {
                  "desc": d("quiosc", "", "1", "2025-05-30", 2, "DESC"),
                  "asc": d("quiosc", "", 1, "2025-05-29", 7, "ASC"),
                  "newest": d("quiosc", "", "1", "", "", ""),
                  "absent": d("quiosc", "", "1"),
                  "member_keys": sorted(p.epquiosc.getDarrersEdicio("quiosc", "", "1", "", 1, "DESC")[0].keys()),
                  "not_offered": fault(lambda: p.epquiosc.getDarrersEdicio("presencia", "", "1", "", 5, "DESC")),
                  "bad_num": fault(lambda: p.epquiosc.getDarrersEdicio("quiosc", "", "1", "", 101, "DESC")),
                  "bad_dir": fault(lambda: p.epquiosc.getDarrersEdicio("quiosc", "", "1", "", 5, "UP")),
                  "bad_date": fault(lambda: p.epquiosc.getDarrersEdicio("quiosc", "", "1", "2025-02-30", 5, "DESC")),
                  "bad_id": fault(lambda: p.epquiosc.getDarrersEdicio("quiosc", "", "uno", "", 5, "DESC")),
                }
                """)
        }.value as! [String: Any]
        #expect(result["desc"] as! [String] == ["2025-05-30", "2025-05-29"])
        #expect(result["asc"] as! [String] == ["2025-05-29", "2025-05-30", "2025-05-31"])
        #expect(result["newest"] as! [String] == ["2025-05-31", "2025-05-30", "2025-05-29", "2025-05-28"])
        #expect(result["absent"] as! [String] == ["2025-05-31", "2025-05-30", "2025-05-29", "2025-05-28"])
        #expect(result["member_keys"] as! [String] == ["data", "data_alta", "edicio", "id", "portada", "titol"])
        func fault(_ key: String) -> (Int, String) {
            let f = result[key] as! [String: Any]
            return (f["faultCode"] as! Int, f["faultString"] as! String)
        }
        #expect(fault("not_offered").0 == 3)
        #expect(fault("bad_num").0 == -32602 && fault("bad_num").1.contains("num"))
        #expect(fault("bad_dir").0 == -32602 && fault("bad_dir").1.contains("direccio"))
        #expect(fault("bad_date").0 == -32602 && fault("bad_date").1.contains("data"))
        #expect(fault("bad_id").0 == -32602 && fault("bad_id").1.contains("edicio_id"))
    }

    @Test func getEdicioNeedsAnEntitledIdentityOnSubscriberLines() async throws {
        let kiosk = try await Self.sampleKiosk()
        try await kiosk.addUser("anna", password: "pw-anna", subscriptions: [(1, "2025-05-30")])
        let result = try await kiosk.withServer { port in
            try await python(port, """
                anon = p.epusuaris.registrar("quiosc", "device-1", "", "", {"model": "iPhone"}, "iOS")
                anna = p.epusuaris.registrar("quiosc", "device-2", "anna", "pw-anna", {}, "iOS")
                other_app = p.epusuaris.registrar("presencia", "device-2", "anna", "pw-anna", {}, "iOS")
                free = p.epquiosc.getEdicio("quiosc", "legacy-device-id", "8", "2025-05-25", "", "iOS")
                result = {
                  "free_keys": sorted(free.keys()),
                  "free_pages": [pg["numero"] for pg in free["pagines"]],
                  "page_keys": sorted(free["pagines"][0].keys()),
                  "no_key": fault(lambda: p.epquiosc.getEdicio("quiosc", "", "1", "2025-05-30", "", "iOS")),
                  "forged": fault(lambda: p.epquiosc.getEdicio("quiosc", anna["iden_key"][:-2] + "AA", "1", "2025-05-30", "", "")),
                  "cross_app": fault(lambda: p.epquiosc.getEdicio("quiosc", other_app["iden_key"], "1", "2025-05-30", "", "")),
                  "anonymous": fault(lambda: p.epquiosc.getEdicio("quiosc", anon["iden_key"], "1", "2025-05-30", "", "")),
                  "spoofed": fault(lambda: p.epquiosc.getEdicio("quiosc", anon["iden_key"], "1", "2025-05-30", anna["usuari_id"], "")),
                  "subscribed": p.epquiosc.getEdicio("quiosc", anna["iden_key"], "1", "2025-05-30", "", "iOS")["data"],
                  "day_after_end": fault(lambda: p.epquiosc.getEdicio("quiosc", anna["iden_key"], "1", "2025-05-31", "", "")),
                  "no_issue": fault(lambda: p.epquiosc.getEdicio("quiosc", anna["iden_key"], "1", "2025-06-01", "", "")),
                  "no_date": fault(lambda: p.epquiosc.getEdicio("quiosc", anna["iden_key"], "1", "", "", "")),
                }
                """)
        }.value as! [String: Any]
        func code(_ key: String) -> Int { (result[key] as! [String: Any])["faultCode"] as! Int }
        #expect(result["free_keys"] as! [String] == ["data", "edicio", "id", "pagines", "titol", "zip", "zip_sha256", "zip_size"])
        #expect(result["free_pages"] as! [String] == ["1", "2", "3"])
        #expect(result["page_keys"] as! [String] == ["id", "jpg", "jpgA", "numero", "pdf", "seccio", "seccio_id"])
        #expect(code("no_key") == 2)
        #expect(code("forged") == 2)
        #expect(code("cross_app") == 2)
        #expect(code("anonymous") == 5)
        #expect(code("spoofed") == 5)
        #expect(result["subscribed"] as! String == "2025-05-30")
        #expect(code("day_after_end") == 5)
        #expect(code("no_issue") == 4)
        #expect(code("no_date") == -32602)
        let downloads = try await kiosk.store.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM downloads") ?? -1
        }
        #expect(downloads == 2, "one free and one subscribed download are recorded, refusals are not")
    }

    @Test func registrarKeepsTheKeyAndDemosAcrossReinstallsAndListsEntitlements() async throws {
        let kiosk = try await Self.sampleKiosk()
        try await kiosk.addUser("joan", password: "pw-joan", name: "Joan Puig", email: "joan@example.cat",
                                subscriptions: [(1, "2026-01-31")])
        let result = try await kiosk.withServer { port in
            try await python(port, """
                first = p.epusuaris.registrar("quiosc", "dev-9", "", "", {"os_version": 17}, "iOS")
                demo = p.epusuaris.consumirDemo("quiosc", "dev-9", first["iden_key"], {}, "iOS", 0)
                again = p.epusuaris.registrar("quiosc", "dev-9", "", "", {}, "iOS")
                joan = p.epusuaris.registrar("quiosc", "dev-9", "joan", "pw-joan", {}, "iOS")
                joan_again = p.epusuaris.registrar("quiosc", "dev-9", "joan", "pw-joan", {}, "iOS")
                result = {"first": first, "again": again, "joan": joan, "joan_again_key": joan_again["iden_key"],
                          "demo": demo}
                """)
        }.value as! [String: Any]
        let first = result["first"] as! [String: Any]
        let again = result["again"] as! [String: Any]
        let joan = result["joan"] as! [String: Any]
        #expect(Set(first.keys) == ["username", "name", "email", "usuari_id", "demos", "edicions", "iden_key"])
        #expect(first["usuari_id"] as! String == "0")
        #expect(first["demos"] as! String == "0")
        #expect((first["edicions"] as! [String: [String: String]]).keys.sorted() == ["8"])
        #expect((first["edicions"] as! [String: [String: String]])["8"]?["fins"] == "")
        #expect(again["iden_key"] as! String == first["iden_key"] as! String)
        #expect(again["demos"] as! String == "1")
        #expect(joan["iden_key"] as! String != first["iden_key"] as! String)
        #expect(joan["iden_key"] as! String == result["joan_again_key"] as! String)
        #expect(joan["demos"] as! String == "1", "the demo counter is per app and device, shared with the signed-in identity")
        #expect(joan["name"] as! String == "Joan Puig")
        #expect(joan["email"] as! String == "joan@example.cat")
        let editions = joan["edicions"] as! [String: [String: String]]
        #expect(editions.keys.sorted() == ["1", "8"])
        #expect(editions["1"] == ["id": "1", "titol": "El Punt Avui", "edicio": "Nacional", "fins": "2026-01-31"])
        let demo = result["demo"] as! [String: Any]
        #expect(demo["servir_demo"] as! String == "1")
        #expect(demo["error_msg"] as! String == "")
    }

    @Test func demosAreGrantedUpToTheQuotaAndOpenOneIssueForGood() async throws {
        let kiosk = try await Self.sampleKiosk()
        let result = try await kiosk.withServer { port in
            try await python(port, """
                r = p.epusuaris.registrar("quiosc", "dev-d", "", "", {}, "Android")
                k = r["iden_key"]
                before = fault(lambda: p.epquiosc.getEdicio("quiosc", k, "1", "2025-05-29", "", ""))
                g1 = p.epusuaris.consumirDemo("quiosc", "dev-d", k, {}, "Android", "")
                opened = p.epquiosc.getEdicio("quiosc", k, "1", "2025-05-29", "", "")["data"]
                reopened = p.epquiosc.getEdicio("quiosc", k, "1", "2025-05-29", "", "")["data"]
                other = fault(lambda: p.epquiosc.getEdicio("quiosc", k, "1", "2025-05-30", "", ""))
                capped = p.epusuaris.consumirDemo("quiosc", "dev-d", k, {}, "Android", 1)
                g2 = p.epusuaris.consumirDemo("quiosc", "dev-d", "", {}, "Android", 0)
                g3 = p.epusuaris.consumirDemo("quiosc", "dev-d", k, {}, "Android", 99)
                g4 = p.epusuaris.consumirDemo("quiosc", "dev-d", k, {}, "Android", 0)
                wrong_device = fault(lambda: p.epusuaris.consumirDemo("quiosc", "dev-x", k, {}, "Android", 0))
                result = {"before": before, "g1": g1, "opened": opened, "reopened": reopened, "other": other,
                          "capped": capped, "g2": g2, "g3": g3, "g4": g4, "wrong_device": wrong_device}
                """)
        }.value as! [String: Any]
        func member(_ key: String, _ name: String) -> String { (result[key] as! [String: Any])[name] as! String }
        #expect((result["before"] as! [String: Any])["faultCode"] as! Int == 5)
        #expect(member("g1", "servir_demo") == "1" && member("g1", "demos") == "1")
        #expect(result["opened"] as! String == "2025-05-29")
        #expect(result["reopened"] as! String == "2025-05-29")
        #expect((result["other"] as! [String: Any])["faultCode"] as! Int == 5)
        #expect(member("capped", "servir_demo") == "0", "a client maximum of 1 lowers the quota of 3")
        #expect(member("capped", "error_msg") != "")
        #expect(member("g2", "servir_demo") == "1" && member("g2", "demos") == "2")
        #expect(member("g3", "servir_demo") == "1" && member("g3", "demos") == "3", "a client maximum never raises the quota")
        #expect(member("g4", "servir_demo") == "0" && member("g4", "demos") == "3")
        #expect((result["wrong_device"] as! [String: Any])["faultCode"] as! Int == 2)
    }

    @Test func concurrentDemoCallsNeverExceedTheQuota() async throws {
        let kiosk = try await Self.sampleKiosk()
        let granted = try await kiosk.withServer { port in
            try await python(port, """
                from concurrent.futures import ThreadPoolExecutor
                url = "http://kiosk:secret@127.0.0.1:\(port)/RPC2"
                def call(_):
                    return xmlrpc.client.ServerProxy(url).epusuaris.consumirDemo("quiosc", "race-device", "", {}, "iOS", 0)["servir_demo"]
                with ThreadPoolExecutor(max_workers=50) as pool:
                    answers = list(pool.map(call, range(200)))
                result = [answers.count("1"), answers.count("0")]
                """)
        }.value as! [Int]
        #expect(granted == [3, 197])
        let counter = try await kiosk.store.demosConsumed(appKey: "quiosc", deviceKey: "race-device")
        #expect(counter == 3)
    }

    @Test func signInFailuresLockOutEvenInsideOneMulticall() async throws {
        let kiosk = try await Self.sampleKiosk()
        try await kiosk.addUser("marta", password: "right")
        let result = try await kiosk.withServer { port in
            try await python(port, """
                wrong = fault(lambda: p.epusuaris.registrar("quiosc", "d1", "marta", "wrong", {}, "iOS"))
                unknown = fault(lambda: p.epusuaris.registrar("quiosc", "d2", "nobody", "wrong", {}, "iOS"))
                m = xmlrpc.client.MultiCall(p)
                for i in range(8):
                    m.epusuaris.registrar("quiosc", "d3", "marta", "guess%d" % i, {}, "iOS")
                outcomes = []
                it = m()
                for i in range(8):
                    try:
                        it[i]
                        outcomes.append(0)
                    except xmlrpc.client.Fault as f:
                        outcomes.append(f.faultCode)
                locked_registrar = fault(lambda: p.epusuaris.registrar("quiosc", "d4", "marta", "right", {}, "iOS"))
                locked_hash = fault(lambda: p.epusuaris.hashQuiosc("quiosc", "marta", "right", "portada"))
                result = {"wrong": wrong, "unknown": unknown, "outcomes": outcomes,
                          "locked_registrar": locked_registrar, "locked_hash": locked_hash}
                """)
        }.value as! [String: Any]
        let wrong = result["wrong"] as! [String: Any]
        let unknown = result["unknown"] as! [String: Any]
        #expect(wrong["faultCode"] as! Int == 6)
        #expect(unknown["faultCode"] as! Int == 6)
        #expect(wrong["faultString"] as! String == unknown["faultString"] as! String)
        // One failure before the multicall, then 4 more reach the limit of 5: the rest are locked out.
        #expect(result["outcomes"] as! [Int] == [6, 6, 6, 6, 7, 7, 7, 7])
        #expect((result["locked_registrar"] as! [String: Any])["faultCode"] as! Int == 7)
        #expect((result["locked_hash"] as! [String: Any])["faultCode"] as! Int == 7)
        kiosk.clock.advance(901)
        let after = try await kiosk.withServer { port in
            try await python(port, """
                result = p.epusuaris.registrar("quiosc", "d4", "marta", "right", {}, "iOS")["username"]
                """)
        }.value as! String
        #expect(after == "marta", "the lock-out ends when the window passes")
    }

    @Test func hashQuioscSignsAShortLivedTokenTheWebSiteVerifies() async throws {
        let kiosk = try await Self.sampleKiosk()
        let id = try await kiosk.addUser("pere", password: "pw", name: "Pere", email: "pere@example.cat",
                                         subscriptions: [(1, "2026-12-31")])
        let result = try await kiosk.withServer { port in
            try await python(port, """
                import urllib.request, urllib.error
                anon = p.epusuaris.hashQuiosc("quiosc", "", "", "portada")
                signed = p.epusuaris.hashQuiosc("quiosc", "pere", "pw", "compte")
                def verify(h):
                    try:
                        with urllib.request.urlopen("http://127.0.0.1:\(port)/sso/verify?hash=" + urllib.parse.quote(h)) as r:
                            return [r.status, json.loads(r.read())]
                    except urllib.error.HTTPError as e:
                        return [e.code, None]
                import urllib.parse
                result = {"anon": anon, "signed": signed, "ok": verify(signed["hash"]),
                          "tampered": verify(signed["hash"][:-1] + ("A" if signed["hash"][-1] != "A" else "B")),
                          "section": p.epusuaris.hashQuiosc("quiosc", "", "", "nowhere")["url"]}
                """)
        }.value as! [String: Any]
        let anon = result["anon"] as! [String: String]
        #expect(anon == ["url_base": "https://quiosc.example.cat", "hash": "", "url": "https://quiosc.example.cat/?hash="])
        let signed = result["signed"] as! [String: String]
        #expect(!signed["hash"]!.isEmpty)
        #expect(signed["url"] == "https://quiosc.example.cat/compte?hash=" + signed["hash"]!)
        let ok = result["ok"] as! [Any]
        #expect(ok[0] as! Int == 200)
        let user = ok[1] as! [String: Any]
        #expect(user["id"] as! Int == id)
        #expect(user["username"] as! String == "pere")
        #expect((user["editions"] as! [[String: Any]]).first?["until"] as? String == "2026-12-31")
        #expect((result["tampered"] as! [Any])[0] as! Int == 403)
        // An unknown section opens the default one (the first listed): never a fault.
        #expect(result["section"] as? String == "https://quiosc.example.cat/?hash=")
        // Expired: the token lives web_kiosk_token_lifetime_seconds.
        kiosk.clock.advance(Int64(kiosk.configuration.webKioskTokenLifetimeSeconds) + 1)
        let expired = try await kiosk.withServer { port in
            try await python(port, """
                import urllib.request, urllib.error
                try:
                    urllib.request.urlopen("http://127.0.0.1:\(port)/sso/verify?hash=\(signed["hash"]!)")
                    result = 200
                except urllib.error.HTTPError as e:
                    result = e.code
                """)
        }.value as! Int
        #expect(expired == 403)
    }
}
