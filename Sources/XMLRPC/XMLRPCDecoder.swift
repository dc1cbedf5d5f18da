// XML-RPC decoding on libxml2's streaming reader (xmlTextReader): no DOM, no DTD, no entities.
// Over 400 lines because the reader is one state machine over libxml2's cursor (events, documents,
// values) that only makes sense read together; its plumbing and the scalar grammar live beside it.

import CLibXML2
import KioskIntegers
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Decodes XML-RPC documents. Every problem is an ``XMLRPCFault``:
/// -32700 for bodies that are not well-formed (or are refused before parsing: DOCTYPE, NUL bytes, ...),
/// -32600 for well-formed documents that are not valid XML-RPC (or exceed ``XMLRPCLimits``).
public enum XMLRPCDecoder {
    /// The version of the libxml2 headers the decoder was built with.
    public static let libxml2Version: String = LIBXML_DOTTED_VERSION

    /// Decodes a `<methodCall>`.
    /// - Parameter encoding: the charset from the HTTP `Content-Type`, if any. When given it wins over the
    ///   XML declaration; when nil the XML declaration decides, and without one the body is UTF-8.
    public static func decodeCall(_ bytes: UnsafeRawBufferPointer, encoding: String? = nil,
                                  limits: XMLRPCLimits = .init()) throws(XMLRPCFault) -> XMLRPCCall {
        var stream = try XMLStream(bytes, encoding: encoding, limits: limits)
        return try stream.parseCall()
    }

    /// Decodes a `<methodCall>`; see ``decodeCall(_:encoding:limits:)-(UnsafeRawBufferPointer,_,_)``.
    public static func decodeCall(_ bytes: [UInt8], encoding: String? = nil,
                                  limits: XMLRPCLimits = .init()) throws(XMLRPCFault) -> XMLRPCCall {
        let result = bytes.withUnsafeBytes { buffer -> Result<XMLRPCCall, XMLRPCFault> in
            do throws(XMLRPCFault) {
                return .success(try decodeCall(buffer, encoding: encoding, limits: limits))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Decodes a `<methodCall>` from a buffer's readable bytes (for tests and clients).
    public static func decodeCall(_ buffer: ByteBuffer, encoding: String? = nil,
                                  limits: XMLRPCLimits = .init()) throws(XMLRPCFault) -> XMLRPCCall {
        try decodeCall(Array(buffer: buffer), encoding: encoding, limits: limits)
    }

    /// Decodes a `<methodResponse>`: `.success` with its value, or `.failure` with the fault it carries.
    /// Throws when the document itself is not a valid response.
    public static func decodeResponse(_ bytes: UnsafeRawBufferPointer, encoding: String? = nil,
                                      limits: XMLRPCLimits = .init()) throws(XMLRPCFault)
        -> Result<XMLRPCValue, XMLRPCFault>
    {
        var stream = try XMLStream(bytes, encoding: encoding, limits: limits)
        return try stream.parseResponse()
    }

    /// Decodes a `<methodResponse>` (for tests and clients).
    public static func decodeResponse(_ bytes: [UInt8], encoding: String? = nil,
                                      limits: XMLRPCLimits = .init()) throws(XMLRPCFault)
        -> Result<XMLRPCValue, XMLRPCFault>
    {
        let result = bytes.withUnsafeBytes { buffer -> Result<Result<XMLRPCValue, XMLRPCFault>, XMLRPCFault> in
            do throws(XMLRPCFault) {
                return .success(try decodeResponse(buffer, encoding: encoding, limits: limits))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Decodes a `<methodResponse>` from a buffer's readable bytes (for tests and clients).
    public static func decodeResponse(_ buffer: ByteBuffer, encoding: String? = nil,
                                      limits: XMLRPCLimits = .init()) throws(XMLRPCFault)
        -> Result<XMLRPCValue, XMLRPCFault>
    {
        try decodeResponse(Array(buffer: buffer), encoding: encoding, limits: limits)
    }
}

/// A libxml2 text reader over one in-memory document, with the XML-RPC grammar on top.
struct XMLStream: ~Copyable {
    private let reader: xmlTextReaderPtr
    private let errors: ParseErrors
    private let limits: XMLRPCLimits
    private var pendingEnd = false
    private var elementCount = 0
    /// Reused buffer for the text of scalar values.
    private var scratch: [UInt8] = []

    init(_ bytes: UnsafeRawBufferPointer, encoding: String?, limits: XMLRPCLimits) throws(XMLRPCFault) {
        _ = libxml2Initialized
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw .notWellFormed("empty body") }
        guard let length = Int32(exactly: bytes.count) else { throw .notWellFormed("body too large") }

        var options = Int32(bitPattern: XML_PARSE_NONET.rawValue)
        var forcedEncoding: String?
        var wideEncoding = false
        if var name = encoding {
            name = String(name.filter { $0 != "\"" && $0 != "'" && !$0.isWhitespace })
            if !name.isEmpty {
                options |= Int32(bitPattern: XML_PARSE_IGNORE_ENC.rawValue)
                if !isUTF8Name(name) {
                    guard name.utf8.count <= 40, let handler = xmlFindCharEncodingHandler(name) else {
                        throw .notWellFormed("unsupported encoding \(name.prefix(40))")
                    }
                    _ = xmlCharEncCloseFunc(handler)
                    forcedEncoding = name
                    let lower = name.lowercased()
                    wideEncoding = lower.contains("16") || lower.contains("32") || lower.contains("ucs")
                }
            }
        }
        // UTF-16/UCS-4 bodies (by BOM or by their first bytes) contain NUL bytes legitimately.
        if bytes.count >= 2 {
            let first = bytes[0], second = bytes[1]
            if first == 0 || second == 0 || (first == 0xFE && second == 0xFF) || (first == 0xFF && second == 0xFE) {
                wideEncoding = true
            }
        }
        if !wideEncoding {
            if memchr(base, 0, bytes.count) != nil { throw .notWellFormed("NUL byte in body") }
            if prologHasDoctype(bytes) { throw .notWellFormed("DOCTYPE is not allowed") }
        }
        if startTagHasMoreAttributes(than: limits.maxAttributes, in: bytes) {
            throw .notWellFormed("an element has more than \(limits.maxAttributes) attributes (XML-RPC uses none)")
        }

        let errors = ParseErrors()
        xmlSetStructuredErrorFunc(Unmanaged.passUnretained(errors).toOpaque()) { context, error in
            guard let context, let error else { return }
            Unmanaged<ParseErrors>.fromOpaque(context).takeUnretainedValue().record(error)
        }
        let chars = base.assumingMemoryBound(to: CChar.self)
        let created: xmlTextReaderPtr?
        if let forcedEncoding {
            created = forcedEncoding.withCString { xmlReaderForMemory(chars, length, nil, $0, options) }
        } else {
            created = xmlReaderForMemory(chars, length, nil, nil, options)
        }
        guard let created else {
            xmlSetStructuredErrorFunc(nil) { _, _ in }
            throw .notWellFormed(errors.fatal ?? "cannot read the document")
        }
        self.reader = created
        self.errors = errors
        self.limits = limits
    }

    deinit {
        xmlFreeTextReader(reader)
        // Keep libxml2 quiet (it would print to stderr) without pointing at the freed collector.
        xmlSetStructuredErrorFunc(nil) { _, _ in }
    }

    // MARK: Events

    private func readFailure() -> XMLRPCFault {
        if let message = errors.fatal ?? errors.other {
            if message.hasPrefix("Excessive depth") { return .invalidRequest("nesting too deep") }
            return .notWellFormed(message)
        }
        return .notWellFormed("unreadable document")
    }

    mutating func next() throws(XMLRPCFault) -> XMLNode {
        if pendingEnd {
            pendingEnd = false
            return .end
        }
        while true {
            let status = xmlTextReaderRead(reader)
            if status != 1 {
                if status == 0, errors.fatal == nil { return .eof }
                throw readFailure()
            }
            switch xmlTextReaderNodeType(reader) {
            case 1:  // element
                elementCount += 1
                if elementCount > limits.maxElements {
                    throw .invalidRequest("more than \(limits.maxElements) elements")
                }
                if xmlTextReaderIsEmptyElement(reader) == 1 { pendingEnd = true }
                return .start(currentElement())
            case 15:  // end element
                return .end
            case 3, 4, 13, 14:  // text, CDATA, white space
                guard let text = xmlTextReaderConstValue(reader) else { continue }
                let count = strlen(UnsafeRawPointer(text).assumingMemoryBound(to: CChar.self))
                return .text(UnsafeBufferPointer(start: text, count: count))
            case 10, 12:  // document type, notation
                throw .notWellFormed("DOCTYPE is not allowed")
            case 5, 6:  // entity reference, entity
                throw .notWellFormed("entity references are not allowed")
            default:  // comments, processing instructions, ...
                continue
            }
        }
    }

    private func currentElement() -> XMLRPCElement {
        guard let local = xmlTextReaderConstLocalName(reader) else { return .other }
        guard let prefix = xmlTextReaderConstPrefix(reader) else { return classify(local) }
        // Only the extension types may carry a prefix: `ex:` literally, or any prefix bound to the
        // Apache extensions namespace.
        let kind = classify(local)
        guard kind == .nilValue || kind == .i8 else { return .other }
        let prefixLength = strlen(UnsafeRawPointer(prefix).assumingMemoryBound(to: CChar.self))
        if equals(prefix, prefixLength, "ex") { return kind }
        if let namespace = xmlTextReaderConstNamespaceUri(reader),
           equals(namespace, strlen(UnsafeRawPointer(namespace).assumingMemoryBound(to: CChar.self)),
                  apacheExtensionsNamespace)
        {
            return kind
        }
        return .other
    }

    /// The qualified name of the element the reader is on (for messages).
    private func currentName() -> String {
        guard let name = xmlTextReaderConstName(reader) else { return "?" }
        let text = String(cString: name)
        return text.utf8.count > 60 ? String(text.prefix(60)) : text
    }

    private func unexpected(in parent: StaticString) -> XMLRPCFault {
        .invalidRequest("unexpected <\(currentName())> in <\(parent)>")
    }

    // MARK: Documents

    private mutating func expectRoot(_ element: XMLRPCElement, _ name: StaticString) throws(XMLRPCFault) {
        while true {
            switch try next() {
            case .start(let kind):
                guard kind == element else {
                    throw .notWellFormed("the root element must be <\(name)>, not <\(currentName())>")
                }
                return
            case .text:
                continue
            case .end, .eof:
                throw .notWellFormed("no root element")
            }
        }
    }

    /// Reads to the end of the document so that trailing garbage is still reported.
    private mutating func finish() throws(XMLRPCFault) {
        while true {
            switch try next() {
            case .eof: return
            case .text: continue
            case .start, .end: throw .notWellFormed("content after the root element")
            }
        }
    }

    mutating func parseCall() throws(XMLRPCFault) -> XMLRPCCall {
        try expectRoot(.methodCall, "methodCall")
        var methodName: String?
        var params: [XMLRPCValue]?
        loop: while true {
            switch try next() {
            case .text(let text):
                guard isBlank(text) else { throw .invalidRequest("text in <methodCall>") }
            case .start(.methodName) where methodName == nil && params == nil:
                methodName = try readString(in: "methodName")
            case .start(.params) where methodName != nil && params == nil:
                params = try parseParams()
            case .start:
                throw unexpected(in: "methodCall")
            case .end:
                break loop
            case .eof:
                throw .notWellFormed("unexpected end of document")
            }
        }
        guard var name = methodName else { throw .invalidRequest("missing <methodName>") }
        trimBlanks(&name)
        guard !name.isEmpty else { throw .invalidRequest("empty <methodName>") }
        guard isValidMethodName(name) else { throw .invalidRequest("invalid method name") }
        try finish()
        return XMLRPCCall(methodName: name, params: params ?? [])
    }

    mutating func parseResponse() throws(XMLRPCFault) -> Result<XMLRPCValue, XMLRPCFault> {
        try expectRoot(.methodResponse, "methodResponse")
        var result: Result<XMLRPCValue, XMLRPCFault>?
        loop: while true {
            switch try next() {
            case .text(let text):
                guard isBlank(text) else { throw .invalidRequest("text in <methodResponse>") }
            case .start(.params) where result == nil:
                let params = try parseParams()
                guard params.count == 1 else { throw .invalidRequest("a response needs exactly one <param>") }
                result = .success(params[0])
            case .start(.fault) where result == nil:
                result = .failure(try parseFault())
            case .start:
                throw unexpected(in: "methodResponse")
            case .end:
                break loop
            case .eof:
                throw .notWellFormed("unexpected end of document")
            }
        }
        guard let result else { throw .invalidRequest("empty <methodResponse>") }
        try finish()
        return result
    }

    private mutating func parseFault() throws(XMLRPCFault) -> XMLRPCFault {
        var value: XMLRPCValue?
        loop: while true {
            switch try next() {
            case .text(let text):
                guard isBlank(text) else { throw .invalidRequest("text in <fault>") }
            case .start(.value) where value == nil:
                value = try parseValue(depth: 0)
            case .start:
                throw unexpected(in: "fault")
            case .end:
                break loop
            case .eof:
                throw .notWellFormed("unexpected end of document")
            }
        }
        guard case .structure = value, let codeValue = value?["faultCode"] else {
            throw .invalidRequest("<fault> needs a struct with faultCode and faultString")
        }
        let code: Int
        switch codeValue {
        case .int(let number): code = Int(widening: number)
        case .i8(let number): code = Int(truncatingIfNeeded: number)
        case .string(let text):
            guard let number = Int(text) else { throw .invalidRequest("faultCode must be an int") }
            code = number
        default: throw .invalidRequest("faultCode must be an int")
        }
        let message: String
        switch value?["faultString"] {
        case .string(let text)?: message = text
        case nil, .nil?: message = ""
        default: throw .invalidRequest("faultString must be a string")
        }
        return XMLRPCFault(code: code, message: message)
    }

    private mutating func parseParams() throws(XMLRPCFault) -> [XMLRPCValue] {
        var params: [XMLRPCValue] = []
        while true {
            switch try next() {
            case .text(let text):
                guard isBlank(text) else { throw .invalidRequest("text in <params>") }
            case .start(.param):
                params.append(try parseParam())
            case .start:
                throw unexpected(in: "params")
            case .end:
                return params
            case .eof:
                throw .notWellFormed("unexpected end of document")
            }
        }
    }

    private mutating func parseParam() throws(XMLRPCFault) -> XMLRPCValue {
        var value: XMLRPCValue?
        while true {
            switch try next() {
            case .text(let text):
                guard isBlank(text) else { throw .invalidRequest("text in <param>") }
            case .start(.value) where value == nil:
                value = try parseValue(depth: 0)
            case .start:
                throw unexpected(in: "param")
            case .end:
                guard let value else { throw .invalidRequest("<param> without <value>") }
                return value
            case .eof:
                throw .notWellFormed("unexpected end of document")
            }
        }
    }

    // MARK: Values

    /// Parses the content of a `<value>` whose start was just read. `depth` is the number of arrays and
    /// structs around it.
    private mutating func parseValue(depth: Int) throws(XMLRPCFault) -> XMLRPCValue {
        var text: String?
        var textBytes = 0
        var textIsBlank = true
        var result: XMLRPCValue?
        while true {
            switch try next() {
            case .text(let chunk):
                if result != nil {
                    guard isBlank(chunk) else { throw .invalidRequest("text mixed with elements in <value>") }
                    continue
                }
                textBytes += chunk.count
                guard textBytes <= limits.maxStringBytes else { throw tooLong() }
                if textIsBlank, !isBlank(chunk) { textIsBlank = false }
                if text == nil {
                    text = String(decoding: chunk, as: UTF8.self)
                } else {
                    text?.append(String(decoding: chunk, as: UTF8.self))
                }
            case .start(let kind):
                guard result == nil else { throw .invalidRequest("<value> with more than one child element") }
                guard textIsBlank else { throw .invalidRequest("text mixed with elements in <value>") }
                result = try parseTyped(kind, depth: depth)
                text = nil
            case .end:
                return result ?? .string(text ?? "")
            case .eof:
                throw .notWellFormed("unexpected end of document")
            }
        }
    }

    private func tooLong() -> XMLRPCFault {
        .invalidRequest("text longer than \(limits.maxStringBytes) bytes")
    }

    private mutating func parseTyped(_ kind: XMLRPCElement, depth: Int) throws(XMLRPCFault) -> XMLRPCValue {
        switch kind {
        case .string:
            return .string(try readString(in: "string"))
        case .int, .i4:
            try readScalar()
            guard let number = scratch.withUnsafeBufferPointer({ parseInteger($0, limit: Int64(widening: Int32.max)) }),
                  let value = Int32(exactly: number)
            else { throw .invalidRequest("invalid int value") }
            return .int(value)
        case .i8:
            try readScalar()
            guard let number = scratch.withUnsafeBufferPointer({ parseInteger($0, limit: .max) })
            else { throw .invalidRequest("invalid i8 value") }
            return .i8(number)
        case .boolean:
            try readScalar()
            guard scratch.count == 1, scratch[0] == 0x30 || scratch[0] == 0x31 else {
                throw .invalidRequest("invalid boolean value")
            }
            return .bool(scratch[0] == 0x31)
        case .double:
            try readScalar()
            guard let number = scratch.withUnsafeBufferPointer({ parseDouble($0) }) else {
                throw .invalidRequest("invalid double value")
            }
            return .double(number)
        case .dateTime:
            try readScalar()
            guard let date = scratch.withUnsafeBufferPointer({ XMLRPCDateTime(bytes: $0) }) else {
                throw .invalidRequest("invalid dateTime.iso8601 value")
            }
            return .dateTime(date)
        case .base64:
            try readScalar()
            guard let data = scratch.withUnsafeBufferPointer({ decodeBase64($0) }) else {
                throw .invalidRequest("invalid base64 value")
            }
            return .base64(data)
        case .nilValue:
            try readScalar()
            guard scratch.withUnsafeBufferPointer({ isBlank($0) }) else { throw .invalidRequest("text in <nil/>") }
            return .nil
        case .array:
            guard depth < limits.maxDepth else { throw .invalidRequest("nesting too deep") }
            return .array(try parseArray(depth: depth + 1))
        case .structure:
            guard depth < limits.maxDepth else { throw .invalidRequest("nesting too deep") }
            return .structure(try parseStruct(depth: depth + 1))
        default:
            throw .invalidRequest("unknown type <\(currentName())>")
        }
    }

    /// Reads the text content of a leaf element whose start was just read.
    private mutating func readString(in element: StaticString) throws(XMLRPCFault) -> String {
        var text: String?
        var count = 0
        while true {
            switch try next() {
            case .text(let chunk):
                count += chunk.count
                guard count <= limits.maxStringBytes else { throw tooLong() }
                if text == nil {
                    text = String(decoding: chunk, as: UTF8.self)
                } else {
                    text?.append(String(decoding: chunk, as: UTF8.self))
                }
            case .start:
                throw .invalidRequest("element <\(currentName())> inside <\(element)>")
            case .end:
                return text ?? ""
            case .eof:
                throw .notWellFormed("unexpected end of document")
            }
        }
    }

    /// Reads the text content of a scalar element into `scratch`.
    private mutating func readScalar() throws(XMLRPCFault) {
        scratch.removeAll(keepingCapacity: true)
        while true {
            switch try next() {
            case .text(let chunk):
                guard scratch.count + chunk.count <= limits.maxStringBytes else { throw tooLong() }
                scratch.append(contentsOf: chunk)
            case .start:
                throw .invalidRequest("element <\(currentName())> inside a scalar value")
            case .end:
                return
            case .eof:
                throw .notWellFormed("unexpected end of document")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(XMLRPCFault) -> [XMLRPCValue] {
        var values: [XMLRPCValue] = []
        var sawData = false
        while true {
            switch try next() {
            case .text(let text):
                guard isBlank(text) else { throw .invalidRequest("text in <array>") }
            case .start(.data):
                guard !sawData else { throw .invalidRequest("<array> with more than one <data>") }
                sawData = true
                try parseData(into: &values, depth: depth)
            case .start:
                throw unexpected(in: "array")
            case .end:
                return values
            case .eof:
                throw .notWellFormed("unexpected end of document")
            }
        }
    }

    private mutating func parseData(into values: inout [XMLRPCValue], depth: Int) throws(XMLRPCFault) {
        while true {
            switch try next() {
            case .text(let text):
                guard isBlank(text) else { throw .invalidRequest("text in <data>") }
            case .start(.value):
                values.append(try parseValue(depth: depth))
            case .start:
                throw unexpected(in: "data")
            case .end:
                return
            case .eof:
                throw .notWellFormed("unexpected end of document")
            }
        }
    }

    private mutating func parseStruct(depth: Int) throws(XMLRPCFault) -> [XMLRPCMember] {
        var members: [XMLRPCMember] = []
        while true {
            switch try next() {
            case .text(let text):
                guard isBlank(text) else { throw .invalidRequest("text in <struct>") }
            case .start(.member):
                members.append(try parseMember(depth: depth))
            case .start:
                throw unexpected(in: "struct")
            case .end:
                return members
            case .eof:
                throw .notWellFormed("unexpected end of document")
            }
        }
    }

    private mutating func parseMember(depth: Int) throws(XMLRPCFault) -> XMLRPCMember {
        var name: String?
        var value: XMLRPCValue?
        while true {
            switch try next() {
            case .text(let text):
                guard isBlank(text) else { throw .invalidRequest("text in <member>") }
            case .start(.name) where name == nil:
                name = try readString(in: "name")
            case .start(.value) where value == nil:
                value = try parseValue(depth: depth)
            case .start:
                throw unexpected(in: "member")
            case .end:
                guard let name else { throw .invalidRequest("<member> without <name>") }
                guard let value else { throw .invalidRequest("<member> without <value>") }
                return XMLRPCMember(name, value)
            case .eof:
                throw .notWellFormed("unexpected end of document")
            }
        }
    }
}
