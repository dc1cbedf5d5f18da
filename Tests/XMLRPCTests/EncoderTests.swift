import Testing
@testable import XMLRPC

@Suite struct EncoderTests {
    static let header = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"

    func response(_ value: XMLRPCValue) throws -> String {
        let body = text(try XMLRPCEncoder.encodeResponse(value))
        let prefix = Self.header + "<methodResponse><params><param>"
        let suffix = "</param></params></methodResponse>\n"
        try #require(body.hasPrefix(prefix) && body.hasSuffix(suffix), "\(body)")
        return String(body.dropFirst(prefix.count).dropLast(suffix.count))
    }

    @Test func exactScalarForms() throws {
        #expect(try response(.int(-42)) == "<value><int>-42</int></value>")
        #expect(try response(.int(.min)) == "<value><int>-2147483648</int></value>")
        #expect(try response(.i8(.min)) == "<value><i8>-9223372036854775808</i8></value>")
        #expect(try response(.bool(true)) == "<value><boolean>1</boolean></value>")
        #expect(try response(.bool(false)) == "<value><boolean>0</boolean></value>")
        #expect(try response(.nil) == "<value><nil/></value>")
        #expect(try response(.string("")) == "<value><string></string></value>")
        #expect(try response(.base64(Array("hello".utf8))) == "<value><base64>aGVsbG8=</base64></value>")
        #expect(try response(.base64(Array(repeating: 0xFF, count: 100))).contains("\n") == false)
        #expect(try response(.dateTime(XMLRPCDateTime(year: 5, month: 1, day: 2, hour: 3, minute: 4, second: 5)!))
            == "<value><dateTime.iso8601>00050102T03:04:05</dateTime.iso8601></value>")
        #expect(try response(.array([])) == "<value><array><data></data></array></value>")
        #expect(try response(["a": 1]) ==
            "<value><struct><member><name>a</name><value><int>1</int></value></member></struct></value>")
    }

    @Test func stringEscaping() throws {
        #expect(try response(.string("a&b<c>d\"e'f")) == "<value><string>a&amp;b&lt;c&gt;d\"e'f</string></value>")
        #expect(try response(.string("x\r\ny\tz")) == "<value><string>x&#13;\ny\tz</string></value>")
        #expect(try response(.string("\u{1}\u{8}\u{B}\u{C}\u{1F}")) == "<value><string>\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}</string></value>")
        #expect(try response(.string("\u{FFFE}\u{FFFF}\u{FFFD}\u{FEFF}")) == "<value><string>\u{FFFD}\u{FFFD}\u{FFFD}\u{FEFF}</string></value>")
        #expect(try response(["<&>": "v"]).contains("<name>&lt;&amp;&gt;</name>"))
    }

    static let doubles: [(Double, String)] = [
        (0, "0.0"), (-0.0, "-0.0"), (1, "1.0"), (-1.5, "-1.5"), (0.1, "0.1"), (100, "100.0"),
        (1e-7, "0.0000001"), (1.5e-7, "0.00000015"), (1e21, "1000000000000000000000.0"),
        (1e16, "10000000000000000.0"), (123456789012345680000.0, "123456789012345680000.0"),
        (0.001, "0.001"), (12.34, "12.34"), (1.0 / 3.0, "0.3333333333333333"),
        (.leastNonzeroMagnitude, "0." + String(repeating: "0", count: 323) + "5"),
        (1.7976931348623157e308, "17976931348623157" + String(repeating: "0", count: 292) + ".0"),
    ]

    @Test(arguments: doubles)
    func doubleFormatting(_ value: Double, _ expected: String) throws {
        #expect(XMLRPCEncoder.formatDouble(value) == expected)
        #expect(try response(.double(value)) == "<value><double>\(expected)</double></value>")
        #expect(Double(expected) == value)
    }

    @Test func doubleDigitsOnly() {
        for value in [1e-300, 2.5e300, 6.02214076e23, -4.9e-10, 3.14159] {
            let text = XMLRPCEncoder.formatDouble(value)!
            #expect(text.allSatisfy { $0.isNumber || $0 == "." || $0 == "-" }, "\(text)")
            #expect(Double(text) == value)
        }
    }

    @Test func nonFiniteDoublesThrow() {
        for value in [Double.infinity, -.infinity, .nan] {
            #expect(throws: XMLRPCFault.internalError) { try XMLRPCEncoder.encodeResponse(.double(value)) }
            #expect(throws: XMLRPCFault.internalError) {
                try XMLRPCEncoder.encodeResponse(["nested": [.double(value)]])
            }
            #expect(XMLRPCEncoder.formatDouble(value) == nil)
        }
    }

    @Test func anEncodedValueIsWrittenAsItIsWherever() throws {
        let pages: XMLRPCValue = [["id": "1", "jpg": "http://x/a.jpg?e=1&s=<>"], ["id": 2, "ok": true, "at": .double(1.5)]]
        let encoded = try XMLRPCEncodedValue(pages)
        #expect(encoded.typeName == "array" && XMLRPCValue.encoded(encoded).typeName == "array")
        #expect(try response(.encoded(encoded)) == (try response(pages)))
        let outer: XMLRPCValue = ["zip": "z", "pagines": .encoded(encoded)]
        #expect(try response(outer) == (try response(["zip": "z", "pagines": pages])), "inside a struct too")
        #expect(try XMLRPCDecoder.decodeResponse(XMLRPCEncoder.encodeResponse(outer)) == .success(["zip": "z", "pagines": pages]))
        #expect(throws: XMLRPCFault.internalError) { try XMLRPCEncodedValue(["bad": .double(.nan)]) }
    }

    @Test func faultDocument() {
        let body = text(XMLRPCEncoder.encodeFault(XMLRPCFault(code: -32602, message: "parameter id: <bad> & worse")))
        #expect(body == Self.header + "<methodResponse><fault><value><struct><member><name>faultCode</name><value><int>-32602</int></value></member><member><name>faultString</name><value><string>parameter id: &lt;bad&gt; &amp; worse</string></value></member></struct></value></fault></methodResponse>\n")
    }

    @Test func callDocument() throws {
        let body = text(try XMLRPCEncoder.encodeCall(XMLRPCCall(methodName: "a.b", params: ["x", 1])))
        #expect(body == Self.header + "<methodCall><methodName>a.b</methodName><params><param><value><string>x</string></value></param><param><value><int>1</int></value></param></params></methodCall>\n")
    }

    @Test func factoryFaults() {
        #expect(XMLRPCFault.notWellFormed("x").code == -32700)
        #expect(XMLRPCFault.invalidRequest("x").code == -32600)
        #expect(XMLRPCFault.methodNotFound("a.b") == XMLRPCFault(code: -32601, message: "unknown method a.b"))
        #expect(XMLRPCFault.invalidParameter("id", "missing") == XMLRPCFault(code: -32602, message: "parameter id: missing"))
        #expect(XMLRPCFault.internalError == XMLRPCFault(code: -32603, message: "internal error"))
    }

    @Test func dateTimeValidation() {
        #expect(XMLRPCDateTime(year: 2023, month: 2, day: 29) == nil)
        #expect(XMLRPCDateTime(year: 2000, month: 2, day: 29) != nil)
        #expect(XMLRPCDateTime(year: 1900, month: 2, day: 29) == nil)
        #expect(XMLRPCDateTime(year: 2024, month: 4, day: 31) == nil)
        #expect(XMLRPCDateTime(year: 2024, month: 1, day: 1, hour: 23, minute: 59, second: 60) == nil)
        #expect(XMLRPCDateTime(year: 10000, month: 1, day: 1) == nil)
        #expect(XMLRPCDateTime("2024-12-31T23:59:59")?.iso8601 == "20241231T23:59:59")
        #expect(XMLRPCDateTime("20241231T23:59:59")?.day == 31)
        #expect(XMLRPCDateTime("2024-12-31") == nil)
        #expect(XMLRPCDateTime("20241231T23:59:59Z") == nil)
    }
}
