import KioskEditions
import Foundation
import Hummingbird
import HummingbirdTesting
import KioskModels
import Logging
import Testing
@testable import KioskServer
@testable import KioskWiring
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles

/// The six methods' answers on the repository's sample data, byte for byte as recorded in
/// `Tests/KioskServerTests/RecordedAnswers/` (links aside: their token and time are masked). A change of
/// these bytes is a change of the wire contract the installed apps read; a refactor must keep them.
///
/// Record again, deliberately, with `KIOSK_RECORD_ANSWERS=1 swift test --filter RecordedAnswersTests`.
@Suite struct RecordedAnswersTests {
    static let folder = TestKiosk.repositoryRoot + "/Tests/KioskServerTests/RecordedAnswers"

    /// Calls as the 2012 app sends them (untyped values, `i4` for numbers): file name, method, one value per parameter.
    static let calls: [(name: String, method: String, params: [String])] = [
        ("getEdicions", "epquiosc.getEdicions", ["quiosc", ""]),
        ("getDarrersEdicio", "epquiosc.getDarrersEdicio", ["quiosc", "x", "1", "", "<i4>7</i4>", "DESC"]),
        ("getDarrersEdicio-asc", "epquiosc.getDarrersEdicio", ["quiosc", "x", "<i4>8</i4>", "2025-05-01", "<i4>2</i4>", "ASC"]),
        ("registrar", "epusuaris.registrar",
         ["quiosc", "golden-device", "golden", "pw", "<struct><member><name>model</name><value>iPhone</value></member></struct>", "iOS"]),
        ("registrar-anonymous", "epusuaris.registrar", ["presencia", "golden-device", "", "", "", "iOS"]),
        ("getEdicio", "epquiosc.getEdicio", ["quiosc", TestKeys.golden, "1", "2025-06-02", "7", "iOS"]),
        ("getEdicio-not-entitled", "epquiosc.getEdicio", ["quiosc", TestKeys.golden, "2", "2025-06-02", "", "iOS"]),
        ("consumirDemo", "epusuaris.consumirDemo",
         ["quiosc", "demo-device", "", "<array><data><value>iPad</value></data></array>", "iOS", "<i4>0</i4>"]),
        ("hashQuiosc", "epusuaris.hashQuiosc", ["quiosc", "golden", "pw", "compte"]),
        ("hashQuiosc-anonymous", "epusuaris.hashQuiosc", ["quiosc", "", "", "portada"]),
        ("wrong-password", "epusuaris.hashQuiosc", ["quiosc", "golden", "nope", "compte"]),
        ("listMethods", "system.listMethods", []),
    ]

    enum TestKeys {
        /// The identity key `registrar` issues to (quiosc, golden-device, the golden user) under `TestKiosk.secret`.
        static let golden = "IDENTITY"
    }

    /// Signed links carry a token and a time that are not the contract's: they are masked.
    static func masked(_ answer: String) -> String {
        answer.replacingOccurrences(of: #"/files/[A-Za-z0-9_-]+/[0-9a-f]+/"#, with: "/files/TOKEN/TIME/", options: .regularExpression)
    }

    @Test func theSixMethodsAnswerAsRecorded() async throws {
        let kiosk = try await TestKiosk()
        for folder in ["1/2025-06-01", "1/2025-06-02", "2/2025-06-02", "8/2025-05-24", "8/2025-05-31"] {
            let parts = folder.split(separator: "/")
            _ = try await kiosk.editions.publisher().publish(
                editionID: Int(parts[0])!, date: IssueDate(String(parts[1]))!, from: TestKiosk.repositoryRoot + "/Samples/" + folder)
        }
        try await kiosk.addUser("golden", password: "pw", name: "Golden Reader", email: "golden@example.cat",
                                subscriptions: [(1, "2025-12-31")])
        let record = ProcessInfo.processInfo.environment["KIOSK_RECORD_ANSWERS"] == "1"
        let app = try buildApplication(runtime: kiosk.runtime, host: "127.0.0.1", port: 0, logger: Logger(label: "test"))
        try await app.test(.router) { client in
            var identityKey = ""
            for call in Self.calls {
                let params = call.params.map { "<param><value>\($0 == TestKeys.golden ? identityKey : $0)</value></param>" }.joined()
                let body = #"<?xml version="1.0"?><methodCall><methodName>\#(call.method)</methodName><params>\#(params)</params></methodCall>"#
                let response = try await client.execute(
                    uri: "/RPC2", method: .post,
                    headers: [.authorization: "Basic " + Data("kiosk:secret".utf8).base64EncodedString(), .contentType: "text/xml"],
                    body: ByteBuffer(string: body))
                #expect(response.status == .ok, "\(call.name)")
                let answer = String(buffer: response.body)
                if call.name == "registrar", let range = answer.range(of: #"<name>iden_key</name><value><string>[^<]+"#, options: .regularExpression) {
                    identityKey = String(answer[range].split(separator: ">").last!)
                }
                let file = "\(Self.folder)/\(call.name).xml"
                if record {
                    try FileManager.default.createDirectory(atPath: Self.folder, withIntermediateDirectories: true)
                    try Self.masked(answer).write(toFile: file, atomically: true, encoding: .utf8)
                } else {
                    let recorded = try String(contentsOfFile: file, encoding: .utf8)
                    #expect(Self.masked(answer) == recorded, "\(call.name): the answer's bytes changed")
                }
            }
            #expect(!identityKey.isEmpty)
        }
    }
}
