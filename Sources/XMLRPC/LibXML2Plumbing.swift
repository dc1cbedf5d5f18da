// What the decoder needs around libxml2: its one-time set-up, error capture, element names and
// the checks made on raw bytes before parsing.

import CLibXML2

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

let libxml2Initialized: Void = { xmlInitParser() }()

/// Collects the errors libxml2 reports while one document is read.
final class ParseErrors {
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

let apacheExtensionsNamespace: StaticString = "http://ws.apache.org/xmlrpc/namespaces/extensions"

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
func equals(_ pointer: UnsafePointer<UInt8>, _ count: Int, _ name: StaticString) -> Bool {
    count == name.utf8CodeUnitCount && memcmp(pointer, name.utf8Start, count) == 0
}

func classify(_ name: UnsafePointer<UInt8>) -> XMLRPCElement {
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
func isBlank(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    for byte in bytes where !(byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D) {
        return false
    }
    return true
}

func hasPrefix(_ bytes: UnsafeRawBufferPointer, at index: Int, _ text: StaticString) -> Bool {
    let count = text.utf8CodeUnitCount
    guard let base = bytes.baseAddress, bytes.count - index >= count else { return false }
    return memcmp(base + index, text.utf8Start, count) == 0
}

/// Looks through the prolog (XML declaration, comments, processing instructions, white space) of an
/// ASCII-compatible document for a DOCTYPE, which must come before the root element.
func prologHasDoctype(_ bytes: UnsafeRawBufferPointer) -> Bool {
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

func isUTF8Name(_ name: String) -> Bool {
    switch name.lowercased() {
    case "utf-8", "utf8": return true
    default: return false
    }
}

/// True when a start tag of the document holds more than `limit` attributes (counted by their `=` outside
/// quoted values). libxml2 before 2.12 checks a tag's attributes for duplicates pairwise, so one tag of
/// 60 000 attributes (half a megabyte) takes seconds of processor; XML-RPC uses no attributes, so this
/// linear scan refuses such a body before libxml2 sees it. Comments, CDATA sections and processing
/// instructions are skipped; NUL bytes are ignored, so UTF-16 and UCS-4 bodies are scanned by their ASCII.
func startTagHasMoreAttributes(than limit: Int, in bytes: UnsafeRawBufferPointer) -> Bool {
    enum State { case text, tag, quoted(UInt8), skipping(StaticString) }
    var state = State.text
    var count = 0
    var recent: (UInt8, UInt8, UInt8) = (0, 0, 0)   // the last three non-NUL bytes, newest last
    var afterOpen = false                           // the previous non-NUL byte opened a tag: `<`
    var bangSeen = 0                                // non-NUL bytes seen since `<!`
    for byte in bytes where byte != 0 {
        recent = (recent.1, recent.2, byte)
        switch state {
        case .text:
            if afterOpen {
                afterOpen = false
                switch byte {
                case UInt8(ascii: "?"): state = .skipping("?>")
                case UInt8(ascii: "!"): bangSeen = 0; state = .skipping("")   // decided by the next bytes
                case UInt8(ascii: "/"): state = .skipping(">")
                default: count = 0; state = .tag
                }
            } else if byte == UInt8(ascii: "<") {
                afterOpen = true
            }
        case .tag:
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "'"): state = .quoted(byte)
            case UInt8(ascii: "="):
                count += 1
                if count > limit { return true }
            case UInt8(ascii: ">"): state = .text
            default: break
            }
        case .quoted(let quote):
            if byte == quote { state = .tag }
        case .skipping(let terminator):
            if terminator.utf8CodeUnitCount == 0 {
                // After `<!`: `--` opens a comment, `[` a CDATA section; anything else ends at `>`.
                bangSeen += 1
                if byte == UInt8(ascii: "[") { state = .skipping("]]>") }
                else if byte == UInt8(ascii: "-") { if bangSeen == 2 { state = .skipping("-->") } }
                else { state = .skipping(">") }
                continue
            }
            if endsWith(recent, terminator) { state = .text }
        }
    }
    return false
}

/// Whether the last bytes seen end with `terminator` (one to three bytes).
private func endsWith(_ recent: (UInt8, UInt8, UInt8), _ terminator: StaticString) -> Bool {
    let end = terminator.utf8Start
    switch terminator.utf8CodeUnitCount {
    case 1: return recent.2 == end[0]
    case 2: return recent.1 == end[0] && recent.2 == end[1]
    default: return recent.0 == end[0] && recent.1 == end[1] && recent.2 == end[2]
    }
}
