import Foundation
import KioskModels

/// A JWS in compact serialization as the App Store signs it, split and decoded; nothing verified yet.
///
/// Parsing refuses, in this order: not three parts, a header that is not base64url JSON, an algorithm other
/// than ES256 (the header's `alg` never chooses how to verify), extensions marked critical (`crit`: the App
/// Store uses none, and RFC 7515 has a JWS with one not understood refused), an `x5c` that is not three base64 DER
/// certificates, a payload that is not base64url, a signature that is not base64url.
struct AppleCompactJWS {
    /// The ASCII bytes the signature covers: `header.payload` as received.
    let signingInput: [UInt8]
    let payload: [UInt8]
    let signature: [UInt8]
    /// The DER of `x5c`: leaf, intermediate, root.
    let certificates: [[UInt8]]

    /// The only algorithm the App Store signs with.
    static let algorithm = "ES256"
    static let chainLength = 3

    private struct Header: Decodable {
        let alg: String?
        let x5c: [String]?
        let crit: [String]?
    }

    /// `what` names the signed data in messages ("transaction", "notification").
    init(_ jws: String, what: String) throws(PurchaseVerificationError) {
        var text = jws
        let parsed = text.withUTF8 { bytes in Result { () throws(PurchaseVerificationError) in try Self(utf8: bytes, what: what) } }
        self = try parsed.get()
    }

    /// Parses the JWS's ASCII in place: the parts are found by their dots and decoded without copying.
    private init(utf8 jws: UnsafeBufferPointer<UInt8>, what: String) throws(PurchaseVerificationError) {
        let dot = UInt8(ascii: ".")
        var parts = 1, first: Int?, second: Int?
        for index in jws.indices where jws[index] == dot {
            parts += 1
            if first == nil { first = index } else if second == nil { second = index }
        }
        guard parts == 3, let first, let second else {
            throw PurchaseVerificationError(
                .malformed, "the \(what) is not a compact JWS: it has \(parts) dot-separated parts, not 3")
        }
        let headerPart = UnsafeBufferPointer(rebasing: jws[..<first])
        let payloadPart = UnsafeBufferPointer(rebasing: jws[(first + 1)..<second])
        let signaturePart = UnsafeBufferPointer(rebasing: jws[(second + 1)...])

        guard let headerBytes = Base64URL.decode(bytes: headerPart) else {
            throw PurchaseVerificationError(.malformed, "the \(what)'s JWS header is not base64url")
        }
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: Data(headerBytes))
        } catch {
            throw PurchaseVerificationError(.malformed, "the \(what)'s JWS header is not a JSON object with alg and x5c")
        }
        guard let alg = header.alg else {
            throw PurchaseVerificationError(.algorithm, "the \(what)'s JWS header names no algorithm; the App Store signs with ES256")
        }
        guard alg == Self.algorithm else {
            throw PurchaseVerificationError(
                .algorithm, "the \(what) is signed with \(alg.prefix(32)); the App Store signs with ES256 only")
        }
        if let crit = header.crit {
            throw PurchaseVerificationError(
                .malformed, "the \(what)'s JWS header marks \(crit.prefix(4).map { $0.prefix(32) }) as critical (crit); "
                    + "the App Store uses no such extension")
        }
        guard let x5c = header.x5c else {
            throw PurchaseVerificationError(.certificateChain, "the \(what)'s JWS header has no certificate chain (x5c)")
        }
        guard x5c.count == Self.chainLength else {
            throw PurchaseVerificationError(
                .certificateChain,
                "the \(what)'s certificate chain has \(x5c.count) certificates; the App Store sends 3 (leaf, intermediate, root)")
        }
        var certificates: [[UInt8]] = []
        for (index, text) in x5c.enumerated() {
            guard let der = Data(base64Encoded: text), !der.isEmpty else {
                throw PurchaseVerificationError(
                    .malformed, "certificate \(index + 1) of the \(what)'s chain (x5c) is not base64")
            }
            certificates.append([UInt8](der))
        }
        guard let payload = Base64URL.decode(bytes: payloadPart) else {
            throw PurchaseVerificationError(.malformed, "the \(what)'s JWS payload is not base64url")
        }
        guard let signature = Base64URL.decode(bytes: signaturePart) else {
            throw PurchaseVerificationError(.malformed, "the \(what)'s JWS signature is not base64url")
        }
        self.signingInput = Array(UnsafeBufferPointer(rebasing: jws[..<second]))
        self.payload = payload
        self.signature = signature
        self.certificates = certificates
    }
}
