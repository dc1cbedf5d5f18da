import KioskTestSupport
import Foundation
import GRDB
import KioskModels
import KioskSQLite
import Testing
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles

/// The apps already in the stores, and the move from the 2012 system (El Quiosc): every request here is
/// the bytes the 2012 app sends (`Tests/Clients/old_app.py`: the Cocoa XML-RPC framework's encoding over
/// NSURLConnection, credentials only after the 401 challenge), answered as the contract says.
@Suite struct OldAppTests {
    /// Runs `calls` (see old_app.py) one after another on one connection; one report per call.
    static func oldApp(_ port: Int, _ calls: [[String: Any]], sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> ClientJSON {
        let json = String(decoding: try JSONSerialization.data(withJSONObject: calls), as: UTF8.self)
        let output = try await runClient("python3", [TestKiosk.repositoryRoot + "/Tests/Clients/old_app.py", String(port), json],
                                         sourceLocation: sourceLocation)
        return ClientJSON(value: try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]],
                                              sourceLocation: sourceLocation))
    }

    static func call(_ method: String, _ params: [Any], path: String = "/xmlrpc/index.php",
                     contentType: String? = "text/xml") -> [String: Any] {
        ["method": method, "params": params, "path": path, "content_type": contentType ?? NSNull()]
    }

    static func deviceInfo(_ store: SQLiteKioskStore, key: String) async throws -> [String: String] {
        let text = try await store.pool.read { db in
            try String.fetchOne(db, sql: "SELECT device_info FROM identities WHERE key = ?", arguments: [key])
        }
        let data = Data((text ?? "null").utf8)
        return (try JSONSerialization.jsonObject(with: data) as? [String: String]) ?? [:]
    }

    @Test func dispInfoInEveryShapeIsAcceptedAndStoredReadably() async throws {
        let kiosk = try await TestKiosk()
        let reports = try await kiosk.withServer { port in
            try await Self.oldApp(port, [
                Self.call("epusuaris.registrar", ["quiosc", "dev-array", "", "", ["iPhone", "iPhone OS", "5.1.1", "Joan's iPhone"], "iOS"]),
                Self.call("epusuaris.registrar", ["quiosc", "dev-mixed", "", "", ["iPad", 5, true, 1.5, ["x": "y"]], "iOS"]),
                Self.call("epusuaris.registrar", ["quiosc", "dev-struct", "", "", ["model": "iPhone", "version": "6.0"], "iOS"]),
                Self.call("epusuaris.registrar", ["quiosc", "dev-string", "", "", "iPhone4,1", "iOS"]),
                Self.call("epusuaris.registrar", ["quiosc", "dev-empty", "", "", "", "iOS"]),
                Self.call("epusuaris.registrar", ["quiosc", "dev-absent", "", ""]),
                Self.call("epusuaris.consumirDemo", ["quiosc", "dev-array", "", ["iPhone", "iPhone OS", "6.1"], "iOS", 3]),
                Self.call("epusuaris.consumirDemo", ["quiosc", "dev-none", "", [], "iOS", 3]),
            ])
        }.reports
        for (index, report) in reports.enumerated() {
            #expect(report["status"] as? Int == 200, "call \(index): \(report)")
            #expect(report["challenged"] as? Bool == true, "call \(index): the 401 challenge came first")
            #expect(report["fault"] == nil, "call \(index): \(report)")
            #expect((report["result"] as? [String: Any])?["iden_key"] as? String != nil, "call \(index): \(report)")
        }
        #expect((reports[6]["result"] as? [String: Any])?["servir_demo"] as? String == "1")
        func key(_ index: Int) -> String { (reports[index]["result"] as! [String: Any])["iden_key"] as! String }
        // consumirDemo refreshed the array identity's facts.
        #expect(try await Self.deviceInfo(kiosk.store, key: key(0)) == ["0": "iPhone", "1": "iPhone OS", "2": "6.1"])
        #expect(try await Self.deviceInfo(kiosk.store, key: key(1)) == ["0": "iPad", "1": "5", "2": "1", "3": "1.5", "4.x": "y"])
        #expect(try await Self.deviceInfo(kiosk.store, key: key(2)) == ["model": "iPhone", "version": "6.0"])
        #expect(try await Self.deviceInfo(kiosk.store, key: key(3)) == ["info": "iPhone4,1"])
        #expect(try await Self.deviceInfo(kiosk.store, key: key(4)) == [:])
        #expect(try await Self.deviceInfo(kiosk.store, key: key(5)) == [:])
    }

    @Test func theOldEndpointPathsAnswerWithOrWithoutContentType() async throws {
        let kiosk = try await TestKiosk()
        try await kiosk.addIssue(edition: 1, date: "2025-06-01", pages: 1)
        let reports = try await kiosk.withServer { port in
            try await Self.oldApp(port, [
                Self.call("epquiosc.getEdicions", ["quiosc", ""], path: "/xmlrpc/index.php", contentType: nil),
                Self.call("epquiosc.getEdicions", ["quiosc", ""], path: "/xmlrpc/", contentType: "text/xml"),
                Self.call("epquiosc.getEdicions", ["quiosc", ""], path: "/xmlrpc", contentType: "application/xml"),
                Self.call("epquiosc.getEdicions", ["quiosc", ""], path: "/RPC2", contentType: "text/xml; charset=utf-8"),
                Self.call("epquiosc.getEdicions", ["quiosc", ""], path: "/xmlrpc/other.php"),
            ])
        }.reports
        for report in reports.prefix(4) {
            #expect(report["status"] as? Int == 200, "\(report)")
            #expect((report["content_type"] as? String)?.hasPrefix("text/xml") == true)
            let editions = try #require(report["result"] as? [[String: Any]], "\(report)")
            #expect(editions.map { $0["id"] as? String } == ["1"])
        }
        #expect(reports[4]["status"] as? Int == 404)
    }

    @Test func theEndpointPathsAreConfigurable() async throws {
        let kiosk = try await TestKiosk { $0.server.rpcPaths = ["/RPC2", "/quiosc/xmlrpc.php/"] }
        let reports = try await kiosk.withServer { port in
            try await Self.oldApp(port, [
                Self.call("system.listMethods", [], path: "/quiosc/xmlrpc.php"),
                Self.call("system.listMethods", [], path: "/quiosc/xmlrpc.php/", contentType: nil),
                Self.call("system.listMethods", [], path: "/xmlrpc/index.php"),
            ])
        }.reports
        #expect(reports.map { $0["status"] as? Int } == [200, 200, 404])
        var bad = kiosk.configuration
        bad.server.rpcPaths = ["/files/rpc"]
        #expect(throws: ConfigurationError.self) { try bad.validate(file: "kiosk.yaml") }
        bad.server.rpcPaths = []
        #expect(throws: ConfigurationError.self) { try bad.validate(file: "kiosk.yaml") }
    }

    @Test func unknownOrEmptySectionsOpenTheDefaultAndAreCounted() async throws {
        let metered = try await MetricsTests.MeteredKiosk { configuration in
            configuration.apps[0].webKiosk = .init(
                baseURL: "https://quiosc.example.cat",
                sections: .init([.init(name: "portada", path: "/?hash="), .init(name: "compte", path: "/compte?hash=")]),
                defaultSection: "compte",
                aliases: ["portada": ["home", "INICI"], "compte": ["fitxa", "account"]])
        }
        let reports = try await metered.withServer { port in
            try await Self.oldApp(port, ["PORTADA", "inici", "Fitxa", "botiga", "", "compte"].map {
                Self.call("epusuaris.hashQuiosc", ["quiosc", "", "", $0])
            } + [
                Self.call("epusuaris.hashQuiosc", ["quiosc", "", ""]),
                Self.call("epusuaris.hashQuiosc", ["presencia", "", "", "nowhere"]),
            ])
        }.reports
        let urls = reports.map { ($0["result"] as? [String: Any])?["url"] as? String }
        #expect(urls == [
            "https://quiosc.example.cat/?hash=", "https://quiosc.example.cat/?hash=",
            "https://quiosc.example.cat/compte?hash=", "https://quiosc.example.cat/compte?hash=",
            "https://quiosc.example.cat/compte?hash=", "https://quiosc.example.cat/compte?hash=",
            "https://quiosc.example.cat/compte?hash=",
            // No web_kiosk: Kiosk's own, whose first section is the shelf.
            metered.kiosk.configuration.publicURL + "/web/presencia/?hash=",
        ])
        let scrape = metered.scrape
        // "botiga" and "nowhere" are unknown; empty and absent names are not counted as unknown.
        #expect(scrape["kiosk_web_kiosk_unknown_sections_total", ["app": "quiosc"]] == 1)
        #expect(scrape["kiosk_web_kiosk_unknown_sections_total", ["app": "presencia"]] == 1)
    }

    @Test func listingsRecordTheDevicesSeenPerDayWithoutAWritePerCall() async throws {
        let kiosk = try await TestKiosk()
        try await kiosk.addIssue(edition: 1, date: "2025-06-01", pages: 1)
        _ = try await kiosk.withServer { port in
            try await Self.oldApp(port, [
                Self.call("epquiosc.getEdicions", ["quiosc", "device-A"]),
                Self.call("epquiosc.getEdicions", ["quiosc", "device-A"]),
                Self.call("epquiosc.getDarrersEdicio", ["quiosc", "device-B", "1", "", 7, "DESC"]),
                Self.call("epquiosc.getEdicions", ["quiosc", ""]),
                Self.call("epquiosc.getEdicions", ["presencia", "device-A"]),
            ])
        }
        kiosk.clock.advance(86_400)
        _ = try await kiosk.withServer { port in
            try await Self.oldApp(port, [Self.call("epquiosc.getEdicions", ["quiosc", "device-A"])])
        }
        // Written in the background: wait for the four rows (one per key, app and day; repeats cost no write).
        var rows: [String] = []
        for _ in 0..<100 {
            rows = try await kiosk.store.pool.read { db in
                try Row.fetchAll(db, sql: "SELECT day, app_key, identity_key FROM active_identities ORDER BY day, app_key, identity_key")
                    .map { "\($0[0] as Int64 - 20_240) \($0[1] as String) \($0[2] as String)" }
            }
            if rows.count >= 4 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(rows == ["0 presencia device-A", "0 quiosc device-A", "0 quiosc device-B", "1 quiosc device-A"])
        let statistics = try await kiosk.store.statistics(StatisticsQuery(from: nil, to: nil, appKey: nil, editionID: nil, topIssues: 0))
        #expect(statistics.activeDevices.map { "\($0.day) \($0.appKey) \($0.devices)" }
                == ["2025-06-01 presencia 1", "2025-06-01 quiosc 2", "2025-06-02 quiosc 1"])
    }
}

extension ClientJSON {
    /// `old_app.py`'s report: one entry per call.
    var reports: [[String: Any]] { value as! [[String: Any]] }
}
