// XML-RPC decoding on libxml2's streaming reader (xmlTextReader): no DOM, no DTD, no entities.

import CLibXML2

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
}

// MARK: - libxml2 plumbing

private let libxml2Initialized: Void = { xmlInitParser() }()

/// Collects the errors libxml2 reports while one document is read.
private final class ParseErrors {
    var fatal: String?
    var other: String?

    func record(_ error: UnsafePointer<xmlError>) {
        let level = error.pointee.level
        guard level == XML_ERR_FATAL || level == XML_ERR_ERROR else { return }
        var text = error.pointee.message.map { String(cString: $0) } ?? "error \(error.pointee.code)"
        while let last = text.last, last.isWhitespace { text.removeLast() }
        text = String(text.map { $0.isNewline ? " " : $0 })
        if text.utf8.count > 200 { text = String(text.prefix(200)) }
        if error.pointee.line > 0 { text += " (line \(error.pointee.line))" }
        if level == XML_ERR_FATAL {
            if fatal == nil { fatal = text }
        } else if other == nil {
            other = text
        }
    }
}

private let apacheExtensionsNamespace: StaticString = "http://ws.apache.org/xmlrpc/namespaces/extensions"

/// The element names XML-RPC knows.
enum XMLRPCElement: UInt8 {
    case methodCall, methodResponse, methodName, params, param, fault
    case value, int, i4, i8, boolean, string, double, dateTime, base64, array, data, structure, member, name
    case nilValue
    case other
}

/// A reader event: an element start (an empty element is followed by a synthesised end), an element end,
/// text (valid only until the next event), or the end of the document.
enum XMLNode {
    case start(XMLRPCElement)
    case end
    case text(UnsafeBufferPointer<UInt8>)
    case eof
}

@inline(__always)
private func equals(_ pointer: UnsafePointer<UInt8>, _ count: Int, _ name: StaticString) -> Bool {
    count == name.utf8CodeUnitCount && memcmp(pointer, name.utf8Start, count) == 0
}

private func classify(_ name: UnsafePointer<UInt8>) -> XMLRPCElement {
    let count = strlen(UnsafeRawPointer(name).assumingMemoryBound(to: CChar.self))
    switch count {
    case 2:
        if equals(name, count, "i4") { return .i4 }
        if equals(name, count, "i8") { return .i8 }
    case 3:
        if equals(name, count, "int") { return .int }
        if equals(name, count, "nil") { return .nilValue }
    case 4:
        if equals(name, count, "data") { return .data }
        if equals(name, count, "name") { return .name }
    case 5:
        if equals(name, count, "value") { return .value }
        if equals(name, count, "param") { return .param }
        if equals(name, count, "array") { return .array }
        if equals(name, count, "fault") { return .fault }
        if equals(name, count, "ex:i8") { return .i8 }  // unbound literal `ex:` prefix
    case 6:
        if equals(name, count, "string") { return .string }
        if equals(name, count, "struct") { return .structure }
        if equals(name, count, "member") { return .member }
        if equals(name, count, "params") { return .params }
        if equals(name, count, "double") { return .double }
        if equals(name, count, "base64") { return .base64 }
        if equals(name, count, "ex:nil") { return .nilValue }  // unbound literal `ex:` prefix
    case 7:
        if equals(name, count, "boolean") { return .boolean }
    case 10:
        if equals(name, count, "methodName") { return .methodName }
        if equals(name, count, "methodCall") { return .methodCall }
    case 14:
        if equals(name, count, "methodResponse") { return .methodResponse }
    case 16:
        if equals(name, count, "dateTime.iso8601") { return .dateTime }
    default:
        break
    }
    return .other
}

@inline(__always)
private func isBlank(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    for byte in bytes where !(byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D) {
        return false
    }
    return true
}

private func hasPrefix(_ bytes: UnsafeRawBufferPointer, at index: Int, _ text: StaticString) -> Bool {
    let count = text.utf8CodeUnitCount
    guard bytes.count - index >= count else { return false }
    return memcmp(bytes.baseAddress! + index, text.utf8Start, count) == 0
}

/// Looks through the prolog (XML declaration, comments, processing instructions, white space) of an
/// ASCII-compatible document for a DOCTYPE, which must come before the root element.
private func prologHasDoctype(_ bytes: UnsafeRawBufferPointer) -> Bool {
    var index = 0
    if hasPrefix(bytes, at: 0, "\u{FEFF}") { index = 3 }
    func find(_ terminator: StaticString, from start: Int) -> Int? {
        var position = start
        while position < bytes.count {
            if hasPrefix(bytes, at: position, terminator) { return position + terminator.utf8CodeUnitCount }
            position += 1
        }
        return nil
    }
    while index < bytes.count {
        switch bytes[index] {
        case 0x20, 0x09, 0x0A, 0x0D:
            index += 1
        case UInt8(ascii: "<"):
            if hasPrefix(bytes, at: index, "<?") {
                guard let next = find("?>", from: index + 2) else { return false }
                index = next
            } else if hasPrefix(bytes, at: index, "<!--") {
                guard let next = find("-->", from: index + 4) else { return false }
                index = next
            } else {
                return hasPrefix(bytes, at: index, "<!DOCTYPE") || hasPrefix(bytes, at: index, "<!doctype")
            }
        default:
            return false
        }
    }
    return false
}

private func isUTF8Name(_ name: String) -> Bool {
    switch name.lowercased() {
    case "utf-8", "utf8": return true
    default: return false
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
        guard bytes.count <= Int(Int32.max) else { throw .notWellFormed("body too large") }

        var options = Int32(XML_PARSE_NONET.rawValue)
        var forcedEncoding: String?
        var wideEncoding = false
        if var name = encoding {
            name = String(name.filter { $0 != "\"" && $0 != "'" && !$0.isWhitespace })
            if !name.isEmpty {
                options |= Int32(XML_PARSE_IGNORE_ENC.rawValue)
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

        let errors = ParseErrors()
        xmlSetStructuredErrorFunc(Unmanaged.passUnretained(errors).toOpaque()) { context, error in
            guard let context, let error else { return }
            Unmanaged<ParseErrors>.fromOpaque(context).takeUnretainedValue().record(error)
        }
        let chars = base.assumingMemoryBound(to: CChar.self)
        let created: xmlTextReaderPtr?
        if let forcedEncoding {
            created = forcedEncoding.withCString { xmlReaderForMemory(chars, Int32(bytes.count), nil, $0, options) }
        } else {
            created = xmlReaderForMemory(chars, Int32(bytes.count), nil, nil, options)
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
        case .int(let number): code = Int(number)
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
                    text!.append(String(decoding: chunk, as: UTF8.self))
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
            guard let number = scratch.withUnsafeBufferPointer({ parseInteger($0, limit: UInt64(Int32.max)) })
            else { throw .invalidRequest("invalid int value") }
            return .int(Int32(number))
        case .i8:
            try readScalar()
            guard let number = scratch.withUnsafeBufferPointer({ parseInteger($0, limit: UInt64(Int64.max)) })
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
                    text!.append(String(decoding: chunk, as: UTF8.self))
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

// MARK: - Scalar parsing

private func trimBlanks(_ text: inout String) {
    let utf8 = text.utf8
    guard let first = utf8.first, let last = utf8.last else { return }
    func blank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
    guard blank(first) || blank(last) else { return }
    let start = utf8.firstIndex { !blank($0) } ?? utf8.endIndex
    let end = utf8.lastIndex { !blank($0) }.map { utf8.index(after: $0) } ?? start
    text = start < end ? String(text[start..<end]) : ""
}

/// An optionally signed run of ASCII digits, nothing else; nil when malformed or beyond ±`limit`
/// (the negative side allows `-limit - 1`).
func parseInteger(_ bytes: UnsafeBufferPointer<UInt8>, limit: UInt64) -> Int64? {
    var index = 0
    var negative = false
    if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
        negative = first == UInt8(ascii: "-")
        index = 1
    }
    guard index < bytes.count else { return nil }
    var magnitude: UInt64 = 0
    let bound = negative ? limit + 1 : limit
    while index < bytes.count {
        let digit = bytes[index] &- 0x30
        guard digit <= 9 else { return nil }
        let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
        let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit))
        guard !overflow1, !overflow2, sum <= bound else { return nil }
        magnitude = sum
        index += 1
    }
    if negative {
        return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
    }
    return Int64(magnitude)
}

/// `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?`, finite; nil otherwise.
func parseDouble(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
    var index = 0
    let count = bytes.count
    func isDigit(_ at: Int) -> Bool { at < count && bytes[at] &- 0x30 <= 9 }
    if index < count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
    var digits = 0
    while isDigit(index) { index += 1; digits += 1 }
    if index < count, bytes[index] == UInt8(ascii: ".") {
        index += 1
        while isDigit(index) { index += 1; digits += 1 }
    }
    guard digits > 0 else { return nil }
    if index < count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
        index += 1
        if index < count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard isDigit(index) else { return nil }
        while isDigit(index) { index += 1 }
    }
    guard index == count, count <= 1100 else { return nil }
    guard let value = Double(String(decoding: bytes, as: UTF8.self)), value.isFinite else { return nil }
    return value
}

private let base64DecodeTable: [UInt8] = {
    var table = [UInt8](repeating: 0xFF, count: 256)
    for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
        table[Int(byte)] = UInt8(index)
    }
    return table
}()

/// Standard alphabet; white space ignored; padding required and validated.
func decodeBase64(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
    var output: [UInt8] = []
    output.reserveCapacity(bytes.count / 4 * 3 + 3)
    var accumulator: UInt32 = 0
    var pending = 0
    var padding = 0
    return base64DecodeTable.withUnsafeBufferPointer { table -> [UInt8]? in
        for byte in bytes {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                continue
            case UInt8(ascii: "="):
                guard pending >= 2, pending + padding < 4 else { return nil }
                padding += 1
            default:
                let sextet = table[Int(byte)]
                guard sextet != 0xFF, padding == 0 else { return nil }
                accumulator = accumulator << 6 | UInt32(sextet)
                pending += 1
                if pending == 4 {
                    output.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                    output.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                    output.append(UInt8(truncatingIfNeeded: accumulator))
                    accumulator = 0
                    pending = 0
                }
            }
        }
        switch (pending, padding) {
        case (0, 0):
            break
        case (2, 2):
            output.append(UInt8(truncatingIfNeeded: accumulator >> 4))
        case (3, 1):
            output.append(UInt8(truncatingIfNeeded: accumulator >> 10))
            output.append(UInt8(truncatingIfNeeded: accumulator >> 2))
        default:
            return nil
        }
        return output
    }
}
