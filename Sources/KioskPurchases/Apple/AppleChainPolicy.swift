import SwiftASN1
import X509

/// The App Store's own rules for the chain of its signed data, on top of RFC 5280: exactly leaf,
/// intermediate and root, the intermediate marked as Apple's Worldwide Developer Relations CA, the leaf as
/// an App Store receipt signer.
struct AppleChainPolicy: VerifierPolicy {
    /// Marks the Apple Worldwide Developer Relations intermediate.
    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    /// Marks an App Store receipt (signed data) signing certificate.
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]

    /// Apple marks both extensions as not critical; should one be marked critical, this policy still
    /// understands it, since its whole meaning (being present) is what the policy checks.
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [Self.intermediateMarker, Self.leafMarker]

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        let certificates = Array(chain)
        guard certificates.count == 3 else {
            return .failsToMeetPolicy(
                reason: "the chain to the root is \(certificates.count) certificates long, not 3 (leaf, intermediate, root)")
        }
        guard certificates[1].extensions[oid: Self.intermediateMarker] != nil else {
            return .failsToMeetPolicy(
                reason: "the intermediate certificate (\(certificates[1].subject)) lacks Apple's intermediate marker extension 1.2.840.113635.100.6.2.1")
        }
        guard certificates[0].extensions[oid: Self.leafMarker] != nil else {
            return .failsToMeetPolicy(
                reason: "the leaf certificate (\(certificates[0].subject)) lacks Apple's App Store signing marker extension 1.2.840.113635.100.6.11.1")
        }
        return .meetsPolicy
    }
}
