import Foundation

/// Device facts are stored as a JSON object of strings.
package enum DeviceInfoCoding {
    package static func encode(_ info: [String: String]) -> String {
        guard !info.isEmpty, let data = try? JSONEncoder.sorted.encode(info) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    package static func decode(_ text: String) -> [String: String] {
        (try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))) ?? [:]
    }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
