import Testing
@testable import XMLRPC

@Suite struct ParametersTests {
    func fault(_ body: () throws -> Void) -> XMLRPCFault? {
        do { try body(); return nil } catch { return error as? XMLRPCFault ?? XMLRPCFault(code: 0, message: "other") }
    }

    @Test func intCoercion() throws {
        let p = XMLRPCParameters(["42", " 42 ", .int(42), .i8(42), "-7", "+8", "\t9\n", .i8(1 << 40)])
        #expect(try p.int(0, "a") == 42)
        #expect(try p.int(1, "b") == 42)
        #expect(try p.int(2, "c") == 42)
        #expect(try p.int(3, "d") == 42)
        #expect(try p.int(4, "e") == -7)
        #expect(try p.int(5, "f") == 8)
        #expect(try p.int(6, "g") == 9)
        #expect(try p.int(7, "h") == 1 << 40)
    }

    @Test func intFaultsNameTheParameter() throws {
        let p = XMLRPCParameters(["4x2", "", .nil, .bool(true), "99999999999999999999", "4 2", .double(1)])
        let bad = try #require(fault { _ = try p.int(0, "edition_id") })
        #expect(bad.code == -32602)
        #expect(bad.message.contains("edition_id"))
        #expect(bad.message.contains("4x2"))
        #expect(fault { _ = try p.int(1, "x") } == .invalidParameter("x", "missing"))
        #expect(fault { _ = try p.int(2, "x") } == .invalidParameter("x", "missing"))
        #expect(fault { _ = try p.int(9, "absent") } == .invalidParameter("absent", "missing"))
        #expect(fault { _ = try p.int(3, "flag") }?.message.contains("flag") == true)
        #expect(fault { _ = try p.int(4, "big") }?.code == -32602)
        #expect(fault { _ = try p.int(5, "spaced") }?.code == -32602)
        #expect(fault { _ = try p.int(6, "dbl") }?.code == -32602)
    }

    @Test func intDefaultsAndRanges() throws {
        let p = XMLRPCParameters(["", .nil, "5", .int(500)])
        #expect(try p.int(0, "a", default: 10) == 10)
        #expect(try p.int(1, "b", default: 11) == 11)
        #expect(try p.int(7, "c", default: 12) == 12)
        #expect(try p.int(2, "d", default: 1, in: 1...10) == 5)
        let outside = try #require(fault { _ = try p.int(3, "count", in: 1...100) })
        #expect(outside.code == -32602)
        #expect(outside.message.contains("count"))
        #expect(outside.message.contains("1...100"))
    }

    @Test func stringCoercion() throws {
        let p = XMLRPCParameters(["text", .int(7), .i8(-8), .nil, .bool(true), .array([])])
        #expect(try p.string(0, "a") == "text")
        #expect(try p.string(1, "b") == "7")
        #expect(try p.string(2, "c") == "-8")
        #expect(try p.string(3, "d") == "")
        #expect(try p.string(6, "absent trailing") == "")
        let bad = try #require(fault { _ = try p.string(4, "token") })
        #expect(bad.code == -32602)
        #expect(bad.message.contains("token"))
        #expect(fault { _ = try p.string(5, "list") }?.code == -32602)
    }

    @Test func structureCoercion() throws {
        let members = [XMLRPCMember("k", "v")]
        let p = XMLRPCParameters([.structure(members), "", .nil, .array([]), "x", .array([1])])
        #expect(try p.structure(0, "a") == members)
        #expect(try p.structure(1, "b") == [])
        #expect(try p.structure(2, "c") == [])
        #expect(try p.structure(3, "d") == [])
        #expect(try p.structure(9, "e") == [])
        #expect(fault { _ = try p.structure(4, "options") }?.message.contains("options") == true)
        #expect(fault { _ = try p.structure(5, "options") }?.code == -32602)
    }

    @Test func positionalAccess() {
        let p = XMLRPCParameters(["a", 1])
        #expect(p.count == 2)
        #expect(p.value(1) == .int(1))
        #expect(p.value(2) == nil)
        #expect(p.value(-1) == nil)
    }
}
