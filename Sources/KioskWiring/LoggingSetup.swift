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
        /// As `StreamLogHandler` writes it: time, level, label, metadata, source, message; line breaks
        /// inside written as `\n`.
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
            let pretty = merged.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
            let line = "\(Self.timestamp()) \(event.level) \(label):\(pretty) [\(event.source)] \(event.message)"
            FileHandle.standardError.write(Data((line.replacingOccurrences(of: "\n", with: "\\n") + "\n").utf8))
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
