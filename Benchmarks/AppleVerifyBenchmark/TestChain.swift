import Crypto
import Foundation
import SwiftASN1
import X509

/// A chain shaped like the App Store's, made fresh for the benchmark (the tests' `AppleTestAuthority` is
/// another package's): a self-signed P-256 root, an intermediate with Apple's marker 1.2.840.113635.100.6.2.1,
/// a leaf with 1.2.840.113635.100.6.11.1, key identifiers throughout. The leaf signs compact JWS as the App
/// Store does: ES256, `x5c` of leaf, intermediate and root.
struct TestChain {
    let rootDER: [UInt8]
    let x5c: [String]
    let leafKey: P256.Signing.PrivateKey

    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]

    init(validFrom: Date, validUntil: Date) throws {
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let rootPublic = Certificate.PublicKey(rootKey.publicKey)
        let intermediatePublic = Certificate.PublicKey(intermediateKey.publicKey)
        let leafPublic = Certificate.PublicKey(leafKey.publicKey)
        let rootName = try DistinguishedName {
            CountryName("US")
            OrganizationName("Kiosk Benchmarks")
            CommonName("Benchmark Root CA - G3")
        }
        let intermediateName = try DistinguishedName {
            CountryName("US")
            OrganizationName("Kiosk Benchmarks")
            OrganizationalUnitName("G6")
            CommonName("Benchmark Worldwide Developer Relations Certification Authority")
        }
        let leafName = try DistinguishedName {
            CountryName("US")
            OrganizationName("Kiosk Benchmarks")
            CommonName("Benchmark Prod ECC Mac App Store and iTunes Store Receipt Signing")
        }
        let rootIdentifier = SubjectKeyIdentifier(hash: rootPublic)
        let intermediateIdentifier = SubjectKeyIdentifier(hash: intermediatePublic)

        let root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: rootPublic,
            notValidBefore: validFrom, notValidAfter: validUntil, issuer: rootName, subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                rootIdentifier
                AuthorityKeyIdentifier(keyIdentifier: rootIdentifier.keyIdentifier)
            },
            issuerPrivateKey: .init(rootKey))
        let intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: intermediatePublic,
            notValidBefore: validFrom, notValidAfter: validUntil, issuer: rootName, subject: intermediateName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                intermediateIdentifier
                AuthorityKeyIdentifier(keyIdentifier: rootIdentifier.keyIdentifier)
                Certificate.Extension(oid: Self.intermediateMarker, critical: false, value: [0x05, 0x00])
            },
            issuerPrivateKey: .init(rootKey))
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: leafPublic,
            notValidBefore: validFrom, notValidAfter: validUntil, issuer: intermediateName, subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                SubjectKeyIdentifier(hash: leafPublic)
                AuthorityKeyIdentifier(keyIdentifier: intermediateIdentifier.keyIdentifier)
                Certificate.Extension(oid: Self.leafMarker, critical: false, value: [0x05, 0x00])
            },
            issuerPrivateKey: .init(intermediateKey))

        rootDER = try Self.der(root)
        x5c = try [leaf, intermediate, root].map { Data(try Self.der($0)).base64EncodedString() }
        self.leafKey = leafKey
    }

    /// A compact JWS of `payload` signed by the leaf: ES256, with the chain in `x5c`.
    func sign(_ payload: [String: Any]) throws -> String {
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": x5c] as [String: Any], options: [.sortedKeys])
        let body = try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])
        let input = Self.base64URL(header) + "." + Self.base64URL(body)
        let signature = try leafKey.signature(for: Data(input.utf8))
        return input + "." + Self.base64URL(signature.rawRepresentation)
    }

    static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
