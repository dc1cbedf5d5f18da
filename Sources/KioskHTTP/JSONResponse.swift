import NIOFoundationEssentialsCompat
import Foundation
import Hummingbird
import KioskFiles

/// JSON answers: one encoder (keys sorted, slashes as they are), one line per document.
package enum JSONResponse {
    package static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// The document and a line end.
    package static func bytes(_ value: some Encodable) throws -> ByteBuffer {
        var buffer = ByteBuffer(data: try encoder.encode(value))
        buffer.writeString("\n")
        return buffer
    }

    package static func response(_ status: HTTPResponse.Status, _ value: some Encodable,
                                 headers: HTTPFields = [:]) throws -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: try bytes(value)))
    }
}
