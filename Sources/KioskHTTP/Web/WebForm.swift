import Foundation
import Hummingbird

/// An `application/x-www-form-urlencoded` body of a web page's form, read whole up to a limit.
package struct WebForm: Sendable {
    private let fields: [String: String]

    package static let maxBytes = 64 << 10

    package init(_ request: Request) async throws {
        let body = try await request.body.collect(upTo: Self.maxBytes)
        // `+` is a space in forms; URLComponents reads only percent-escapes.
        let text = String(buffer: body).replacingOccurrences(of: "+", with: " ")
        var fields: [String: String] = [:]
        for item in URLComponents(string: "?" + text)?.queryItems ?? [] where fields[item.name] == nil {
            fields[item.name] = item.value ?? ""
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
