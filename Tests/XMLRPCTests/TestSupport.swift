import NIOCore
import XMLRPC

/// A methodCall of method `m` whose only parameter is `<value>` + `inner` + `</value>`.
func callWithValue(_ inner: String) -> [UInt8] {
    Array("<?xml version=\"1.0\"?><methodCall><methodName>m</methodName><params><param><value>\(inner)</value></param></params></methodCall>".utf8)
}

/// The fault code decoding `body` as a call throws, or nil when it decodes.
func callFaultCode(_ body: [UInt8], encoding: String? = nil, limits: XMLRPCLimits = .init()) -> Int? {
    callFault(body, encoding: encoding, limits: limits)?.code
}

func callFaultCode(_ body: String, limits: XMLRPCLimits = .init()) -> Int? {
    callFault(Array(body.utf8), limits: limits)?.code
}

func callFault(_ body: [UInt8], encoding: String? = nil, limits: XMLRPCLimits = .init()) -> XMLRPCFault? {
    do throws(XMLRPCFault) {
        _ = try XMLRPCDecoder.decodeCall(body, encoding: encoding, limits: limits)
        return nil
    } catch {
        return error
    }
}

/// The single parameter of a decoded call built by `callWithValue`.
func decodedValue(_ inner: String) throws -> XMLRPCValue {
    let call = try XMLRPCDecoder.decodeCall(callWithValue(inner))
    guard call.params.count == 1 else { throw XMLRPCFault(code: 0, message: "expected one param") }
    return call.params[0]
}

func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
func text(_ buffer: ByteBuffer) -> String { String(buffer: buffer) }

/// Decodes a response body to its value, failing on faults.
func responseValue(_ buffer: ByteBuffer) throws -> XMLRPCValue {
    try XMLRPCDecoder.decodeResponse(buffer).get()
}

extension Result where Failure == XMLRPCFault {
    /// The fault code, or nil on success.
    var faultCode: Int? {
        if case .failure(let fault) = self { return fault.code }
        return nil
    }
}
