import Foundation
import Logging
import KioskConfig
import KioskHTTP

/// Sets up swift-log once per process: human-readable lines, or JSON lines for log collectors.
enum LoggingSetup {
    static func bootstrap(json: Bool, level: Logger.Level) {
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = json ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}

/// One JSON object per line on standard error: time, level, label, message and metadata.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var object: [String: String] = [
            "time": Date().formatted(.iso8601),
            "level": event.level.rawValue,
            "label": label,
            "message": event.message.description,
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            object[key] = value.description
        }
        guard var data = try? JSONResponse.encoder.encode(object) else { return }
        data.append(0x0A)
        FileHandle.standardError.write(data)
    }
}
