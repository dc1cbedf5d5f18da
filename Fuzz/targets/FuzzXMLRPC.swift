// libFuzzer target: XMLRPCDecoder.decodeCall / decodeResponse on arbitrary bytes.
// Property checked besides "no crash, no leak, no hang": every refusal is -32700 or -32600, and a
// decoded call re-encodes and decodes to the same call (the codec round-trips what it accepts).
import XMLRPC

private let encodings: [String?] = [nil, nil, nil, nil, "utf-8", "ISO-8859-1", "UTF-16", "us-ascii"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzXMLRPC(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    // A last byte below 8 picks the declared charset (as if from Content-Type); otherwise none is declared.
    let encoding = size > 0 && data[size - 1] < 8 ? encodings[Int(data[size - 1])] : nil
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let small = XMLRPCLimits(maxDepth: 16, maxElements: 5_000, maxMulticallCalls: 100, maxStringBytes: 1 << 16)
    do {
        let call = try XMLRPCDecoder.decodeCall(bytes, encoding: encoding, limits: small)
        // Round trip: what we accept, we can write back, and read again as the same call.
        let encoded = try XMLRPCEncoder.encodeCall(call)
        let again = try XMLRPCDecoder.decodeCall(encoded, limits: small)
        if again != call {
            fatalError("round trip changed the call: \(call) -> \(again)")
        }
    } catch {
        if error.code != -32700 && error.code != -32600 {
            fatalError("unexpected fault \(error)")
        }
    }
    do {
        _ = try XMLRPCDecoder.decodeResponse(bytes, encoding: encoding, limits: small)
    } catch {
        if error.code != -32700 && error.code != -32600 {
            fatalError("unexpected fault \(error)")
        }
    }
    return 0
}
