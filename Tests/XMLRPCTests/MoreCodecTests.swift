import NIOCore
import Testing
@testable import XMLRPC

@Suite struct MoreCodecTests {
    /// Every special character at every position of strings longer than the 8-byte fast path.
    @Test func escapingAtEveryPosition() throws {
        let specials: [(String, String)] = [
            ("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("\r", "&#13;"), ("\u{1}", "\u{FFFD}"),
            ("\u{FFFF}", "\u{FFFD}"), ("\u{FFFE}", "\u{FFFD}"), ("\u{F000}", "\u{F000}"), ("\u{FFFD}", "\u{FFFD}"),
            ("\t", "\t"), ("\n", "\n"), ("é", "é"),
        ]
        for (special, escaped) in specials {
            for position in 0...20 {
                let prefix = String(repeating: "a", count: position)
                let suffix = String(repeating: "z", count: 20 - position)
                let body = text(try XMLRPCEncoder.encodeResponse(.string(prefix + special + suffix)))
                #expect(body.contains("<string>" + prefix + escaped + suffix + "</string>"),
                        "\(special.unicodeScalars.first!.value) at \(position)")
            }
        }
        // Long text with many specials round-trips (\r excepted, it is written as a reference and comes back).
        let long = String(repeating: "a<b>&c\r\n\u{FFFD}d\u{F000}ü漢🎉", count: 500)
        #expect(try responseValue(XMLRPCEncoder.encodeResponse(.string(long))) == .string(long))
    }

    @Test func largeResponseGrowsTheBuffer() throws {
        let big = XMLRPCValue.array((0..<5000).map { .string("item \($0) with some text") })
        let bytes = try XMLRPCEncoder.encodeResponse(big)
        #expect(bytes.readableBytes > 100_000)
        #expect(try responseValue(bytes) == big)
        let blob = XMLRPCValue.base64((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        #expect(try responseValue(XMLRPCEncoder.encodeResponse(blob)) == blob)
    }

    static let badResponses: [(String, Int)] = [
        ("<methodResponse></methodResponse>", -32600),
        ("<methodResponse><params></params></methodResponse>", -32600),
        ("<methodResponse><params><param><value>1</value></param><param><value>2</value></param></params></methodResponse>", -32600),
        ("<methodResponse><fault><value><struct></struct></value></fault></methodResponse>", -32600),
        ("<methodResponse><fault><value><string>x</string></value></fault></methodResponse>", -32600),
        ("<methodResponse><fault><value><struct><member><name>faultCode</name><value><boolean>1</boolean></value></member></struct></value></fault></methodResponse>", -32600),
        ("<methodResponse><params><param><value>1</value></param></params><fault/></methodResponse>", -32600),
        ("<methodCall><methodName>m</methodName></methodCall>", -32700),
        ("<methodResponse><params><param><value>1</value></param></params>", -32700),
    ]

    @Test(arguments: badResponses)
    func badResponse(_ body: String, _ code: Int) {
        do throws(XMLRPCFault) {
            _ = try XMLRPCDecoder.decodeResponse(Array(body.utf8))
            Issue.record("decoded \(body)")
        } catch {
            #expect(error.code == code, "\(body): \(error)")
        }
    }

    @Test func faultWithStringCodeAndNoMessage() throws {
        let body = "<methodResponse><fault><value><struct><member><name>faultCode</name><value><string>4</string></value></member></struct></value></fault></methodResponse>"
        #expect(try XMLRPCDecoder.decodeResponse(Array(body.utf8)) == .failure(XMLRPCFault(code: 4, message: "")))
    }

    @Test func pythonStyleDocuments() throws {
        // As written by Python's xmlrpc.client (newlines between elements, <i4>/<int>, exponent doubles).
        let call = """
        <?xml version='1.0'?>
        <methodCall>
        <methodName>epquiosc.getEdicio</methodName>
        <params>
        <param>
        <value><string>user</string></value>
        </param>
        <param>
        <value><int>3</int></value>
        </param>
        <param>
        <value><double>1e-05</double></value>
        </param>
        <param>
        <value><nil/></value></param>
        </params>
        </methodCall>

        """
        let decoded = try XMLRPCDecoder.decodeCall(Array(call.utf8))
        #expect(decoded == XMLRPCCall(methodName: "epquiosc.getEdicio", params: ["user", 3, .double(1e-05), .nil]))
    }

    @Test func concurrentDecodingKeepsErrorsApart() async throws {
        let good = Array(buffer: try XMLRPCEncoder.encodeCall(XMLRPCCall(methodName: "a.b", params: ["x", 1, [2.5]])))
        let broken = Array("<methodCall><methodName>a</methodName><oops></methodCall>".utf8)
        let results = await withTaskGroup(of: (Bool, Int?).self) { group in
            for index in 0..<64 {
                let isGood = index % 2 == 0
                group.addTask {
                    var code: Int?
                    for _ in 0..<50 { code = callFaultCode(isGood ? good : broken) }
                    return (isGood, code)
                }
            }
            var collected: [(Bool, Int?)] = []
            for await result in group { collected.append(result) }
            return collected
        }
        #expect(results.count == 64)
        for (isGood, code) in results {
            #expect(code == (isGood ? nil : -32700))
        }
    }
}
