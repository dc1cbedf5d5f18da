import Foundation
import KioskModels

/// A JWS in compact serialization as the App Store signs it, split and decoded; nothing verified yet.
///
/// Parsing refuses, in this order: not three parts, a header that is not base64url JSON, an algorithm other
/// than ES256 (the header's `alg` never chooses how to verify), an `x5c` that is not three base64 DER
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
    }

    /// `what` names the signed data in messages ("transaction", "notification").
    init(_ jws: String, what: String) throws(PurchaseVerificationError) {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw PurchaseVerificationError(
                .malformed, "the \(what) is not a compact JWS: it has \(parts.count) dot-separated parts, not 3")
        }
        let headerPart = parts[0], payloadPart = parts[1], signaturePart = parts[2]

        guard let headerBytes = Base64URL.decode(headerPart) else {
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
        guard let payload = Base64URL.decode(payloadPart) else {
            throw PurchaseVerificationError(.malformed, "the \(what)'s JWS payload is not base64url")
        }
        guard let signature = Base64URL.decode(signaturePart) else {
            throw PurchaseVerificationError(.malformed, "the \(what)'s JWS signature is not base64url")
        }
        self.signingInput = Array(jws[headerPart.startIndex..<payloadPart.endIndex].utf8)
        self.payload = payload
        self.signature = signature
        self.certificates = certificates
    }
}
