import Logging
import Foundation
import Hummingbird
import NIOCore
import XMLRPC
import KioskConfig

/// `POST` on each XML-RPC path (`server.rpc_paths`: `/RPC2` and the 2012 apps' Joomla paths), for API
/// clients (`BasicAuthenticationMiddleware.apiClients`): the body limit, then the XML-RPC dispatcher.
/// Any Content-Type is taken.
package struct RPCController {
    /// As the router matches them (`KioskConfiguration.rpcRoutes`).
    package let paths: [String]
    /// Every XML-RPC answer's `Content-Type`.
    package static let responseContentType = "text/xml; charset=utf-8"

    package func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        for path in paths { group.post(RouterPath(path), use: call) }
    }

    @Sendable package func call(_ request: Request, context: KioskRequestContext) async throws -> Response {
        let runtime = context.runtime
        let limit = runtime.configuration.limits.maxBodyBytes
        var request = request
        let body = try await request.collectBody(upTo: limit, orThrow: .tooLarge("request body over the limit of \(limit) bytes"))
        let encoding = Self.charset(of: request.headers)
        // Decoding reads the buffer in place and copies only what it keeps; then the call runs.
        let call = body.withUnsafeReadableBytes { runtime.dispatcher.decode($0, encoding: encoding) }
        let response = await runtime.dispatcher.respond(to: call, context: context)
        if let method = response.methodName {
            context.logger.debug("RPC", metadata: ["method": .string(method),
                                                  "fault": .string(response.fault.map { String($0.code) } ?? "")])
        }
        return Response(status: .ok,
                        headers: [.contentType: Self.responseContentType],
                        body: ResponseBody(byteBuffer: response.body))
    }

    /// The `charset` of a request's one `Content-Type` (none, or repeated ones: nil, and the XML
    /// declaration decides), as every XML-RPC call is read.
    package static func charset(of headers: HTTPFields) -> String? {
        headers.onlyValue(of: .contentType).flatMap(charset)
    }

    /// The `charset` parameter of a Content-Type header, if any.
    private static func charset(_ contentType: String) -> String? {
        guard contentType.utf8.contains(UInt8(ascii: ";")) else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" {
                return pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return nil
    }
}
