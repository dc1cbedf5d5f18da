import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A test certificate authority and a TLS server certificate for 127.0.0.1 signed by it, made in memory.
/// Clients trust `caPEM` (or `caCertificate`) and nothing else.
public struct TestAuthority: Sendable {
    public let caPEM: String
    public let caCertificate: NIOSSLCertificate
    public let serverCertificate: NIOSSLCertificate
    public let serverKey: NIOSSLPrivateKey

    public init() throws {
        let caKey = P256.Signing.PrivateKey()
        let serverKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName {
            OrganizationName("Kiosk Tests")
            CommonName("Kiosk Push Test CA")
        }
        let serverName = try DistinguishedName {
            OrganizationName("Kiosk Tests")
            CommonName("127.0.0.1")
        }
        let now = Date()
        let caIdentifier = SubjectKeyIdentifier(hash: Certificate.PublicKey(caKey.publicKey))
        let ca = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 2 * 86_400, issuer: caName, subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                caIdentifier
            },
            issuerPrivateKey: .init(caKey))
        let server = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(serverKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 2 * 86_400, issuer: caName, subject: serverName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])), .dnsName("localhost")])
                AuthorityKeyIdentifier(keyIdentifier: caIdentifier.keyIdentifier)
            },
            issuerPrivateKey: .init(caKey))
        caPEM = try ca.serializeAsPEM().pemString
        caCertificate = try NIOSSLCertificate(bytes: Array(caPEM.utf8), format: .pem)
        serverCertificate = try NIOSSLCertificate(bytes: Array(try server.serializeAsPEM().pemString.utf8), format: .pem)
        self.serverKey = try NIOSSLPrivateKey(bytes: Array(serverKey.pemRepresentation.utf8), format: .pem)
    }

    /// A client TLS configuration trusting only this authority.
    public var clientTLS: TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([caCertificate])
        return tls
    }
}
