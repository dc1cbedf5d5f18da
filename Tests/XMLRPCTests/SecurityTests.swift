import Foundation
import Testing
@testable import XMLRPC

@Suite struct SecurityTests {
    static let billionLaughs = """
    <?xml version="1.0"?>
    <!DOCTYPE lolz [
     <!ENTITY lol "lol">
     <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
     <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
     <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
     <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
     <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
     <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
     <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
     <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
     <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
    ]>
    <methodCall><methodName>m</methodName><params><param><value><string>&lol9;</string></value></param></params></methodCall>
    """

    static let doctypes: [String] = [
        billionLaughs,
        // XXE: external entity
        """
        <?xml version="1.0"?><!DOCTYPE m [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
        <methodCall><methodName>m</methodName><params><param><value>&xxe;</value></param></params></methodCall>
        """,
        // external DTD subset over the network
        """
        <!DOCTYPE methodCall SYSTEM "http://127.0.0.1:9/evil.dtd"><methodCall><methodName>m</methodName></methodCall>
        """,
        // parameter entity
        """
        <!DOCTYPE m [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]><methodCall><methodName>m</methodName></methodCall>
        """,
        // harmless-looking internal subset
        "<!DOCTYPE methodCall [<!ELEMENT methodCall ANY>]><methodCall><methodName>m</methodName></methodCall>",
        "<!DOCTYPE methodCall><methodCall><methodName>m</methodName></methodCall>",
        // after a BOM, comments and processing instructions
        "\u{FEFF}<?xml version=\"1.0\"?><!-- c --><?p x?>\n<!DOCTYPE methodCall><methodCall><methodName>m</methodName></methodCall>",
    ]

    @Test(arguments: doctypes)
    func doctypeRefused(_ body: String) throws {
        let fault = try #require(callFault(Array(body.utf8)))
        #expect(fault.code == -32700)
        #expect(fault.message.contains("DOCTYPE is not allowed"))
    }

    @Test func doctypeInUTF16IsRefusedByTheReader() throws {
        // UTF-16 skips the byte-level prolog check; the reader's DOCTYPE node check still refuses it.
        let body = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><!DOCTYPE methodCall><methodCall><methodName>m</methodName></methodCall>"
        var bytes: [UInt8] = [0xFF, 0xFE]
        for unit in body.utf16 { bytes.append(UInt8(unit & 0xFF)); bytes.append(UInt8(unit >> 8)) }
        let fault = try #require(callFault(bytes))
        #expect(fault.code == -32700)
        #expect(fault.message.contains("DOCTYPE"))
    }

    @Test(arguments: doctypes)
    func doctypesInUTF16AreRefused(_ body: String) throws {
        let declared = body.replacingFirst("<?xml version=\"1.0\"?>", with: "")
        var bytes: [UInt8] = [0xFF, 0xFE]
        for unit in declared.utf16 { bytes.append(UInt8(unit & 0xFF)); bytes.append(UInt8(unit >> 8)) }
        let clock = ContinuousClock()
        var fault: XMLRPCFault?
        let elapsed = clock.measure { fault = callFault(bytes) }
        #expect(fault?.code == -32700)
        #expect(elapsed < .milliseconds(200))
    }

    @Test func billionLaughsIsRefusedFast() throws {
        let bytes = Array(Self.billionLaughs.utf8)
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            for _ in 0..<100 { _ = callFault(bytes) }
        }
        #expect(callFaultCode(bytes) == -32700)
        #expect(elapsed < .seconds(1), "100 refusals took \(elapsed)")
    }

    @Test func xxeDoesNotLeakFileContent() throws {
        let body = Array(Self.doctypes[1].utf8)
        let fault = try #require(callFault(body))
        #expect(!fault.message.contains("root:"))
    }

    @Test func deepNestingIsRefused() throws {
        let depth = 10_000
        var inner = ""
        inner.reserveCapacity(depth * 40)
        for _ in 0..<depth { inner += "<array><data><value>" }
        inner += "x"
        for _ in 0..<depth { inner += "</value></data></array>" }
        let fault = try #require(callFault(callWithValue(inner)))
        #expect(fault.code == -32600)
        #expect(fault.message.contains("nesting too deep"))
    }

    @Test func nestingLimitIsExact() throws {
        func nested(_ levels: Int, struct useStruct: Bool = false) -> [UInt8] {
            var inner = ""
            for _ in 0..<levels {
                inner += useStruct ? "<struct><member><name>k</name><value>" : "<array><data><value>"
            }
            inner += "<int>1</int>"
            for _ in 0..<levels {
                inner += useStruct ? "</value></member></struct>" : "</value></data></array>"
            }
            return callWithValue(inner)
        }
        #expect(callFaultCode(nested(64)) == nil)
        #expect(callFaultCode(nested(65)) == -32600)
        #expect(callFaultCode(nested(64, struct: true)) == nil)
        #expect(callFaultCode(nested(65, struct: true)) == -32600)
        #expect(callFaultCode(nested(3), limits: XMLRPCLimits(maxDepth: 2)) == -32600)
        #expect(callFaultCode(nested(2), limits: XMLRPCLimits(maxDepth: 2)) == nil)
    }

    @Test func libxmlDepthLimitIsANestingFault() throws {
        // With a raised maxDepth, libxml2's own limit (256 elements) answers first; still -32600.
        var inner = ""
        for _ in 0..<200 { inner += "<array><data><value>" }
        inner += "x"
        for _ in 0..<200 { inner += "</value></data></array>" }
        let fault = try #require(callFault(callWithValue(inner), limits: XMLRPCLimits(maxDepth: 1000)))
        #expect(fault.code == -32600)
        #expect(fault.message.contains("nesting too deep"))
    }

    @Test func elementCountIsLimited() throws {
        let values = String(repeating: "<value><int>1</int></value>", count: 60)
        let body = callWithValue("<array><data>\(values)</data></array>")
        #expect(callFaultCode(body, limits: XMLRPCLimits(maxElements: 100)) == -32600)
        #expect(callFaultCode(body, limits: XMLRPCLimits(maxElements: 200)) == nil)
        let fault = try #require(callFault(body, limits: XMLRPCLimits(maxElements: 100)))
        #expect(fault.message.contains("elements"))
    }

    @Test func stringLengthIsLimited() {
        let long = String(repeating: "a", count: 2000)
        let limits = XMLRPCLimits(maxStringBytes: 1000)
        #expect(callFaultCode(callWithValue("<string>\(long)</string>"), limits: limits) == -32600)
        #expect(callFaultCode(callWithValue(long), limits: limits) == -32600)
        #expect(callFaultCode(callWithValue("<base64>\(long)</base64>"), limits: limits) == -32600)
        #expect(callFaultCode(callWithValue("<string>\(long)</string>")) == nil)
    }

    @Test func tooManyElementsHostileFlood() {
        // 250 000 empty values exceed the default element limit.
        let flood = String(repeating: "<value/>", count: 250_000)
        #expect(callFaultCode(callWithValue("<array><data>\(flood)</data></array>")) == -32600)
    }
}

@Suite struct EncodingTests {
    static let latin1Word: [UInt8] = [0x50, 0x72, 0x65, 0x73, 0xE8, 0x6E, 0x63, 0x69, 0x61]  // "Presència"

    func body(declaration: String) -> [UInt8] {
        Array("\(declaration)<methodCall><methodName>m</methodName><params><param><value><string>".utf8)
            + Self.latin1Word + Array("</string></value></param></params></methodCall>".utf8)
    }

    @Test func declaredLatin1() throws {
        for declaration in ["<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>",
                            "<?xml version='1.0' encoding='iso-8859-1'?>",
                            "<?xml version=\"1.0\" encoding=\"latin1\"?>"] {
            let call = try XMLRPCDecoder.decodeCall(body(declaration: declaration))
            #expect(call.params == [.string("Presència")], "\(declaration)")
        }
    }

    @Test func latin1FromHTTPCharset() throws {
        let call = try XMLRPCDecoder.decodeCall(body(declaration: ""), encoding: "ISO-8859-1")
        #expect(call.params == [.string("Presència")])
        let quoted = try XMLRPCDecoder.decodeCall(body(declaration: "<?xml version=\"1.0\"?>"), encoding: "\"iso-8859-1\"")
        #expect(quoted.params == [.string("Presència")])
    }

    @Test func httpCharsetWinsOverDeclaration() throws {
        // Declared UTF-8 but labelled latin-1 by HTTP: the HTTP charset decides.
        let call = try XMLRPCDecoder.decodeCall(
            body(declaration: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"), encoding: "ISO-8859-1")
        #expect(call.params == [.string("Presència")])
        // Declared latin-1 but labelled UTF-8 by HTTP: the bytes are not UTF-8.
        #expect(callFaultCode(body(declaration: "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>"),
                              encoding: "utf-8") == -32700)
    }

    @Test func undeclaredLatin1IsNotUTF8() {
        #expect(callFaultCode(body(declaration: "")) == -32700)
        #expect(callFaultCode(body(declaration: "<?xml version=\"1.0\"?>")) == -32700)
    }

    @Test func undeclaredUTF8() throws {
        let text = "Presència — niño 日本 🎉"
        let bytes = Array("<methodCall><methodName>m</methodName><params><param><value>\(text)</value></param></params></methodCall>".utf8)
        #expect(try XMLRPCDecoder.decodeCall(bytes).params == [.string(text)])
        #expect(try XMLRPCDecoder.decodeCall(bytes, encoding: "UTF-8").params == [.string(text)])
        #expect(try XMLRPCDecoder.decodeCall(bytes, encoding: "utf8").params == [.string(text)])
        #expect(try XMLRPCDecoder.decodeCall([0xEF, 0xBB, 0xBF] + bytes).params == [.string(text)])
    }

    @Test func utf16WithBOM() throws {
        let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><methodCall><methodName>m</methodName><params><param><value>Presència</value></param></params></methodCall>"
        var bytes: [UInt8] = [0xFE, 0xFF]
        for unit in text.utf16 { bytes.append(UInt8(unit >> 8)); bytes.append(UInt8(unit & 0xFF)) }
        #expect(try XMLRPCDecoder.decodeCall(bytes).params == [.string("Presència")])
    }

    @Test func unknownHTTPCharset() throws {
        let fault = try #require(callFault(body(declaration: ""), encoding: "x-no-such-charset"))
        #expect(fault.code == -32700)
        #expect(fault.message.contains("unsupported encoding"))
    }
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        return String(self[..<range.lowerBound]) + replacement + String(self[range.upperBound...])
    }
    // MARK: Attributes (libxml2 checks a tag's attributes pairwise)

    static func attributes(_ count: Int) -> String { (0..<count).map { " a\($0)=\"\"" }.joined() }

    @Test func anElementWithManyAttributesIsRefusedBeforeParsing() throws {
        for element in ["methodCall", "methodName", "value"] {
            let crowded = "<methodCall><methodName>m</methodName><params><param><value><string>x</string></value></param></params></methodCall>"
                .replacingOccurrences(of: "<\(element)>", with: "<\(element)\(Self.attributes(60_000))>")
            let fault = try #require(callFault(Array(crowded.utf8)), "\(element)")
            #expect(fault.code == -32700)
            #expect(fault.message.contains("more than 16 attributes"), "\(fault.message)")
        }
        let sixteen = "<methodCall\(Self.attributes(16))><methodName>m</methodName></methodCall>"
        #expect(callFaultCode(sixteen) == nil, "up to the limit is libxml2's to judge")
        #expect(callFaultCode("<methodCall\(Self.attributes(17))><methodName>m</methodName></methodCall>") == -32700)
        #expect(callFaultCode("<methodCall\(Self.attributes(17))><methodName>m</methodName></methodCall>",
                              limits: XMLRPCLimits(maxAttributes: 20)) == nil)
        // Single or double quotes, `=` and `>` inside a value: counted as one attribute each.
        let quoted = "<methodCall" + (0..<16).map { " q\($0)='x=y>z' " }.joined() + "><methodName>m</methodName></methodCall>"
        #expect(callFaultCode(quoted) == nil)
    }

    @Test func equalsSignsOutsideStartTagsAreNotAttributes() {
        let markup = "<a " + (0..<40).map { "b\($0)=\"1\"" }.joined(separator: " ") + ">"
        for inner in ["<string><![CDATA[\(markup)]]></string>", "<string>\(String(repeating: "a=b ", count: 100))</string>",
                      "<!-- \(markup) --><string>x</string>", "<?pi \(markup)?><string>x</string>"] {
            #expect(callFaultCode(callWithValue(inner)) == nil, "\(inner.prefix(40))")
        }
        // An end tag, a comment opener without its dashes, a CDATA section: none starts counting.
        #expect(callFaultCode(callWithValue("<string>x</string  >")) == nil)
    }

    @Test func wideEncodingsAreScannedByTheirASCII() {
        let crowded = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><methodCall\(Self.attributes(17))><methodName>m</methodName></methodCall>"
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in crowded.utf16 { utf16 += [UInt8(truncatingIfNeeded: unit), UInt8(truncatingIfNeeded: unit >> 8)] }
        #expect(callFaultCode(utf16) == -32700)
        let fine = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><methodCall\(Self.attributes(2))><methodName>m</methodName></methodCall>"
        var fineUTF16: [UInt8] = [0xFF, 0xFE]
        for unit in fine.utf16 { fineUTF16 += [UInt8(truncatingIfNeeded: unit), UInt8(truncatingIfNeeded: unit >> 8)] }
        #expect(callFaultCode(fineUTF16) == nil)
    }
}
