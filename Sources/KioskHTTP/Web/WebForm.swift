import Foundation
import Hummingbird

/// An `application/x-www-form-urlencoded` body of a web page's form, read whole up to a limit.
package struct WebForm: Sendable {
    private let fields: [String: String]

    package static let maxBytes = 64 << 10

    package init(_ request: Request) async throws {
        let body = try await request.body.collect(upTo: Self.maxBytes)
        var fields: [String: String] = [:]
        for pair in String(buffer: body).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            // `+` is a space in a form, then come percent-escapes; a malformed escape leaves the text as sent.
            let decode = { (text: Substring) -> String in
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            let name = decode(parts[0])
            if fields[name] == nil { fields[name] = parts.count > 1 ? decode(parts[1]) : "" }
        }
        self.fields = fields
    }

    private init() { fields = [:] }
    /// A form with no field.
    package static let empty = WebForm()

    package subscript(_ name: String) -> String? { fields[name] }

    /// The field, trimmed; "" when absent.
    package func text(_ name: String) -> String { (fields[name] ?? "").trimmingCharacters(in: .whitespacesAndNewlines) }
}
