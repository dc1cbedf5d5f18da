import Hummingbird

extension Request {
    /// The whole body, refused with `tooLarge` as soon as its declared length, or what arrives, is over `limit`.
    mutating func collectBody(upTo limit: Int, orThrow tooLarge: KioskHTTPError) async throws -> ByteBuffer {
        if let declaredLength = headers[.contentLength].flatMap(Int.init), declaredLength > limit { throw tooLarge }
        do {
            return try await collectBody(upTo: limit)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw tooLarge
        }
    }
}
