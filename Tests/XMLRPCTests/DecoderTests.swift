import Testing
@testable import XMLRPC

@Suite struct DecoderAcceptsTests {
    @Test func scalarForms() throws {
        #expect(try decodedValue("<int>42</int>") == .int(42))
        #expect(try decodedValue("<i4>-2147483648</i4>") == .int(.min))
        #expect(try decodedValue("<i4>+17</i4>") == .int(17))
        #expect(try decodedValue("<int>007</int>") == .int(7))
        #expect(try decodedValue("<i8>9223372036854775807</i8>") == .i8(.max))
        #expect(try decodedValue("<i8>-9223372036854775808</i8>") == .i8(.min))
        #expect(try decodedValue("<boolean>1</boolean>") == .bool(true))
        #expect(try decodedValue("<boolean>0</boolean>") == .bool(false))
        #expect(try decodedValue("<double>1.5</double>") == .double(1.5))
        #expect(try decodedValue("<double>-0.25</double>") == .double(-0.25))
        #expect(try decodedValue("<double>1e-05</double>") == .double(1e-05))
        #expect(try decodedValue("<double>2.5E+3</double>") == .double(2500))
        #expect(try decodedValue("<double>.5</double>") == .double(0.5))
        #expect(try decodedValue("<double>7.</double>") == .double(7))
        #expect(try decodedValue("<double>42</double>") == .double(42))
        #expect(try decodedValue("<dateTime.iso8601>19980717T14:08:55</dateTime.iso8601>")
            == .dateTime(XMLRPCDateTime(year: 1998, month: 7, day: 17, hour: 14, minute: 8, second: 55)!))
        #expect(try decodedValue("<dateTime.iso8601>1998-07-17T14:08:55</dateTime.iso8601>")
            == .dateTime(XMLRPCDateTime(year: 1998, month: 7, day: 17, hour: 14, minute: 8, second: 55)!))
        #expect(try decodedValue("<base64>aGVs\n bG8=\r\n</base64>") == .base64(Array("hello".utf8)))
        #expect(try decodedValue("<base64>YQ==</base64>") == .base64([0x61]))
        #expect(try decodedValue("<base64></base64>") == .base64([]))
        #expect(try decodedValue("<base64/>") == .base64([]))
    }

    @Test func stringsKeepWhitespaceAndCDATA() throws {
        #expect(try decodedValue("<string>  two  spaces\n\ttab </string>") == .string("  two  spaces\n\ttab "))
        #expect(try decodedValue("<string/>") == .string(""))
        #expect(try decodedValue("<string></string>") == .string(""))
        #expect(try decodedValue("<string>a<![CDATA[<b> & c]]>d</string>") == .string("a<b> & cd"))
        #expect(try decodedValue("<string>x &amp; y &lt; z &#233; &#x263A;</string>") == .string("x & y < z é ☺"))
        #expect(try decodedValue("<string>a<!-- comment -->b</string>") == .string("ab"))
        #expect(try decodedValue("<string>cr&#13;lf</string>") == .string("cr\rlf"))
        #expect(try decodedValue("<string> </string>") == .string(" "))
    }

    @Test func untypedValuesAreStrings() throws {
        #expect(try decodedValue("abc") == .string("abc"))
        #expect(try decodedValue("  padded  ") == .string("  padded  "))
        #expect(try decodedValue("") == .string(""))
        #expect(try XMLRPCDecoder.decodeCall(Array(
            "<methodCall><methodName>m</methodName><params><param><value/></param></params></methodCall>".utf8)
        ).params == [.string("")])
        // White space around a typed element is layout, not content.
        #expect(try decodedValue("\n  <int>5</int>\n") == .int(5))
    }

    @Test func nilForms() throws {
        #expect(try decodedValue("<nil/>") == .nil)
        #expect(try decodedValue("<nil></nil>") == .nil)
        #expect(try decodedValue("<ex:nil/>") == .nil)
        #expect(try decodedValue("<ex:i8>12</ex:i8>") == .i8(12))
        #expect(try decodedValue(
            "<e:nil xmlns:e=\"http://ws.apache.org/xmlrpc/namespaces/extensions\"/>") == .nil)
        #expect(try decodedValue(
            "<ex:nil xmlns:ex=\"http://ws.apache.org/xmlrpc/namespaces/extensions\"/>") == .nil)
        #expect(try decodedValue(
            "<q:i8 xmlns:q=\"http://ws.apache.org/xmlrpc/namespaces/extensions\">-3</q:i8>") == .i8(-3))
    }

    @Test func prettyPrintedDocument() throws {
        let body = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- a comment -->
        <?pi something?>
        <methodCall>
          <methodName>sample.add</methodName>
          <params>
            <param>
              <value><array>
                <data>
                  <value><int>1</int></value>
                  <value>
                    <struct>
                      <member>
                        <name>k</name>
                        <value><string>v</string></value>
                      </member>
                      <member><value>first value</value><name>reversed</name></member>
                    </struct>
                  </value>
                </data>
              </array></value>
            </param>
            <param><value><array><data/></array></value></param>
            <param><value><array></array></value></param>
          </params>
        </methodCall>

        """
        let call = try XMLRPCDecoder.decodeCall(Array(body.utf8))
        #expect(call.methodName == "sample.add")
        #expect(call.params == [
            .array([.int(1), .structure([XMLRPCMember("k", "v"), XMLRPCMember("reversed", "first value")])]),
            .array([]), .array([]),
        ])
    }

    @Test func methodNameRules() throws {
        func name(_ text: String) -> Int? {
            callFaultCode("<methodCall><methodName>\(text)</methodName></methodCall>")
        }
        #expect(name("a.B_9:x/y") == nil)
        #expect(name(" system.listMethods\n") == nil)  // surrounding white space is trimmed
        #expect(name(String(repeating: "a", count: 256)) == nil)
        #expect(name(String(repeating: "a", count: 257)) == -32600)
        #expect(name("bad name") == -32600)
        #expect(name("semi;colon") == -32600)
        #expect(name("ünïcode") == -32600)
        #expect(name("") == -32600)
        #expect(name("   ") == -32600)
    }

    @Test func duplicateMemberNamesAreKeptInOrder() throws {
        let value = try decodedValue(
            "<struct><member><name>a</name><value>1</value></member><member><name>a</name><value>2</value></member></struct>")
        #expect(value.structureValue?.count == 2)
        #expect(value["a"] == .string("1"))
    }
}

@Suite struct DecoderRefusesTests {
    /// Inputs that are not well-formed XML or are refused before parsing: -32700.
    static let notWellFormed: [String] = [
        "",
        "   ",
        "not xml at all",
        "<methodCall><methodName>m</methodName>",  // truncated
        "<methodCall><methodName>m</methodName></methodcall>",  // tag mismatch
        "<methodCall><methodName>m</methodName></methodCall><extra/>",  // two roots
        "<methodCall><methodName>m</methodName></methodCall>trailing",
        "<methodCall><methodName>a &undefined; b</methodName></methodCall>",
        "<methodCall><methodName>m</methodName><params><param><value><string>a < b</string></value></param></params></methodCall>",
        "<methodResponse><params/></methodResponse>",  // wrong root for a call
        "<foo/>",  // wrong root
        "<?xml version=\"1.0\" encoding=\"no-such-charset\"?><methodCall><methodName>m</methodName></methodCall>",
    ]

    @Test(arguments: notWellFormed)
    func notWellFormedIsMinus32700(_ body: String) {
        #expect(callFaultCode(body) == -32700)
    }

    /// Well-formed documents that are not valid method calls: -32600.
    static let invalid: [String] = [
        "<methodCall></methodCall>",  // missing methodName
        "<methodCall><params/></methodCall>",
        "<methodCall><methodName></methodName></methodCall>",  // empty methodName
        "<methodCall><methodName/></methodCall>",
        "<methodCall><methodName>m</methodName><param/></methodCall>",  // params not params
        "<methodCall><methodName>m</methodName><params/><params/></methodCall>",
        "<methodCall><params/><methodName>m</methodName></methodCall>",
        "<methodCall><methodName>m</methodName><methodName>n</methodName></methodCall>",
        "<methodCall>text<methodName>m</methodName></methodCall>",
        "<methodCall><methodName>m<b/></methodName></methodCall>",
        "<methodCall><methodName>m</methodName><params><value>1</value></params></methodCall>",
        "<methodCall><methodName>m</methodName><params><param></param></params></methodCall>",
        "<methodCall><methodName>m</methodName><params><param><value>1</value><value>2</value></param></params></methodCall>",
    ]

    @Test(arguments: invalid)
    func invalidCallIsMinus32600(_ body: String) {
        #expect(callFaultCode(body) == -32600)
    }

    /// Bad `<value>` contents: -32600.
    static let invalidValues: [String] = [
        "<int>1</int><int>2</int>",  // value with two children
        "<foo>1</foo>",  // unknown type
        "<integer>1</integer>",
        "<x:int xmlns:x=\"urn:other\">1</x:int>",
        "<y:nil xmlns:y=\"urn:other\"/>",
        "text<int>1</int>",  // text mixed with an element
        "<int>1</int>text",
        "<struct><member><value>1</value></member></struct>",  // member without name
        "<struct><member><name>a</name></member></struct>",  // member without value
        "<struct><member><name>a</name><name>b</name><value>1</value></member></struct>",
        "<struct><member><name>a</name><value>1</value><value>2</value></member></struct>",
        "<struct><value>1</value></struct>",
        "<struct>text</struct>",
        "<array><data></data><data></data></array>",  // two <data>
        "<array><value>1</value></array>",
        "<array><data><int>1</int></data></array>",
        "<array>text<data/></array>",
        "<i4>2147483648</i4>", "<i4>-2147483649</i4>", "<i4> 0</i4>", "<i4>0 </i4>", "<int></int>", "<int/>",
        "<int>1.0</int>", "<int>+</int>", "<int>-</int>", "<int>0x10</int>", "<int>1e3</int>", "<int>١</int>",
        "<int><![CDATA[12]]>a</int>", "<int><b/></int>",
        "<i8>9223372036854775808</i8>", "<i8>abc</i8>", "<i8></i8>",
        "<boolean>true</boolean>", "<boolean>2</boolean>", "<boolean></boolean>", "<boolean> 1</boolean>",
        "<double></double>", "<double>inf</double>", "<double>-inf</double>", "<double>nan</double>",
        "<double>NaN</double>", "<double>1e999</double>", "<double>1.2.3</double>", "<double>.</double>",
        "<double>1e</double>", "<double> 1.0</double>", "<double>0x1p3</double>", "<double>1,5</double>",
        "<dateTime.iso8601></dateTime.iso8601>", "<dateTime.iso8601>19981317T14:08:55</dateTime.iso8601>",
        "<dateTime.iso8601>19980230T14:08:55</dateTime.iso8601>",
        "<dateTime.iso8601>19980717T24:00:00</dateTime.iso8601>",
        "<dateTime.iso8601>19980717 14:08:55</dateTime.iso8601>",
        "<dateTime.iso8601>1998-07-17 14:08:55</dateTime.iso8601>",
        "<dateTime.iso8601>yesterday</dateTime.iso8601>",
        "<base64>YQ=</base64>", "<base64>YQ</base64>", "<base64>Y===</base64>", "<base64>YQ==YQ==</base64>",
        "<base64>a*bc</base64>", "<base64>=abc</base64>", "<base64>abcde</base64>", "<base64>YWJj-A==</base64>",
        "<string><b>bold</b></string>",
        "<nil>x</nil>",
    ]

    @Test(arguments: invalidValues)
    func invalidValueIsMinus32600(_ inner: String) {
        #expect(callFaultCode(callWithValue(inner)) == -32600)
    }

    @Test func intFaultMessage() throws {
        let fault = try #require(callFault(callWithValue("<i4>2147483648</i4>")))
        #expect(fault.code == -32600)
        #expect(fault.message.contains("invalid int value"))
    }

    @Test func unknownTypeNamesTheElement() throws {
        let fault = try #require(callFault(callWithValue("<float>1</float>")))
        #expect(fault.message.contains("<float>"))
    }

    @Test func invalidUTF8() {
        var body = callWithValue("<string>X</string>")
        let index = body.firstIndex(of: UInt8(ascii: "X"))!
        for bad: [UInt8] in [[0xE8], [0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xFF], [0xF8, 0x88, 0x80, 0x80, 0x80]] {
            var copy = body
            copy.replaceSubrange(index...index, with: bad)
            #expect(callFaultCode(copy) == -32700, "bytes \(bad)")
        }
        body.replaceSubrange(index...index, with: [0xC3, 0xA9])  // valid é
        #expect(callFaultCode(body) == nil)
    }

    @Test func nulBytes() {
        let body = callWithValue("<string>a\u{0}b</string>")
        let fault = callFault(body)
        #expect(fault?.code == -32700)
        #expect(fault?.message.contains("NUL") == true)
        var trailing = callWithValue("<string>ok</string>")
        trailing.append(0)
        #expect(callFaultCode(trailing) == -32700)
        #expect(callFaultCode(callWithValue("<string>&#0;</string>")) == -32700)
        #expect(callFaultCode(callWithValue("<string>&#1;</string>")) == -32700)
    }

    @Test func emptyBody() {
        let fault = callFault([])
        #expect(fault?.code == -32700)
        #expect(fault?.message.contains("empty") == true)
    }
}
