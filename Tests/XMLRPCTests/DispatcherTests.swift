import Testing
import NIOCore
import Synchronization
@testable import XMLRPC

struct TestContext: Sendable {
    var user: String
}

struct DomainError: XMLRPCFaultConvertible {
    var xmlrpcFault: XMLRPCFault { XMLRPCFault(code: 7, message: "domain says no") }
}

struct SecretError: Error, CustomStringConvertible {
    var description: String { "database password is hunter2" }
}

final class Recorder: Sendable {
    let events = Mutex<[(String, Int?)]>([])
    let internalErrors = Mutex<[String]>([])
}

@Suite struct DispatcherTests {
    func makeDispatcher(recorder: Recorder? = nil, limits: XMLRPCLimits = .init()) -> XMLRPCDispatcher<TestContext> {
        var dispatcher = XMLRPCDispatcher<TestContext>(
            limits: limits, capabilities: [XMLRPCMember("custom", ["specUrl": "urn:x", "specVersion": 2])])
        dispatcher.register("test.echo", signature: [["array", "string"]], help: "Echoes its parameters.") { params, _ in
            .array(params.values)
        }
        dispatcher.register("test.add", signature: [["int", "int", "int"], ["int", "string", "string"]],
                            help: "Adds two integers.") { params, _ in
            .integer(try params.int(0, "a") + params.int(1, "b"))
        }
        dispatcher.register("test.whoami", signature: [["string"]], help: "The caller.") { _, context in
            .string(context.user)
        }
        dispatcher.register("test.domain", signature: [], help: "") { _, _ in throw DomainError() }
        dispatcher.register("test.secret", signature: [["string"]], help: "") { _, _ in throw SecretError() }
        dispatcher.register("test.fault", signature: [["string"]], help: "") { _, _ in
            throw XMLRPCFault(code: 42, message: "explicit")
        }
        dispatcher.register("test.infinite", signature: [["double"]], help: "") { _, _ in .double(.infinity) }
        if let recorder {
            dispatcher.observer = { method, fault, seconds in
                precondition(seconds >= 0)
                recorder.events.withLock { $0.append((method, fault?.code)) }
            }
            dispatcher.onInternalError = { error, method in
                recorder.internalErrors.withLock { $0.append("\(method): \(error)") }
            }
        }
        return dispatcher
    }

    func call(_ dispatcher: XMLRPCDispatcher<TestContext>, _ name: String, _ params: [XMLRPCValue] = [],
              user: String = "tester") async throws -> (Result<XMLRPCValue, XMLRPCFault>, XMLRPCDispatchResult) {
        let body = try XMLRPCEncoder.encodeCall(XMLRPCCall(methodName: name, params: params))
        let result = await dispatcher.respond(to: Array(buffer: body), encoding: nil, context: TestContext(user: user))
        return (try XMLRPCDecoder.decodeResponse(result.body), result)
    }

    @Test func plainCalls() async throws {
        let dispatcher = makeDispatcher()
        let (echo, echoResult) = try await call(dispatcher, "test.echo", ["a", 1, .nil])
        #expect(echo == .success(["a", 1, .nil]))
        #expect(echoResult.methodName == "test.echo")
        #expect(echoResult.fault == nil)
        #expect(try await call(dispatcher, "test.add", ["40", .int(2)]).0 == .success(.int(42)))
        #expect(try await call(dispatcher, "test.whoami", user: "ana").0 == .success("ana"))
    }

    @Test func faultsFromHandlers() async throws {
        let recorder = Recorder()
        let dispatcher = makeDispatcher(recorder: recorder)
        let (unknown, unknownResult) = try await call(dispatcher, "no.such")
        #expect(unknown == .failure(.methodNotFound("no.such")))
        #expect(unknownResult.fault?.code == -32601)
        #expect(unknownResult.methodName == "no.such")
        #expect(try await call(dispatcher, "test.add", ["4x2", 1]).0.faultCode == -32602)
        #expect(try await call(dispatcher, "test.domain").0 == .failure(XMLRPCFault(code: 7, message: "domain says no")))
        #expect(try await call(dispatcher, "test.fault").0 == .failure(XMLRPCFault(code: 42, message: "explicit")))
        let (secret, secretResult) = try await call(dispatcher, "test.secret")
        #expect(secret == .failure(.internalError))
        #expect(!text(secretResult.body).contains("hunter2"))
        #expect(try await call(dispatcher, "test.infinite").0 == .failure(.internalError))
        let errors = recorder.internalErrors.withLock { $0 }
        #expect(errors.count == 2)
        #expect(errors.first == "test.secret: database password is hunter2")
        let events = recorder.events.withLock { $0 }
        // Unknown methods are not observed; the others are, with their faults.
        #expect(events.map(\.0) == ["test.add", "test.domain", "test.fault", "test.secret", "test.infinite"])
        #expect(events.map(\.1) == [-32602, 7, 42, -32603, nil])
    }

    @Test func undecodableBodies() async throws {
        let dispatcher = makeDispatcher()
        let result = await dispatcher.respond(to: Array("<methodCall>".utf8), encoding: nil, context: TestContext(user: ""))
        #expect(result.methodName == nil)
        #expect(result.fault?.code == -32700)
        #expect(try XMLRPCDecoder.decodeResponse(result.body).faultCode == -32700)
        let pointerResult = await respondFromPointer(dispatcher, "<methodCall><methodName>m</methodName><params><param><value><foo/></value></param></params></methodCall>")
        #expect(pointerResult.fault?.code == -32600)
    }

    func respondFromPointer(_ dispatcher: XMLRPCDispatcher<TestContext>, _ body: String) async -> XMLRPCDispatchResult {
        let decoded = Array(body.utf8).withUnsafeBytes { dispatcher.decode($0, encoding: nil) }
        return await dispatcher.respond(to: decoded, context: TestContext(user: ""))
    }

    @Test func listMethods() async throws {
        let dispatcher = makeDispatcher()
        let (list, _) = try await call(dispatcher, "system.listMethods")
        let names = try list.get().arrayValue?.compactMap(\.stringValue)
        #expect(names == [
            "system.getCapabilities", "system.listMethods", "system.methodHelp", "system.methodSignature",
            "system.multicall", "test.add", "test.domain", "test.echo", "test.fault", "test.infinite",
            "test.secret", "test.whoami",
        ])
        #expect(dispatcher.methodNames == names)
    }

    @Test func methodHelpAndSignature() async throws {
        let dispatcher = makeDispatcher()
        #expect(try await call(dispatcher, "system.methodHelp", ["test.add"]).0 == .success("Adds two integers."))
        #expect(try await call(dispatcher, "system.methodHelp", ["system.multicall"]).0.map { $0.stringValue?.isEmpty } == .success(false))
        #expect(try await call(dispatcher, "system.methodSignature", ["test.add"]).0
            == .success([["int", "int", "int"], ["int", "string", "string"]]))
        #expect(try await call(dispatcher, "system.methodSignature", ["system.listMethods"]).0 == .success([["array"]]))
        #expect(try await call(dispatcher, "system.methodSignature", ["test.domain"]).0 == .success("undef"))
        let unknown = try await call(dispatcher, "system.methodSignature", ["no.such"]).0
        #expect(unknown == .failure(XMLRPCFault(code: -32602, message: "parameter method: unknown method no.such")))
        let unknownHelp = try await call(dispatcher, "system.methodHelp", ["no.such"]).0
        #expect(unknownHelp.faultCode == -32602)
        let missing = try await call(dispatcher, "system.methodHelp", []).0
        #expect(missing.faultCode == -32602)
    }

    @Test func capabilities() async throws {
        let dispatcher = makeDispatcher()
        let value = try await call(dispatcher, "system.getCapabilities").0.get()
        #expect(value.structureValue?.map(\.name) == ["xmlrpc", "introspect", "multicall", "nil", "faults_interop", "custom"])
        #expect(value["xmlrpc"] == ["specUrl": "http://www.xmlrpc.com/spec", "specVersion": 1])
        #expect(value["introspect"] == ["specUrl": "http://xmlrpc-c.sourceforge.net/xmlrpc-c/introspection.html", "specVersion": 1])
        #expect(value["multicall"] == ["specUrl": "http://www.xmlrpc.com/discuss/msgReader$1208", "specVersion": 1])
        #expect(value["nil"] == ["specUrl": "http://ontosys.com/xml-rpc/extensions.php", "specVersion": 20010516])
        #expect(value["faults_interop"] == ["specUrl": "http://xmlrpc-epi.sourceforge.net/specs/rfc.fault_codes.php", "specVersion": 20010516])
        #expect(value["custom"]?["specVersion"] == 2)
    }

    @Test func multicall() async throws {
        let recorder = Recorder()
        let dispatcher = makeDispatcher(recorder: recorder)
        let calls: XMLRPCValue = [
            ["methodName": "test.add", "params": [1, 2]],
            ["methodName": "no.such", "params": []],
            ["methodName": "test.add", "params": ["x", 2]],
            ["methodName": "system.multicall", "params": [[]]],
            ["methodName": "test.whoami"],
            "not a struct",
            ["params": []],
            ["methodName": "test.echo", "params": "not an array"],
            ["methodName": "test.secret", "params": []],
            ["methodName": "test.infinite", "params": []],
            ["methodName": "test.echo", "params": [.nil]],
        ]
        let (outcome, result) = try await call(dispatcher, "system.multicall", [calls], user: "multi")
        #expect(result.fault == nil)
        #expect(result.methodName == "system.multicall")
        let entries = try #require(try outcome.get().arrayValue)
        #expect(entries.count == 11)
        #expect(entries[0] == [3])
        #expect(entries[1] == ["faultCode": -32601, "faultString": "unknown method no.such"])
        #expect(entries[2]["faultCode"] == -32602)
        #expect(entries[2]["faultString"]?.stringValue?.contains("parameter a") == true)
        #expect(entries[3]["faultCode"] == -32600)
        #expect(entries[4] == ["multi"])
        #expect(entries[5]["faultCode"] == -32600)
        #expect(entries[6]["faultCode"] == -32600)
        #expect(entries[7]["faultCode"] == -32600)
        #expect(entries[8] == ["faultCode": -32603, "faultString": "internal error"])
        #expect(entries[9] == ["faultCode": -32603, "faultString": "internal error"])
        #expect(entries[10] == [[.nil]])
        let events = recorder.events.withLock { $0 }
        #expect(events.map(\.0) == ["test.add", "test.add", "test.whoami", "test.secret", "test.infinite", "test.echo", "system.multicall"])
        #expect(recorder.internalErrors.withLock { $0.count } == 2)
    }

    @Test func multicallLimits() async throws {
        let dispatcher = makeDispatcher()
        let one: XMLRPCValue = ["methodName": "test.add", "params": [1, 1]]
        let hundred = XMLRPCValue.array(Array(repeating: one, count: 100))
        let ok = try await call(dispatcher, "system.multicall", [hundred]).0.get()
        #expect(ok.arrayValue?.count == 100)
        #expect(ok.arrayValue?.allSatisfy { $0 == [2] } == true)
        let tooMany = XMLRPCValue.array(Array(repeating: one, count: 101))
        let (outcome, result) = try await call(dispatcher, "system.multicall", [tooMany])
        #expect(outcome.faultCode == -32602)
        #expect(result.fault?.code == -32602)
        #expect(try await call(dispatcher, "system.multicall", ["nope"]).0.faultCode == -32602)
        #expect(try await call(dispatcher, "system.multicall", []).0.faultCode == -32602)
        let small = makeDispatcher(limits: XMLRPCLimits(maxMulticallCalls: 2))
        #expect(try await call(small, "system.multicall", [[one, one, one]]).0.faultCode == -32602)
    }

    @Test func multicallRunsInOrder() async throws {
        let order = Mutex<[Int]>([])
        var dispatcher = XMLRPCDispatcher<TestContext>()
        dispatcher.register("test.slow", signature: [["int", "int"]], help: "") { params, _ in
            let n = try params.int(0, "n")
            try await Task.sleep(for: .milliseconds(n))
            order.withLock { $0.append(n) }
            return .integer(n)
        }
        let calls: XMLRPCValue = .array([30, 1, 10].map { ["methodName": "test.slow", "params": [.int($0)]] })
        let body = try XMLRPCEncoder.encodeCall(XMLRPCCall(methodName: "system.multicall", params: [calls]))
        let result = await dispatcher.respond(to: Array(buffer: body), encoding: nil, context: TestContext(user: ""))
        #expect(try XMLRPCDecoder.decodeResponse(result.body) == .success([[30], [1], [10]]))
        #expect(order.withLock { $0 } == [30, 1, 10])
    }
}
