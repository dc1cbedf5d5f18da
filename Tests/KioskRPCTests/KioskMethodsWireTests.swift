import KioskModels
import KioskRPC
import KioskTestSupport
import Testing
import XMLRPC

/// The six wire methods through the dispatcher, in Swift: each answer's members in order, every value a
/// string, and the faults with their codes. (KioskServerTests.KioskMethodsTests calls them over HTTP
/// with Python's client.)
@Suite struct KioskMethodsWireTests {
    static let t0 = SampleCatalogue.startTime
    static func link(_ path: String) -> String { "https://files.test/\(path)?expires=\(t0 + 3600)" }
    static let editionMembers = ["id", "titol", "edicio", "data", "data_alta"]
    static let registrationMembers = ["username", "name", "email", "usuari_id", "demos", "edicions", "iden_key"]

    @Test func getEdicionsListsTheOfferedEditionsWithAnIssue() async throws {
        let wire = try await Wire()
        let editions = try await wire.value("epquiosc.getEdicions", ["quiosc", ""])
        #expect(editions.onlyStrings)
        #expect(editions == .array([
            .structure([XMLRPCMember("id", "1"), XMLRPCMember("titol", "El Punt Avui"), XMLRPCMember("edicio", "Nacional"),
                        XMLRPCMember("data", "2025-05-31"), XMLRPCMember("data_alta", "2010-03-01"), XMLRPCMember("ordre", "10"),
                        XMLRPCMember("portada", .string(Self.link("1/2025-05-31/r1/jpg/001.jpg")))]),
            .structure([XMLRPCMember("id", "8"), XMLRPCMember("titol", "Presència"), XMLRPCMember("edicio", "Presència"),
                        XMLRPCMember("data", "2025-05-25"), XMLRPCMember("data_alta", "2011-10-02"), XMLRPCMember("ordre", "30"),
                        XMLRPCMember("portada", .string(Self.link("8/2025-05-25/r1/jpg/001.jpg")))]),
        ]))
        #expect(try await wire.value("epquiosc.getEdicions", ["presencia", "some-device"])[0]?.memberNames
                == Self.editionMembers + ["ordre", "portada"])
        #expect(try await wire.fault("epquiosc.getEdicions", ["nope", ""]) == XMLRPCFault(code: 1, message: "unknown appkey \"nope\""))
        #expect(try await wire.fault("epquiosc.getEdicions", ["<int>5</int>", ""])?.code == 1, "an int app key is read as text")
        #expect(try await wire.fault("epquiosc.getEdicions", ["<array><data/></array>", ""])?.code == -32602)
    }

    @Test func theListingsNoteTheirCallerForMadeAndKeptAnswersButNotForFaults() async throws {
        let wire = try await Wire()
        _ = try await wire.value("epquiosc.getEdicions", ["quiosc", "made-1"])
        _ = try await wire.value("epquiosc.getEdicions", ["quiosc", "kept-2"])          // the same answer, kept
        _ = try await wire.value("epquiosc.getDarrersEdicio", ["quiosc", "made-3", "1", "", "7", "DESC"])
        _ = try await wire.value("epquiosc.getDarrersEdicio", ["quiosc", "kept-4", "1", "", "7", "DESC"])
        _ = try await wire.fault("epquiosc.getDarrersEdicio", ["presencia", "refused-5", "2", "", "7", "DESC"])
        _ = try await wire.fault("epquiosc.getEdicions", ["nope", "refused-6"])
        #expect(wire.sections.cacheLookups.contains("getEdicions:hit") && wire.sections.cacheLookups.contains("getDarrersEdicio:hit"))
        var devices: [String: Int] = [:]
        for _ in 0..<100 {
            devices = Dictionary(uniqueKeysWithValues: try await wire.fixture.store.statistics(StatisticsQuery()).activeDevices
                .map { ($0.appKey, $0.devices) })
            if devices == ["quiosc": 4] { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(devices == ["quiosc": 4], "four callers answered, two refused")
    }

    @Test func getDarrersEdicioWalksBothWaysWithLenientParameters() async throws {
        let wire = try await Wire()
        func dates(_ params: [String]) async throws -> [String] {
            let issues = try await wire.value("epquiosc.getDarrersEdicio", params)
            #expect(issues.onlyStrings)
            return (issues.arrayValue ?? []).compactMap { $0["data"]?.stringValue }
        }
        #expect(try await dates(["quiosc", "", "1", "2025-05-30", "<i4>2</i4>", "DESC"]) == ["2025-05-30", "2025-05-29"])
        #expect(try await dates(["quiosc", "", "<i4>1</i4>", "2025-05-29", "7", " asc "]) == ["2025-05-29", "2025-05-30", "2025-05-31"])
        #expect(try await dates(["quiosc", "", "1", "", "", ""]) == ["2025-05-31", "2025-05-30", "2025-05-29", "2025-05-28"])
        #expect(try await dates(["quiosc", "", "1"]) == ["2025-05-31", "2025-05-30", "2025-05-29", "2025-05-28"])
        #expect(try await dates(["quiosc", "", "1", "<dateTime.iso8601>20250530T00:00:00</dateTime.iso8601>", "<i4>1</i4>", "DESC"])
                == ["2025-05-30"])
        let first = try await wire.value("epquiosc.getDarrersEdicio", ["quiosc", "", "1", "", "<i4>1</i4>", "DESC"])
        #expect(first == .array([.structure([
            XMLRPCMember("id", "1"), XMLRPCMember("titol", "El Punt Avui"), XMLRPCMember("edicio", "Nacional"),
            XMLRPCMember("data", "2025-05-31"), XMLRPCMember("data_alta", "2010-03-01"),
            XMLRPCMember("portada", .string(Self.link("1/2025-05-31/r1/jpg/001.jpg"))),
        ])]))

        for (params, parameter) in [
            (["quiosc", "", "1", "", "<i4>101</i4>", "DESC"], "num"),
            (["quiosc", "", "1", "", "<i4>0</i4>", "DESC"], "num"),
            (["quiosc", "", "1", "", "5", "UP"], "direccio"),
            (["quiosc", "", "1", "2025-02-30", "5", "DESC"], "data"),
            (["quiosc", "", "uno", "", "5", "DESC"], "edicio_id"),
            (["quiosc", "", "0", "", "5", "DESC"], "edicio_id"),
        ] {
            let fault = try await wire.fault("epquiosc.getDarrersEdicio", params)
            #expect(fault?.code == -32602 && fault?.message.hasPrefix("parameter \(parameter):") == true, "\(params): \(String(describing: fault))")
        }
        #expect(try await wire.fault("epquiosc.getDarrersEdicio", ["presencia", "", "1", "", "5", "DESC"])
                == XMLRPCFault(code: 3, message: "edition 1 is not offered by app \"presencia\""))
        #expect(try await wire.fault("epquiosc.getDarrersEdicio", ["nope", "", "1", "", "5", "DESC"])?.code == 1)
    }

    @Test func getEdicioAnswersPagesAndBundleToAnEntitledIdentity() async throws {
        let wire = try await Wire()
        try await wire.fixture.addUser("anna", password: "pw", subscriptions: [(1, "2025-05-30")])
        let key = try await wire.register(device: "d1", username: "anna", password: "pw")
        let issue = try await wire.value("epquiosc.getEdicio", ["quiosc", key, "1", "2025-05-30", "7", "iOS"])
        #expect(issue.onlyStrings)
        #expect(issue.memberNames == ["id", "titol", "edicio", "data", "zip", "zip_size", "zip_sha256", "pagines"])
        #expect(issue["id"] == "1" && issue["titol"] == "El Punt Avui" && issue["edicio"] == "Nacional" && issue["data"] == "2025-05-30")
        #expect(issue["zip"]?.stringValue == Self.link("1/2025-05-30/r1/1-2025-05-30.zip"))
        #expect(issue["zip_size"] == "10001" && issue["zip_sha256"]?.stringValue == String(repeating: "1", count: 64))
        let pages = issue["pagines"]?.arrayValue ?? []
        #expect(pages.count == 3)
        #expect(pages.first?.memberNames == ["id", "seccio_id", "seccio", "numero", "jpg", "jpgA", "pdf"])
        #expect(pages.map { $0["numero"]?.stringValue } == ["1", "2", "3"])
        #expect(pages.map { $0["seccio"]?.stringValue } == ["Portada", "Política", "Política"])
        #expect(pages.map { $0["seccio_id"]?.stringValue } == ["1", "2", "2"])
        #expect(pages[1]["jpgA"]?.stringValue == Self.link("1/2025-05-30/r1/jpgA/002.jpg"))
        #expect(pages.compactMap { $0["id"]?.stringValue }.allSatisfy { Int($0).map { $0 > 0 } ?? false })

        let free = try await wire.value("epquiosc.getEdicio", ["quiosc", "legacy-device-id", "<int>8</int>", "2025-05-25", "", ""])
        #expect(free["data"] == "2025-05-25" && free.onlyStrings)

        #expect(try await wire.fault("epquiosc.getEdicio", ["quiosc", "", "1", "2025-05-30", "", ""]) == XMLRPCFault(
            code: 2, message: "idenkey was not issued by this server for this app and device; call registrar"))
        #expect(try await wire.fault("epquiosc.getEdicio", ["quiosc", key, "1", "2025-05-31", "", ""]) == XMLRPCFault(
            code: 5, message: "not entitled to download edition 1 of 2025-05-31: no subscription, free line or demo"))
        #expect(try await wire.fault("epquiosc.getEdicio", ["quiosc", key, "1", "2025-06-01", "", ""])
                == XMLRPCFault(code: 4, message: "no published issue of edition 1 on 2025-06-01"))
        #expect(try await wire.fault("epquiosc.getEdicio", ["quiosc", key, "1", "", "", ""])?.code == -32602)
        #expect(try await wire.fault("epquiosc.getEdicio", ["presencia", key, "1", "2025-05-30", "", ""])?.code == 3)
        #expect(try await wire.fault("epquiosc.getEdicio", ["nope", key, "1", "2025-05-30", "", ""])?.code == 1)
    }

    @Test func registrarAnswersTheIdentityAndWhatItMayDownload() async throws {
        let wire = try await Wire()
        try await wire.fixture.addUser("joan", password: "pw-joan", name: "Joan Puig", email: "joan@example.cat",
                                       subscriptions: [(1, "2026-01-31")])
        let anonymous = try await wire.value("epusuaris.registrar", [
            "quiosc", "dev-9", "", "", "<struct><member><name>os_version</name><value><int>17</int></value></member></struct>", "iOS"])
        #expect(anonymous.onlyStrings)
        #expect(anonymous == .structure([
            XMLRPCMember("username", ""), XMLRPCMember("name", ""), XMLRPCMember("email", ""), XMLRPCMember("usuari_id", "0"),
            XMLRPCMember("demos", "0"),
            XMLRPCMember("edicions", .structure([XMLRPCMember("8", .structure([
                XMLRPCMember("id", "8"), XMLRPCMember("titol", "Presència"), XMLRPCMember("edicio", "Presència"), XMLRPCMember("fins", ""),
            ]))])),
            XMLRPCMember("iden_key", .string(wire.fixture.identityKeys.key(appKey: "quiosc", deviceKey: "dev-9", userID: 0))),
        ]))
        let identity = try await wire.fixture.store.identity(key: anonymous["iden_key"]?.stringValue ?? "")
        #expect(identity?.deviceInfo == ["os_version": "17"] && identity?.os == "iOS")

        let joan = try await wire.value("epusuaris.registrar", ["quiosc", "dev-9", "joan", "pw-joan",
                                                                 "<array><data><value>iPad</value><value>17.2</value></data></array>", "iPadOS"])
        #expect(joan.memberNames == Self.registrationMembers && joan.onlyStrings)
        #expect(joan["username"] == "joan" && joan["name"] == "Joan Puig" && joan["email"] == "joan@example.cat")
        #expect(joan["usuari_id"]?.stringValue == String(try await wire.fixture.store.user(username: "joan")?.id ?? -1))
        #expect(joan["edicions"]?.memberNames == ["1", "8"])
        #expect(joan["edicions"]?["1"] == .structure([XMLRPCMember("id", "1"), XMLRPCMember("titol", "El Punt Avui"),
                                                      XMLRPCMember("edicio", "Nacional"), XMLRPCMember("fins", "2026-01-31")]))
        let joanIdentity = try await wire.fixture.store.identity(key: joan["iden_key"]?.stringValue ?? "")
        #expect(joanIdentity?.deviceInfo == ["0": "iPad", "1": "17.2"])
        let plain = try await wire.register(device: "dev-10")
        _ = try await wire.value("epusuaris.registrar", ["quiosc", "dev-10", "", "", "iPhone 6", "iOS"])
        #expect(try await wire.fixture.store.identity(key: plain)?.deviceInfo == ["info": "iPhone 6"])

        #expect(try await wire.fault("epusuaris.registrar", ["quiosc", "dev-9", "joan", "wrong", "", "iOS"])
                == XMLRPCFault(code: 6, message: "wrong username or password"))
        #expect(try await wire.fault("epusuaris.registrar", ["quiosc", "dev-9", "nobody", "pw-joan", "", "iOS"])?.code == 6)
        #expect(try await wire.fault("epusuaris.registrar", ["nope", "dev-9", "", "", "", "iOS"])?.code == 1)
        #expect(try await wire.fault("epusuaris.registrar", ["quiosc", "", "", "", "", "iOS"])
                == XMLRPCFault(code: -32602, message: "parameter disp_key: must not be empty"))
    }

    @Test func signInFaultsLockOutAfterTheMaximum() async throws {
        let wire = try await Wire(signInPolicy: SignInPolicy(maxFailures: 2, windowSeconds: 900))
        try await wire.fixture.addUser("marta", password: "right")
        for _ in 0..<2 { #expect(try await wire.fault("epusuaris.registrar", ["quiosc", "d1", "marta", "wrong", "", "iOS"])?.code == 6) }
        let locked = XMLRPCFault(code: 7, message: "too many failed sign-ins; try again in 15 minutes")
        #expect(try await wire.fault("epusuaris.registrar", ["quiosc", "d2", "marta", "right", "", "iOS"]) == locked)
        #expect(try await wire.fault("epusuaris.hashQuiosc", ["quiosc", "marta", "right", "compte"]) == locked)
        wire.fixture.clock.advance(901)
        #expect(try await wire.value("epusuaris.hashQuiosc", ["quiosc", "marta", "right", "compte"])["hash"] != "")
    }

    @Test func consumirDemoGrantsUpToTheQuota() async throws {
        let wire = try await Wire()
        let key = try await wire.register(device: "dev-d")
        let granted = try await wire.value("epusuaris.consumirDemo", ["quiosc", "dev-d", key, "<array><data/></array>", "Android", "<i4>0</i4>"])
        #expect(granted.memberNames == Self.registrationMembers + ["servir_demo", "error_msg"] && granted.onlyStrings)
        #expect(granted["servir_demo"] == "1" && granted["error_msg"] == "" && granted["demos"] == "1" && granted["iden_key"]?.stringValue == key)
        let capped = try await wire.value("epusuaris.consumirDemo", ["quiosc", "dev-d", key, "", "Android", "<i4>1</i4>"])
        #expect(capped["servir_demo"] == "0" && capped["demos"] == "1")
        #expect(capped["error_msg"] == "Ja heu fet servir totes les descàrregues de prova d'aquest dispositiu.")
        let anonymous = try await wire.value("epusuaris.consumirDemo", ["quiosc", "dev-d", "", "<struct></struct>", "Android", ""])
        #expect(anonymous["servir_demo"] == "1" && anonymous["demos"] == "2" && anonymous["iden_key"]?.stringValue == key)
        #expect(try await wire.value("epquiosc.getEdicio", ["quiosc", key, "1", "2025-05-29", "", ""])["data"] == "2025-05-29")

        #expect(try await wire.fault("epusuaris.consumirDemo", ["quiosc", "dev-x", key, "", "Android", "<i4>0</i4>"])?.code == 2)
        #expect(try await wire.fault("epusuaris.consumirDemo", ["nope", "dev-d", "", "", "", "<i4>0</i4>"])?.code == 1)
        #expect(try await wire.fault("epusuaris.consumirDemo", ["quiosc", "dev-d", "", "", "", "many"])?.code == -32602)
    }

    @Test func hashQuioscLinksTheWebKioskSignedInWhenCredentialsAreGiven() async throws {
        let wire = try await Wire()
        let id = try await wire.fixture.addUser("pere", password: "pw")
        let anonymous = try await wire.value("epusuaris.hashQuiosc", ["quiosc", "", "", "portada"])
        #expect(anonymous == .structure([XMLRPCMember("url_base", "https://quiosc.example.cat"), XMLRPCMember("hash", ""),
                                         XMLRPCMember("url", "https://quiosc.example.cat/?hash=")]))
        let signed = try await wire.value("epusuaris.hashQuiosc", ["quiosc", "pere", "pw", "FITXA"])
        let hash = signed["hash"]?.stringValue ?? ""
        #expect(signed.memberNames == ["url_base", "hash", "url"] && signed.onlyStrings)
        #expect(signed["url"]?.stringValue == "https://quiosc.example.cat/compte?hash=" + hash, "an alias of compte, in any case")
        let tokens = WebKioskTokenSigner(secret: Wire.tokenSecret)
        #expect(tokens.verify(hash, now: Self.t0 + Int64(Wire.tokenLifetime)) == id)
        #expect(tokens.verify(hash, now: Self.t0 + Int64(Wire.tokenLifetime) + 1) == nil)
        #expect(wire.sections.unknown.isEmpty)

        #expect(try await wire.value("epusuaris.hashQuiosc", ["quiosc", "", "", "nowhere"])["url"] == "https://quiosc.example.cat/?hash=")
        #expect(try await wire.value("epusuaris.hashQuiosc", ["quiosc", "", "", ""])["url"] == "https://quiosc.example.cat/?hash=")
        #expect(try await wire.value("epusuaris.hashQuiosc", ["quiosc", "", ""])["url"] == "https://quiosc.example.cat/?hash=")
        #expect(wire.sections.unknown == ["quiosc:nowhere"], "an unknown section is reported, an empty one is not")

        #expect(try await wire.fault("epusuaris.hashQuiosc", ["quiosc", "pere", "wrong", "compte"])?.code == 6)
        #expect(try await wire.fault("epusuaris.hashQuiosc", ["nope", "", "", "compte"])?.code == 1)
        #expect(try await wire.value("epusuaris.hashQuiosc", ["presencia", "", "", "compte"])
                == .structure([XMLRPCMember("url_base", "http://kiosk.test/web/presencia"), XMLRPCMember("hash", ""),
                               XMLRPCMember("url", "http://kiosk.test/web/presencia/compte?hash=")]),
                "an app with no web kiosk stored links to Kiosk's own")
    }

    @Test func theSixMethodsAreListed() async throws {
        let wire = try await Wire()
        let names = try await wire.value("system.listMethods", []).arrayValue?.compactMap(\.stringValue) ?? []
        #expect(Set(names).isSuperset(of: ["epquiosc.getEdicions", "epquiosc.getDarrersEdicio", "epquiosc.getEdicio",
                                           "epusuaris.registrar", "epusuaris.consumirDemo", "epusuaris.hashQuiosc"]))
    }

    @Test func everyDomainErrorHasItsFault() {
        let date = IssueDate("2025-05-30")!
        let faults: [(KioskError, Int, String)] = [
            (.unknownApp("x"), 1, "unknown appkey \"x\""),
            (.invalidIdentity, 2, "idenkey was not issued by this server for this app and device; call registrar"),
            (.editionNotOffered(editionID: 3, appKey: "x"), 3, "edition 3 is not offered by app \"x\""),
            (.noPublishedIssue(editionID: 4, date: nil), 4, "no published issue of edition 4"),
            (.noPublishedIssue(editionID: 4, date: date), 4, "no published issue of edition 4 on 2025-05-30"),
            (.notEntitled(editionID: 5, date: date), 5, "not entitled to download edition 5 of 2025-05-30: no subscription, free line or demo"),
            (.wrongCredentials, 6, "wrong username or password"),
            (.tooManySignInAttempts(retryAfterSeconds: 900), 7, "too many failed sign-ins; try again in 15 minutes"),
            (.tooManySignInAttempts(retryAfterSeconds: 30), 7, "too many failed sign-ins; try again in 1 minutes"),
            (.tooManySearches(retryAfterSeconds: 3), 11, "too many searches from this address; try again in 3 seconds"),
            (.invalidArgument(parameter: "seccioQ", problem: "unknown"), -32602, "parameter seccioQ: unknown"),
        ]
        for (error, code, message) in faults {
            #expect(error.xmlrpcFault == XMLRPCFault(code: code, message: message))
        }
    }
}
