import Testing
@testable import XMLRPC

@Suite struct RoundTripTests {
    static let samples: [XMLRPCValue] = [
        .int(0), .int(42), .int(-7), .int(.max), .int(.min),
        .i8(0), .i8(.max), .i8(.min), .i8(5_000_000_000),
        .bool(true), .bool(false),
        .string(""), .string("hello"), .string("  spaces  kept \t\n"), .string("a & b < c > d \"q\" 'a'"),
        .string("Presència, niño, 日本語, 🎉"), .string("line1\r\nline2"),
        .double(0), .double(-0.0), .double(1.5), .double(-123.456), .double(1e-7), .double(1e21),
        .double(0.1), .double(.greatestFiniteMagnitude), .double(.leastNonzeroMagnitude), .double(123456789.125),
        .dateTime(XMLRPCDateTime(year: 1998, month: 7, day: 17, hour: 14, minute: 8, second: 55)!),
        .dateTime(XMLRPCDateTime(year: 2024, month: 2, day: 29)!),
        .base64([]), .base64([0]), .base64([0, 1]), .base64([0, 1, 2]), .base64(Array(0...255)),
        .array([]), .array([.int(1), .string("two"), .nil, .array([.bool(true)])]),
        .structure([]),
        .structure([XMLRPCMember("z", .int(1)), XMLRPCMember("a", .string("x")), XMLRPCMember("", .nil),
                    XMLRPCMember("nested", .structure([XMLRPCMember("k", .array([.double(2.5)]))]))]),
        .nil,
    ]

    @Test(arguments: samples)
    func responseRoundTrip(_ value: XMLRPCValue) throws {
        let bytes = try XMLRPCEncoder.encodeResponse(value)
        #expect(try responseValue(bytes) == value)
    }

    @Test(arguments: samples)
    func callRoundTrip(_ value: XMLRPCValue) throws {
        let call = XMLRPCCall(methodName: "ns.method_1:x/y", params: [value, .string("after")])
        let bytes = try XMLRPCEncoder.encodeCall(call)
        #expect(try XMLRPCDecoder.decodeCall(bytes) == call)
    }

    @Test func callWithoutParams() throws {
        let call = XMLRPCCall(methodName: "system.listMethods")
        let decoded = try XMLRPCDecoder.decodeCall(XMLRPCEncoder.encodeCall(call))
        #expect(decoded.methodName == "system.listMethods")
        #expect(decoded.params.isEmpty)
        // <params> may also be left out entirely.
        let bare = try XMLRPCDecoder.decodeCall(Array("<methodCall><methodName>a.b</methodName></methodCall>".utf8))
        #expect(bare == XMLRPCCall(methodName: "a.b"))
    }

    @Test func faultRoundTrip() throws {
        let fault = XMLRPCFault(code: -32601, message: "unknown method <x> & co")
        let result = try XMLRPCDecoder.decodeResponse(XMLRPCEncoder.encodeFault(fault))
        #expect(result == .failure(fault))
    }

    @Test func controlCharactersBecomeReplacementCharacter() throws {
        let value = XMLRPCValue.string("a\u{0}b\u{1}c\u{1F}d\u{FFFE}e\u{FFFF}f\u{FFFD}g\u{7F}")
        let decoded = try responseValue(XMLRPCEncoder.encodeResponse(value))
        #expect(decoded == .string("a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}e\u{FFFD}f\u{FFFD}g\u{7F}"))
    }

    @Test func literals() {
        let value: XMLRPCValue = ["id": "7", "n": 3, "ok": true, "list": [1, "two"], "d": 1.5]
        #expect(value["id"] == .string("7"))
        #expect(value["n"] == .int(3))
        #expect(value["ok"] == .bool(true))
        #expect(value["list"]?[1] == .string("two"))
        #expect(value["d"] == .double(1.5))
        #expect(value["missing"] == nil)
        #expect(value.structureValue?.map(\.name) == ["id", "n", "ok", "list", "d"])
        #expect(XMLRPCValue.integer(5) == .int(5))
        #expect(XMLRPCValue.integer(1 << 40) == .i8(1 << 40))
    }

    @Test func structMemberOrderIsKept() throws {
        let value: XMLRPCValue = ["zeta": 1, "alpha": 2, "mid": 3]
        let bytes = try XMLRPCEncoder.encodeResponse(value)
        let body = text(bytes)
        let zeta = try #require(body.firstRange(of: "zeta"))
        let alpha = try #require(body.firstRange(of: "alpha"))
        #expect(zeta.lowerBound < alpha.lowerBound)
        #expect(try responseValue(bytes).structureValue?.map(\.name) == ["zeta", "alpha", "mid"])
    }
}
