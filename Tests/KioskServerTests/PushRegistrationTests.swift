import Foundation
import GRDB
import KioskModels
import KioskSQLite
import KioskTestSupport
import Testing

/// `epusuaris.registrarAvisos` and `epusuaris.esborrarAvisos` through real XML-RPC over HTTP (Python's
/// `xmlrpc.client`) on a SQLite file: a registration stored for the identity, bad input answered with the
/// right fault and nothing stored, a new token replacing the old, a token moving to another device, removal.
@Suite struct PushRegistrationTests {
    static let token1 = String(repeating: "ab", count: 32)
    static let token2 = String(repeating: "cd", count: 32)

    func registrations(_ kiosk: TestKiosk) async throws -> Int {
        try await kiosk.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM push_registrations") ?? -1 }
    }

    @Test func registerReplaceMoveAndRemove() async throws {
        let kiosk = try await TestKiosk()
        let result = try await kiosk.withServer { port in
            try await python(port, """
                one = p.epusuaris.registrar("quiosc", "device-1", "", "", {}, "iOS")["iden_key"]
                two = p.epusuaris.registrar("quiosc", "device-2", "", "", {}, "Android")["iden_key"]
                result = {
                  "first": p.epusuaris.registrarAvisos("quiosc", "device-1", one, "APNs", "\(Self.token1.uppercased())", ["1", 8]),
                  "again": p.epusuaris.registrarAvisos("quiosc", "device-1", one, "apns", "\(Self.token2)", [], "es"),
                  "android": p.epusuaris.registrarAvisos("quiosc", "device-2", two, "fcm", "fcm:abc-DEF_123", []),
                }
                """)
        }.value as! [String: Any]
        #expect(result["first"] as? Bool == true && result["again"] as? Bool == true && result["android"] as? Bool == true)
        let device1 = try #require(try await kiosk.store.pushRegistration(appKey: "quiosc", deviceKey: "device-1"))
        #expect(device1.token == Self.token2 && device1.platform == .apns && device1.editions == [] && device1.language == "es",
                "the device's new token replaced the old one")
        #expect(try await registrations(kiosk) == 2)

        let moved = try await kiosk.withServer { port in
            try await python(port, """
                two = p.epusuaris.registrar("quiosc", "device-2", "", "", {}, "iOS")["iden_key"]
                one = p.epusuaris.registrar("quiosc", "device-1", "", "", {}, "iOS")["iden_key"]
                result = {
                  "moved": p.epusuaris.registrarAvisos("quiosc", "device-2", two, "apns", "\(Self.token2)", ["2"]),
                  "remove_missing": p.epusuaris.esborrarAvisos("quiosc", "device-1", one),
                  "remove_other_token": p.epusuaris.esborrarAvisos("quiosc", "device-2", two, "\(Self.token1)"),
                  "remove": p.epusuaris.esborrarAvisos("quiosc", "device-2", two, "\(Self.token2.uppercased())"),
                }
                """)
        }.value as! [String: Any]
        #expect(moved["moved"] as? Bool == true)
        #expect(moved["remove_missing"] as? Bool == false, "device-1's token moved to device-2: nothing left to remove")
        #expect(moved["remove_other_token"] as? Bool == false)
        #expect(moved["remove"] as? Bool == true)
        #expect(try await registrations(kiosk) == 0)
    }

    @Test func badInputIsAFaultAndStoresNothing() async throws {
        let kiosk = try await TestKiosk()
        let result = try await kiosk.withServer { port in
            try await python(port, """
                one = p.epusuaris.registrar("quiosc", "device-1", "", "", {}, "iOS")["iden_key"]
                other = p.epusuaris.registrar("presencia", "device-1", "", "", {}, "iOS")["iden_key"]
                t = "\(Self.token1)"
                r = lambda *a: fault(lambda: p.epusuaris.registrarAvisos(*a))
                result = {
                  "app": r("nope", "device-1", one, "apns", t, []),
                  "identity": r("quiosc", "device-1", other, "apns", t, []),
                  "device": r("quiosc", "device-9", one, "apns", t, []),
                  "platform": r("quiosc", "device-1", one, "sms", t, []),
                  "short": r("quiosc", "device-1", one, "apns", "abcd", []),
                  "not_hex": r("quiosc", "device-1", one, "apns", "zz" * 32, []),
                  "fcm_space": r("quiosc", "device-1", one, "fcm", "a b", []),
                  "fcm_long": r("quiosc", "device-1", one, "fcm", "a" * 4097, []),
                  "not_offered": r("quiosc", "device-1", one, "apns", t, ["1", "99"]),
                  "not_a_number": r("quiosc", "device-1", one, "apns", t, ["uno"]),
                  "not_array": r("quiosc", "device-1", one, "apns", t, {"a": 1}),
                  "language": r("quiosc", "device-1", one, "apns", t, [], "c@"),
                  "unregister_foreign": fault(lambda: p.epusuaris.esborrarAvisos("quiosc", "device-1", other)),
                }
                """)
        }.value as! [String: Any]
        func fault(_ key: String) -> (code: Int, text: String) {
            let fault = result[key] as? [String: Any]
            return (fault?["faultCode"] as? Int ?? 0, fault?["faultString"] as? String ?? "no fault")
        }
        #expect(fault("app").code == 1)
        #expect(fault("identity").code == 2)
        #expect(fault("device").code == 2)
        #expect(fault("unregister_foreign").code == 2)
        #expect(fault("not_offered").code == 3 && fault("not_offered").text.contains("99"))
        for (key, parameter) in [("platform", "plataforma"), ("short", "token"), ("not_hex", "token"), ("fcm_space", "token"),
                                 ("fcm_long", "token"), ("not_a_number", "edicions"), ("not_array", "edicions"), ("language", "idioma")] {
            #expect(fault(key).code == -32602 && fault(key).text.contains(parameter), "\(key): \(fault(key))")
        }
        #expect(try await registrations(kiosk) == 0, "nothing is stored for a refused registration")
    }
}
