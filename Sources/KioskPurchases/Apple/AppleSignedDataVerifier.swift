import Crypto
import Dispatch
import Foundation
import KioskFiles
import NIOCore
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Verifies what the App Store signs (StoreKit 2 transactions and renewal info, App Store Server
/// Notifications V2) offline, and decodes it into typed values.
///
/// Each JWS must: be signed with ES256 (the header's `alg` is checked, never used to choose); carry in `x5c`
/// exactly a leaf, an intermediate and a root certificate, the leaf and intermediate chaining under RFC 5280
/// to one of the configured roots at the payload's `signedDate`, the intermediate and leaf bearing Apple's
/// marker extensions (the `x5c` root itself is never trusted); not be signed further in the future than the
/// clock skew allows; verify with the leaf's P-256 key; and then name the app and an accepted environment.
///
/// The work (base64, JSON, signatures, chains) is done on `executor`, whose threads have a low priority: a
/// storm of notifications uses the processors the calls readers wait for only when those calls leave them.
public struct AppleSignedDataVerifier: Sendable {
    /// How far in the future `signedDate` may be by default: 5 minutes.
    public static let defaultClockSkew: TimeInterval = 300

    private let roots: CertificateStore
    private let rootCount: Int
    /// Identifies the configured roots in chain cache keys.
    private let rootsFingerprint: SHA256Digest
    /// How far in the future a `signedDate` may be, in seconds.
    public let clockSkew: TimeInterval
    /// Where verified chains are kept; nil verifies every chain every time.
    public let chainCache: AppleChainCache?
    private let clock: @Sendable () -> Date
    /// Where verifications run.
    public let executor: BlockingExecutor

    /// The executor verifiers use by default: one thread fewer than the processors (at least one), at nice 10.
    public static let defaultExecutor = BlockingExecutor(threads: max(1, System.coreCount - 1), niceness: 10)

    /// - Parameters:
    ///   - rootCertificates: the roots the App Store chains to (Apple Root CA - G3); nothing else is trusted.
    ///   - clockSkew: how far in the future, in seconds, a `signedDate` may be.
    ///   - chainCache: where verified chains are kept, or nil to verify every chain every time.
    ///   - clock: the current time, injectable for tests.
    ///   - executor: where verifications run.
    public init(
        rootCertificates: [Certificate],
        clockSkew: TimeInterval = defaultClockSkew,
        chainCache: AppleChainCache? = AppleChainCache(),
        clock: @escaping @Sendable () -> Date = { Date() },
        executor: BlockingExecutor = AppleSignedDataVerifier.defaultExecutor
    ) {
        self.executor = executor
        self.roots = CertificateStore(rootCertificates)
        self.rootCount = rootCertificates.count
        var hash = SHA256()
        for root in rootCertificates {
            hash.update(data: Self.sha256(Self.derBytes(of: root)))
        }
        self.rootsFingerprint = hash.finalize()
        self.clockSkew = clockSkew
        self.chainCache = chainCache
        self.clock = clock
    }

    /// Roots given as DER (e.g. the bytes of `AppleRootCA-G3.cer`); refuses bytes that are not a certificate.
    public init(
        rootCertificatesDER: [[UInt8]],
        clockSkew: TimeInterval = defaultClockSkew,
        chainCache: AppleChainCache? = AppleChainCache(),
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws(PurchaseVerificationError) {
        var certificates: [Certificate] = []
        for (index, der) in rootCertificatesDER.enumerated() {
            do {
                certificates.append(try Certificate(derEncoded: der))
            } catch {
                throw PurchaseVerificationError(
                    .certificateChain, "configured root certificate \(index + 1) is not a DER certificate: \(error)")
            }
        }
        self.init(rootCertificates: certificates, clockSkew: clockSkew, chainCache: chainCache, clock: clock)
    }

    // MARK: - Signed data

    /// A verified StoreKit 2 transaction (`signedTransactionInfo`, `signedTransactions`, a device's
    /// `Transaction.jwsRepresentation`).
    public func transaction(_ jws: String, for app: AppleStoreIdentity) async throws(PurchaseVerificationError)
        -> AppleTransaction
    {
        try await offloaded { () throws(PurchaseVerificationError) in try self.verifiedTransaction(jws, for: app) }
    }

    /// Verified renewal info of a subscription (`signedRenewalInfo`).
    ///
    /// Renewal info names no bundle: only its environment is checked against the app's (as Apple's own
    /// verifier does). Inside a notification it is tied to the notification's app.
    public func renewalInfo(_ jws: String, for app: AppleStoreIdentity) async throws(PurchaseVerificationError)
        -> AppleRenewalInfo
    {
        try await offloaded { () throws(PurchaseVerificationError) in try self.verifiedRenewalInfo(jws, for: app) }
    }

    /// A verified App Store Server Notification V2 (the `signedPayload` of its body), its inner transaction
    /// and renewal info verified too: if either is refused, so is the notification.
    public func notification(_ signedPayload: String, for app: AppleStoreIdentity) async throws(PurchaseVerificationError)
        -> AppleNotification
    {
        try await offloaded { () throws(PurchaseVerificationError) in try self.verifiedNotification(signedPayload, for: app) }
    }

    /// A verified notification from the bytes of its HTTP body, `{"signedPayload": "…"}`.
    public func notification(body: some Collection<UInt8>, limit: Int, for app: AppleStoreIdentity)
        async throws(PurchaseVerificationError) -> AppleNotification
    {
        let bytes = Array(body)
        return try await offloaded { () throws(PurchaseVerificationError) in
            try self.verifiedNotification(Self.signedPayload(body: bytes, limit: limit), for: app)
        }
    }

    /// Runs a verification on `executor`.
    private func offloaded<T: Sendable>(_ work: @escaping @Sendable () throws(PurchaseVerificationError) -> T)
        async throws(PurchaseVerificationError) -> T
    {
        let result: Result<T, PurchaseVerificationError>
        do {
            result = try await executor.run { Result(catching: work) }
        } catch {
            throw PurchaseVerificationError(.malformed, "the signed data could not be verified: the verification threads are stopped")
        }
        return try result.get()
    }

    // MARK: - Verifying, on the calling thread

    private func verifiedTransaction(_ jws: String, for app: AppleStoreIdentity) throws(PurchaseVerificationError)
        -> AppleTransaction
    {
        let payload = try verifiedPayload(jws, what: "transaction")
        let transaction = try decode(AppleTransactionPayload.self, from: payload, what: "transaction").value()
        try Self.check(bundleId: transaction.bundleId, what: "transaction", for: app)
        try Self.check(environment: transaction.environment, what: "transaction", for: app)
        return transaction
    }

    private func verifiedRenewalInfo(_ jws: String, for app: AppleStoreIdentity) throws(PurchaseVerificationError)
        -> AppleRenewalInfo
    {
        let payload = try verifiedPayload(jws, what: "renewal info")
        let renewal = try decode(AppleRenewalInfoPayload.self, from: payload, what: "renewal info").value()
        try Self.check(environment: renewal.environment, what: "renewal info", for: app)
        return renewal
    }

    private func verifiedNotification(_ signedPayload: String, for app: AppleStoreIdentity) throws(PurchaseVerificationError)
        -> AppleNotification
    {
        let payload = try verifiedPayload(signedPayload, what: "notification")
        let decoded = try decode(AppleNotificationPayload.self, from: payload, what: "notification")
        guard decoded.data != nil || decoded.summary != nil else {
            throw PurchaseVerificationError(.malformed, "the notification carries neither data nor summary")
        }
        var notification = AppleNotification(
            notificationType: AppleNotificationType(rawValue: decoded.notificationType),
            subtype: decoded.subtype.map(AppleNotificationSubtype.init(rawValue:)),
            notificationUUID: decoded.notificationUUID,
            version: decoded.version,
            signedDate: appleDate(decoded.signedDate),
            data: nil,
            summary: decoded.summary?.value)

        if let summary = notification.summary {
            try Self.check(bundleId: summary.bundleId, what: "notification", for: app)
            try Self.check(appAppleId: summary.appAppleId, environment: summary.environment, for: app)
            try Self.check(environment: summary.environment, what: "notification", for: app)
        }
        if let data = decoded.data {
            let environment = AppleEnvironment(rawValue: data.environment)
            try Self.check(bundleId: data.bundleId, what: "notification", for: app)
            try Self.check(appAppleId: data.appAppleId, environment: environment, for: app)
            try Self.check(environment: environment, what: "notification", for: app)
            // The inner signed data must be for the notification's own app and environment.
            let inner = AppleStoreIdentity(bundleId: app.bundleId, appAppleId: app.appAppleId, environments: [environment])
            var transaction: AppleTransaction?
            if let signed = data.signedTransactionInfo {
                do throws(PurchaseVerificationError) {
                    transaction = try verifiedTransaction(signed, for: inner)
                } catch {
                    throw PurchaseVerificationError(error.reason, "the notification's signedTransactionInfo: \(error.message)")
                }
            }
            var renewalInfo: AppleRenewalInfo?
            if let signed = data.signedRenewalInfo {
                do throws(PurchaseVerificationError) {
                    renewalInfo = try verifiedRenewalInfo(signed, for: inner)
                } catch {
                    throw PurchaseVerificationError(error.reason, "the notification's signedRenewalInfo: \(error.message)")
                }
            }
            notification.data = AppleNotificationData(
                bundleId: data.bundleId,
                bundleVersion: data.bundleVersion,
                appAppleId: data.appAppleId,
                environment: environment,
                status: data.status.map(AppleSubscriptionStatus.init(rawValue:)),
                transaction: transaction,
                renewalInfo: renewalInfo,
                signedTransactionInfo: data.signedTransactionInfo,
                signedRenewalInfo: data.signedRenewalInfo)
        }
        return notification
    }


    /// The `signedPayload` of a notification's HTTP body, refusing a body of more than `limit` bytes.
    public static func signedPayload(body: some Collection<UInt8>, limit: Int) throws(PurchaseVerificationError) -> String {
        let count = body.count
        guard count <= limit else {
            throw PurchaseVerificationError(
                .malformed, "the notification body is \(count) bytes, more than the \(limit) allowed")
        }
        do {
            return try JSONDecoder().decode(NotificationBody.self, from: Data(body)).signedPayload
        } catch {
            throw PurchaseVerificationError(
                .malformed, "the notification body is not a JSON object with a signedPayload string")
        }
    }

    /// The JSON of a notification's HTTP body.
    private struct NotificationBody: Decodable { let signedPayload: String }

    // MARK: - Verification

    /// The payload of `jws` once its algorithm, chain, signing time and signature are verified.
    private func verifiedPayload(_ jws: String, what: String) throws(PurchaseVerificationError) -> [UInt8] {
        let parsed = try AppleCompactJWS(jws, what: what)

        struct Signed: Decodable { let signedDate: Int64 }
        let signedDate = appleDate(try decode(Signed.self, from: parsed.payload, what: what).signedDate)
        let now = clock()
        guard signedDate <= now.addingTimeInterval(clockSkew) else {
            throw PurchaseVerificationError(
                .time,
                "the \(what) was signed at \(Self.text(signedDate)), after this server's time \(Self.text(now)) "
                    + "plus the \(Int(exactly: clockSkew.rounded()).map(String.init) ?? "\(clockSkew)") seconds of clock skew allowed")
        }

        let key = try leafKey(parsed.certificates, at: signedDate, what: what)

        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: parsed.signature) else {
            throw PurchaseVerificationError(
                .signature, "the \(what)'s signature is \(parsed.signature.count) bytes, not the 64 of an ES256 signature")
        }
        guard key.isValidSignature(signature, for: parsed.signingInput) else {
            throw PurchaseVerificationError(
                .signature, "the \(what)'s signature does not verify with the key of its leaf certificate")
        }
        return parsed.payload
    }

    /// The leaf's key, once the chain is verified at `date` (or found verified in the cache).
    private func leafKey(_ chain: [[UInt8]], at date: Date, what: String) throws(PurchaseVerificationError)
        -> P256.Signing.PublicKey
    {
        guard chain.count == AppleCompactJWS.chainLength else {
            throw PurchaseVerificationError(
                .certificateChain, "the \(what)'s certificate chain has \(chain.count) certificates, not 3")
        }
        var hash = SHA256()
        hash.update(data: Data(rootsFingerprint))
        for der in chain {
            hash.update(data: Self.sha256(der))
        }
        let cacheKey = hash.finalize()
        if let chainCache, let key = chainCache.key(for: cacheKey, at: date) {
            return key
        }

        var certificates: [Certificate] = []
        for (index, der) in chain.enumerated() {
            do {
                certificates.append(try Certificate(derEncoded: der))
            } catch {
                throw PurchaseVerificationError(
                    .certificateChain, "certificate \(index + 1) of the \(what)'s chain (x5c) is not a DER X.509 certificate")
            }
        }
        let leaf = certificates[0], intermediate = certificates[1]
        guard let key = P256.Signing.PublicKey(leaf.publicKey) else {
            throw PurchaseVerificationError(
                .certificateChain, "the \(what)'s leaf certificate (\(leaf.subject)) does not hold a P-256 key, as ES256 needs")
        }
        for (name, certificate) in [("leaf", leaf), ("intermediate", intermediate)]
        where date < certificate.notValidBefore || date > certificate.notValidAfter {
            throw PurchaseVerificationError(
                .certificateChain,
                "the \(what)'s \(name) certificate (\(certificate.subject)) is valid from \(Self.text(certificate.notValidBefore)) "
                    + "to \(Self.text(certificate.notValidAfter)), not at the signing time \(Self.text(date))")
        }
        guard rootCount > 0 else {
            throw PurchaseVerificationError(.certificateChain, "no App Store root certificate is configured")
        }

        switch Self.validate(leaf: leaf, intermediate: intermediate, roots: roots, at: date) {
        case .validCertificate(let verified):
            if let chainCache {
                let notBefore = verified.map(\.notValidBefore).max() ?? date
                let notAfter = verified.map(\.notValidAfter).min() ?? date
                chainCache.insert(cacheKey, key: key, notBefore: notBefore, notAfter: notAfter)
            }
            return key
        case .couldNotValidate(let failures):
            guard let failure = failures.first else {
                throw PurchaseVerificationError(
                    .certificateChain,
                    "the \(what)'s certificate chain (leaf \(leaf.subject), intermediate \(intermediate.subject)) "
                        + "does not lead to a configured App Store root certificate")
            }
            throw PurchaseVerificationError(
                .certificateChain,
                "the \(what)'s certificate chain is refused at \(Self.text(date)): \(String(failure.policyFailureReason.description.prefix(400)))")
        }
    }

    /// swift-certificates' validation, awaited from this (executor) thread: its policies here never wait on
    /// anything, and it runs on Swift's pool while this thread blocks (only when a chain is not cached).
    private static func validate(leaf: Certificate, intermediate: Certificate, roots: CertificateStore, at date: Date)
        -> CertificateValidationResult
    {
        let done = DispatchSemaphore(value: 0)
        let result = LockedResult()
        Task {
            var verifier = Verifier(rootCertificates: roots) {
                AppleChainPolicy()
                RFC5280Policy(fixedExpiryValidationTime: date)
            }
            result.set(await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate])))
            done.signal()
        }
        done.wait()
        return result.get() ?? .couldNotValidate([])
    }

    /// The validation's result, handed from its task to the waiting thread.
    private final class LockedResult: @unchecked Sendable {
        private let lock = NSLock()
        private var value: CertificateValidationResult?
        func set(_ result: CertificateValidationResult) { lock.withLock { value = result } }
        func get() -> CertificateValidationResult? { lock.withLock { value } }
    }

    // MARK: - The app

    private static func check(bundleId: String, what: String, for app: AppleStoreIdentity) throws(PurchaseVerificationError) {
        guard bundleId == app.bundleId else {
            throw PurchaseVerificationError(
                .wrongApp, "the \(what) is for bundle \(bundleId.prefix(200)), not \(app.bundleId)")
        }
    }

    private static func check(environment: AppleEnvironment, what: String, for app: AppleStoreIdentity)
        throws(PurchaseVerificationError)
    {
        guard app.environments.contains(environment) else {
            let accepted = app.environments.map(\.rawValue).sorted().joined(separator: ", ")
            throw PurchaseVerificationError(
                .wrongEnvironment,
                "the \(what) is from the \(environment.rawValue.prefix(64)) environment; this app accepts \(accepted.isEmpty ? "none" : accepted)")
        }
    }

    /// In Production, the notification must name the app's Apple ID.
    private static func check(appAppleId: Int64?, environment: AppleEnvironment, for app: AppleStoreIdentity)
        throws(PurchaseVerificationError)
    {
        guard environment == .production else { return }
        guard let expected = app.appAppleId else {
            throw PurchaseVerificationError(
                .wrongApp, "the notification is from Production, and this app's Apple ID (appAppleId) is not configured")
        }
        guard appAppleId == expected else {
            let named = appAppleId.map { "is for app Apple ID \($0)" } ?? "names no app Apple ID"
            throw PurchaseVerificationError(.wrongApp, "the notification \(named), not this app's \(expected)")
        }
    }

    // MARK: - Helpers

    private func decode<T: Decodable>(_ type: T.Type, from payload: [UInt8], what: String) throws(PurchaseVerificationError) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(payload))
        } catch let error as DecodingError {
            throw PurchaseVerificationError(.malformed, "the \(what)'s payload \(Self.describe(error))")
        } catch {
            throw PurchaseVerificationError(.malformed, "the \(what)'s payload is not JSON")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath + [key])
            return "lacks the field \(field)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return context.codingPath.isEmpty
                ? "is not a JSON object" : "has the field \(path(context.codingPath)) of the wrong type"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "is not JSON" : "has an unreadable field \(path(context.codingPath))"
        @unknown default:
            return "cannot be read"
        }
    }

    private static func text(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    private static func derBytes(of certificate: Certificate) -> [UInt8] {
        var serializer = DER.Serializer()
        do {
            try serializer.serialize(certificate)
        } catch {
            return []
        }
        return serializer.serializedBytes
    }

    private static func sha256(_ bytes: [UInt8]) -> Data {
        Data(SHA256.hash(data: bytes))
    }
}
