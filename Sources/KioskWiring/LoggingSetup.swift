import Foundation
import Logging
import KioskConfig
import KioskHTTP

/// Sets up swift-log once per process: human-readable lines, or JSON lines for log collectors.
enum LoggingSetup {
    static func bootstrap(json: Bool, level: Logger.Level) {
        LoggingSystem.bootstrap { label in
            var handler = LineLogHandler(label: label, format: json ? .json : .text)
            handler.logLevel = level
            return handler
        }
    }
}

/// One line per event on standard error. The metadata is formatted only when a line is written:
/// Hummingbird sets a request id on every request's logger, and swift-log's `StreamLogHandler` formats
/// all the metadata again on every set.
struct LineLogHandler: LogHandler {
    enum Format {
        /// As `StreamLogHandler` writes it: time, level, label, metadata, source, message. Metadata values
        /// are written as logfmt does (`Logfmt.value`), and the message's line breaks and other control
        /// characters escaped, so no value a client sent can forge a field or a line.
        case text
        /// One JSON object: time, level, label, message and the metadata.
        case json
    }

    let label: String
    let format: Format
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 })
        switch format {
        case .text:
            let pretty = merged.sorted { $0.key < $1.key }.map { " \(Logfmt.key($0.key))=\(Logfmt.value($0.value.description))" }.joined()
            let line = "\(Self.timestamp()) \(event.level) \(label):\(pretty) [\(event.source)] \(Logfmt.escaped(event.message.description))"
            FileHandle.standardError.write(Data((line + "\n").utf8))
        case .json:
            var object: [String: String] = [
                "time": Date().formatted(.iso8601),
                "level": event.level.rawValue,
                "label": label,
                "message": event.message.description,
            ]
            for (key, value) in merged { object[key] = value.description }
            guard var data = try? JSONResponse.encoder.encode(object) else { return }
            data.append(0x0A)
            FileHandle.standardError.write(data)
        }
    }

    /// Local time as `2026-11-24T13:05:00+0100`.
    private static func timestamp() -> String {
        var now = time(nil)
        var local = tm()
        guard localtime_r(&now, &local) != nil else { return "<unknown>" }
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// logfmt's quoting: a value with a space, `=`, `"`, `\` or a character that is not printable is written
/// in double quotes with those escaped; line and paragraph separators and every other control character
/// become `\u{…}`, so one log line stays one line and one value one field.
enum Logfmt {
    static func value(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { $0 != " " && $0 != "=" && $0 != "\"" && $0 != "\\" && !needsEscape($0) }
        return plain ? text : "\"" + escaped(text, quotes: true) + "\""
    }

    /// A key: the characters logfmt allows in one, the others as `_`.
    static func key(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == " " || $0 == "=" || $0 == "\"" || needsEscape($0) ? "_" : $0 }))
    }

    /// `text` with control characters (and, with `quotes`, `"` and `\`) escaped.
    static func escaped(_ text: String, quotes: Bool = false) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result.append(contentsOf: #"\n"#.unicodeScalars)
            case "\r": result.append(contentsOf: #"\r"#.unicodeScalars)
            case "\t": result.append(contentsOf: #"\t"#.unicodeScalars)
            case "\"" where quotes: result.append(contentsOf: #"\""#.unicodeScalars)
            case "\\" where quotes: result.append(contentsOf: #"\\"#.unicodeScalars)
            case _ where needsEscape(scalar):
                result.append(contentsOf: "\\u{\(String(scalar.value, radix: 16))}".unicodeScalars)
            default: result.append(scalar)
            }
        }
        return String(result)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator, .format, .surrogate, .unassigned, .privateUse: true
        default: false
        }
    }
}
