import Crypto
import Foundation
import KioskPurchases
import SwiftASN1
import Testing
import X509

/// A certificate authority shaped like the App Store's, made fresh for tests: a self-signed root, an
/// intermediate with Apple's marker 1.2.840.113635.100.6.2.1, a leaf with 1.2.840.113635.100.6.11.1, P-256
/// keys, key identifiers throughout. Its leaf signs JWS the way the App Store does (ES256, `x5c` of leaf,
/// intermediate, root), so tests can make transactions, renewal info and notifications from dictionaries.
struct AppleTestAuthority: Sendable {
    let root: Certificate
    let intermediate: Certificate
    let leaf: Certificate
    let leafKey: P256.Signing.PrivateKey

    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]

    /// - Parameters:
    ///   - name: the start of every subject's common name; two authorities with the same name differ only by keys.
    ///   - leafValidity: when the leaf is valid (the root and intermediate are valid 2020-2040).
    ///   - intermediateMarker, leafMarker: whether each carries Apple's marker extension.
    init(
        name: String = "Kiosk Test",
        leafValidity: ClosedRange<Date> = AppleTestAuthority.date("2025-01-01T00:00:00Z")...AppleTestAuthority.date("2030-01-01T00:00:00Z"),
        intermediateMarker: Bool = true,
        leafMarker: Bool = true
    ) throws {
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let rootPublic = Certificate.PublicKey(rootKey.publicKey)
        let intermediatePublic = Certificate.PublicKey(intermediateKey.publicKey)
        let leafPublic = Certificate.PublicKey(leafKey.publicKey)
        let rootName = try DistinguishedName {
            CountryName("US")
            OrganizationName("Kiosk Tests")
            CommonName("\(name) Root CA - G3")
        }
        let intermediateName = try DistinguishedName {
            CountryName("US")
            OrganizationName("Kiosk Tests")
            OrganizationalUnitName("G6")
            CommonName("\(name) Worldwide Developer Relations Certification Authority")
        }
        let leafName = try DistinguishedName {
            CountryName("US")
            OrganizationName("Kiosk Tests")
            CommonName("\(name) Prod ECC Mac App Store and iTunes Store Receipt Signing")
        }
        let caFrom = Self.date("2020-01-01T00:00:00Z"), caTo = Self.date("2040-01-01T00:00:00Z")
        let rootIdentifier = SubjectKeyIdentifier(hash: rootPublic)
        let intermediateIdentifier = SubjectKeyIdentifier(hash: intermediatePublic)

        root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: rootPublic,
            notValidBefore: caFrom, notValidAfter: caTo, issuer: rootName, subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                rootIdentifier
                AuthorityKeyIdentifier(keyIdentifier: rootIdentifier.keyIdentifier)
            },
            issuerPrivateKey: .init(rootKey))
        intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: intermediatePublic,
            notValidBefore: caFrom, notValidAfter: caTo, issuer: rootName, subject: intermediateName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                intermediateIdentifier
                AuthorityKeyIdentifier(keyIdentifier: rootIdentifier.keyIdentifier)
                if intermediateMarker {
                    // As Apple's: not critical, the value an ASN.1 NULL.
                    Certificate.Extension(oid: Self.intermediateMarker, critical: false, value: [0x05, 0x00])
                }
            },
            issuerPrivateKey: .init(rootKey))
        leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: leafPublic,
            notValidBefore: leafValidity.lowerBound, notValidAfter: leafValidity.upperBound,
            issuer: intermediateName, subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                SubjectKeyIdentifier(hash: leafPublic)
                AuthorityKeyIdentifier(keyIdentifier: intermediateIdentifier.keyIdentifier)
                if leafMarker {
                    Certificate.Extension(oid: Self.leafMarker, critical: false, value: [0x05, 0x00])
                }
            },
            issuerPrivateKey: .init(intermediateKey))
        self.leafKey = leafKey
    }

    /// The root's DER, as the server's configured root certificate file would hold it.
    var rootDER: [UInt8] { Self.der(root) }

    /// The `x5c` header the App Store sends: leaf, intermediate, root, base64 DER.
    var x5c: [String] { [leaf, intermediate, root].map { Data(Self.der($0)).base64EncodedString() } }

    /// A verifier that trusts this authority's root, at `now`.
    func verifier(now: Date = AppleTestAuthority.now, cache: AppleChainCache? = nil) throws -> AppleSignedDataVerifier {
        try AppleSignedDataVerifier(rootCertificatesDER: [rootDER], chainCache: cache, clock: { now })
    }

    // MARK: - Signing

    /// A compact JWS of `payload` signed by the leaf key, with the given `alg` and `x5c` in its header.
    func sign(_ payload: [String: Any], alg: String = "ES256", x5c: [String]? = nil) throws -> String {
        try sign(payloadJSON: Self.json(payload), header: ["alg": alg, "x5c": x5c ?? self.x5c])
    }

    func sign(payloadJSON: [UInt8], header: [String: Any]) throws -> String {
        let input = Self.base64URL(try Self.json(header)) + "." + Self.base64URL(payloadJSON)
        let signature = try leafKey.signature(for: Data(input.utf8))
        return input + "." + Self.base64URL(signature.rawRepresentation)
    }

    func transaction(_ changes: [String: Any] = [:]) throws -> String {
        try sign(Self.transactionPayload(changes))
    }

    func renewalInfo(_ changes: [String: Any] = [:]) throws -> String {
        try sign(Self.renewalInfoPayload(changes))
    }

    /// A notification whose `data` holds a transaction and renewal info signed by this authority (unless
    /// `data` in `changes` replaces them).
    func notification(_ changes: [String: Any] = [:], dataChanges: [String: Any] = [:]) throws -> String {
        var data: [String: Any] = [
            "bundleId": Self.bundleId, "appAppleId": Self.appAppleId, "environment": "Production",
            "bundleVersion": "42", "status": 1,
            "signedTransactionInfo": try transaction(), "signedRenewalInfo": try renewalInfo(),
        ]
        data.merge(dataChanges) { _, new in new }
        var payload: [String: Any] = [
            "notificationType": "SUBSCRIBED", "subtype": "INITIAL_BUY",
            "notificationUUID": "002e14d5-51f5-4503-b5a8-c3a1af68eb20", "version": "2.0",
            "signedDate": Self.milliseconds(Self.signedDate), "data": data,
        ]
        payload.merge(changes) { _, new in new }
        return try sign(payload)
    }

    // MARK: - Payloads

    static let bundleId = "com.example.kiosk"
    static let appAppleId = 1_234_567_890
    static let identity = AppleStoreIdentity(bundleId: bundleId, appAppleId: Int64(appAppleId), environments: [.production])
    /// The tests' present, and the signing time a minute before it.
    static let now = date("2026-06-01T12:00:00Z")
    static let signedDate = now.addingTimeInterval(-60)

    static func transactionPayload(_ changes: [String: Any] = [:]) -> [String: Any] {
        var payload: [String: Any] = [
            "transactionId": "2000000123456789", "originalTransactionId": "2000000123450000",
            "webOrderLineItemId": "2000000012345678", "bundleId": bundleId, "productId": "kiosk.monthly",
            "subscriptionGroupIdentifier": "21000000", "purchaseDate": milliseconds(signedDate.addingTimeInterval(-3600)),
            "originalPurchaseDate": milliseconds(date("2026-01-01T08:00:00Z")),
            "expiresDate": milliseconds(signedDate.addingTimeInterval(30 * 86400)), "quantity": 1,
            "type": "Auto-Renewable Subscription", "appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138",
            "inAppOwnershipType": "PURCHASED", "signedDate": milliseconds(signedDate), "environment": "Production",
            "transactionReason": "PURCHASE", "storefront": "FRA", "storefrontId": "143442", "price": 4990,
            "currency": "EUR", "appTransactionId": "704289572311312345", "isUpgraded": false,
        ]
        payload.merge(changes) { _, new in new }
        return payload
    }

    static func renewalInfoPayload(_ changes: [String: Any] = [:]) -> [String: Any] {
        var payload: [String: Any] = [
            "originalTransactionId": "2000000123450000", "autoRenewProductId": "kiosk.yearly",
            "productId": "kiosk.monthly", "autoRenewStatus": 1, "isInBillingRetryPeriod": false,
            "signedDate": milliseconds(signedDate), "environment": "Production",
            "recentSubscriptionStartDate": milliseconds(date("2026-01-01T08:00:00Z")),
            "renewalDate": milliseconds(signedDate.addingTimeInterval(30 * 86400)),
            "appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138",
        ]
        payload.merge(changes) { _, new in new }
        return payload
    }

    // MARK: - Tampering

    /// `jws` with its payload changed but its signature kept.
    static func tamperingPayload(_ jws: String, _ change: (inout [String: Any]) -> Void) throws -> String {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let decoded = try #require(base64URLDecoded(parts[1]))
        var payload = try #require(try JSONSerialization.jsonObject(with: Data(decoded)) as? [String: Any])
        change(&payload)
        return parts[0] + "." + base64URL(try json(payload)) + "." + parts[2]
    }

    /// `jws` with one byte of its signature changed.
    static func tamperingSignature(_ jws: String) throws -> String {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var signature = try #require(base64URLDecoded(parts[2]))
        signature[10] ^= 0x01
        return parts[0] + "." + parts[1] + "." + base64URL(signature)
    }

    // MARK: - Encoding

    static func der(_ certificate: Certificate) -> [UInt8] {
        var serializer = DER.Serializer()
        // A certificate built in memory always serializes.
        try? serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    static func json(_ object: [String: Any]) throws -> [UInt8] {
        [UInt8](try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func base64URLDecoded(_ text: String) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map { [UInt8]($0) }
    }

    static func milliseconds(_ date: Date) -> Int {
        Int((date.timeIntervalSince1970 * 1000).rounded())
    }

    static func date(_ text: String) -> Date {
        (try? Date(text, strategy: .iso8601)) ?? Date(timeIntervalSince1970: 0)
    }
}
