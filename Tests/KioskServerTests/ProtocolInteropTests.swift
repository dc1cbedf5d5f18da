import Foundation
import Testing
import XMLRPC
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles

/// The XML-RPC layer over real HTTP with clients nobody here wrote (Python, Ruby, Perl), against
/// test methods registered only here: an echo of every type, a sum and a fault.
@Suite struct ProtocolInteropTests {
    static func kioskWithTestMethods() async throws -> TestKiosk {
        let kiosk = try await TestKiosk()
        let current = kiosk.runtime.runtime
        var dispatcher = current.dispatcher
        dispatcher.register("test.echo", signature: [["any", "any"]], help: "Returns its parameter.") { params, _ in
            params.value(0) ?? .nil
        }
        dispatcher.register("test.sum", signature: [["int", "int", "int"]], help: "Adds two integers.") { params, _ in
            .int(Int32(try params.int(0, "a", in: -1_000_000...1_000_000) + params.int(1, "b", in: -1_000_000...1_000_000)))
        }
        dispatcher.register("test.big", signature: [["i8"]], help: "A 64-bit integer.") { _, _ in .i8(1 << 40) }
        dispatcher.register("test.fault", signature: [["int", "int", "string"]], help: "Raises the fault asked for.") { params, _ in
            throw XMLRPCFault(code: try params.int(0, "code"), message: try params.string(1, "message"))
        }
        kiosk.runtime.replace(with: KioskRuntime(
            configuration: current.configuration, environment: current.environment, dispatcher: dispatcher,
            accounts: current.accounts,
            delivery: current.delivery, publishing: current.publishing, readerSessions: current.readerSessions, console: current.console))
        return kiosk
    }

    static let clients = TestKiosk.repositoryRoot + "/Tests/Clients/"

    func report(_ program: String, _ script: String) async throws -> [String: Any] {
        let kiosk = try await Self.kioskWithTestMethods()
        let output = try await kiosk.withServer { port in
            try await runClient(program, [Self.clients + script, "http://kiosk:secret@127.0.0.1:\(port)/RPC2"])
        }
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
    }

    func checkCommon(_ report: [String: Any]) {
        let echo = report["echo"] as? [String: Bool] ?? [:]
        #expect(!echo.isEmpty)
        for (type, same) in echo { #expect(same, "echo of \(type) did not round-trip") }
        #expect(report["i8"] as? Int == 1 << 40)
        #expect(report["sum"] as? Int == 42)
        #expect(report["fault"] as? [AnyHashable] == [17, "custom fault"])
        #expect(report["unknown"] as? Int == -32601)
        let methods = report["methods"] as? [String] ?? []
        #expect(methods.contains("test.echo") && methods.contains("system.multicall") && methods.contains("epquiosc.getEdicio"))
        #expect(methods == methods.sorted())
        #expect(report["signature"] as? [[String]] == [["int", "int", "int"]])
        #expect(report["capabilities"] as? [String] == ["faults_interop", "introspect", "multicall", "nil", "xmlrpc"])
        let multicall = report["multicall"] as? [Any] ?? []
        #expect(multicall.count == 3)
        #expect(multicall.first as? Int == 3)
        #expect(multicall.dropFirst().first as? [AnyHashable] == [3, "in place"])
        #expect(multicall.last as? String == "after")
    }

    @Test func python() async throws {
        let report = try await report("python3", "protocol_python.py")
        checkCommon(report)
        #expect((report["echo"] as? [String: Bool])?.count == 14)
        #expect(report["help"] as? String == "Adds two integers.")
        let bad = report["bad_param"] as? [AnyHashable]
        #expect(bad?.first == AnyHashable(-32602))
        #expect((bad?.last as? String)?.contains("parameter a") == true)
    }

    @Test func ruby() async throws {
        let report = try await report("ruby", "protocol_ruby.rb")
        checkCommon(report)
        #expect((report["echo"] as? [String: Bool])?.count == 11)
    }

    @Test func perl() async throws {
        let report = try await report("perl", "protocol_perl.pl")
        checkCommon(report)
        #expect((report["echo"] as? [String: Bool])?.count == 11)
    }
}
