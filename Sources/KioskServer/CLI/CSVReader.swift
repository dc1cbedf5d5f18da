import ArgumentParser
import Foundation

/// A small RFC 4180 reader: quoted fields, doubled quotes, CRLF or LF line ends.
struct CSVReader {
    struct Row {
        /// 1-based line number where the row starts.
        var line: Int
        var fields: [String]
    }

    struct Problem: Error, CustomStringConvertible {
        var line: Int
        var message: String
        var description: String { "line \(line): \(message)" }
    }

    /// The rows of a UTF-8 file, the header first; an unreadable file is a usage error naming it.
    static func rows(ofFile path: String) throws -> [Row] {
        guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("\(path): cannot be read") }
        guard let text = String(data: data, encoding: .utf8) else { throw ValidationError("\(path): not UTF-8 text") }
        do {
            return try rows(text)
        } catch {
            throw ValidationError("\(path): \(error); nothing was imported")
        }
    }

    /// The header's column names, trimmed and lowercased.
    static func columns(_ header: Row?) throws -> [String] {
        guard let header else { throw Problem(line: 1, message: "the file is empty") }
        return header.fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    }

    static func rows(_ text: String) throws -> [Row] {
        var rows: [Row] = []
        var fields: [String] = []
        var field = ""
        var inQuotes = false
        var line = 1
        var rowStart = 1
        var iterator = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = nil
        func next() -> Unicode.Scalar? {
            if let scalar = pending { pending = nil; return scalar }
            return iterator.next()
        }
        func endRow() {
            fields.append(field)
            field = ""
            if !(fields.count == 1 && fields[0].isEmpty) { rows.append(Row(line: rowStart, fields: fields)) }
            fields = []
        }
        while let scalar = next() {
            if inQuotes {
                if scalar == "\"" {
                    if let following = next() {
                        if following == "\"" { field.unicodeScalars.append("\"") } else { inQuotes = false; pending = following }
                    } else { inQuotes = false }
                } else {
                    if scalar == "\n" { line += 1 }
                    field.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case ",": fields.append(field); field = ""
            case "\"":
                guard field.isEmpty else { throw Problem(line: line, message: "a quote inside an unquoted field") }
                inQuotes = true
            case "\r": continue
            case "\n": endRow(); line += 1; rowStart = line
            default: field.unicodeScalars.append(scalar)
            }
        }
        if inQuotes { throw Problem(line: rowStart, message: "a quoted field is not closed") }
        if !field.isEmpty || !fields.isEmpty { endRow() }
        return rows
    }
}
