import AsyncHTTPClient
import Foundation
import KioskConfig
import KioskGoogleAuth
import KioskModels
import KioskPurchases
import NIOSSL
import Synchronization
import SwiftASN1
import X509

/// A store file the configuration names that cannot be used: the start (and `config check`) stops with
/// its key and path, instead of every purchase being refused later.
struct StoreFileProblem: Error, CustomStringConvertible {
    var key: String
    var path: String
    var problem: String
    var description: String { "\(key): \(path): \(problem)" }
}

/// The stores' checks as the configuration sets them: Apple's roots and Google's service account read and
/// checked once per configuration, every app's identities in the stores.
package final class StoreWiring: Sendable {
    /// HTTP clients for Google, by the roots they trust (nil: the system's), kept for the process's life:
    /// a reload makes new checks, never new connection pools. Process-wide, as `HTTPClient.shared` is: never
    /// released, since AsyncHTTPClient traps when a client that was not shut down is released (the server's end).
    private static let clients = Mutex<[String?: HTTPClient]>([:])

    func checks(_ configuration: KioskConfiguration) throws -> any StoreVerifying {
        let stores = configuration.stores
        var apps: [String: StoreChecks.App] = [:]
        for app in configuration.apps {
            guard let store = app.store else { continue }
            apps[app.key] = StoreChecks.App(
                apple: store.apple.map { apple in
                    AppleStoreIdentity(bundleId: apple.bundleID, appAppleId: apple.appAppleID,
                                       environments: Set(apple.acceptedEnvironments.map(AppleEnvironment.init(rawValue:))))
                },
                googlePackageName: store.google?.packageName,
                googleAcceptsTestPurchases: store.google?.acceptTestPurchases ?? false)
        }
        guard !apps.isEmpty else { return NoStores() }
        let apple = try Self.appleVerifier(stores.apple)
        let google = try googlePlay(stores.google)
        return StoreChecks(apps: apps, apple: apple, google: google)
    }

    /// Checks the files the stores' section names without keeping anything (`config check`).
    package static func checkFiles(_ configuration: KioskConfiguration) throws {
        _ = try appleVerifier(configuration.stores.apple)
        if let file = configuration.stores.google.serviceAccountFile { _ = try serviceAccount(file) }
        if let file = configuration.stores.google.caCertificates { _ = try trustRoots(file) }
    }

    static func appleVerifier(_ apple: KioskConfiguration.Stores.Apple) throws -> AppleSignedDataVerifier? {
        guard !apple.rootCertificates.isEmpty else { return nil }
        var roots: [Certificate] = []
        for path in apple.rootCertificates {
            let problem = { (text: String) in StoreFileProblem(key: "stores.apple.root_certificates", path: path, problem: text) }
            let bytes: [UInt8]
            do { bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path))) } catch {
                throw problem("cannot be read (\(error.localizedDescription)); download Apple Root CA - G3 from apple.com/certificateauthority")
            }
            if let certificate = try? Certificate(derEncoded: bytes) {
                roots.append(certificate)
            } else if let text = String(bytes: bytes, encoding: .utf8), let certificate = try? Certificate(pemEncoded: text) {
                roots.append(certificate)
            } else {
                throw problem("is not a certificate (DER or PEM)")
            }
        }
        return AppleSignedDataVerifier(rootCertificates: roots, clockSkew: TimeInterval(apple.clockSkewSeconds))
    }

    static func serviceAccount(_ path: String) throws -> GoogleServiceAccount {
        do {
            return try GoogleServiceAccount(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw StoreFileProblem(key: "stores.google.service_account_file", path: path,
                                   problem: "is not a usable service account key file (\(error)); download a JSON key of the service account from the Google Cloud console")
        }
    }

    /// The certificates of the PEM file at `path`, which the configuration names at `key`.
    static func trustRoots(_ path: String, key: String = "stores.google.ca_certificates") throws -> [NIOSSLCertificate] {
        do {
            let roots = try NIOSSLCertificate.fromPEMFile(path)
            guard !roots.isEmpty else { throw StoreFileProblem(key: key, path: path, problem: "holds no certificate") }
            return roots
        } catch let problem as StoreFileProblem {
            throw problem
        } catch {
            throw StoreFileProblem(key: key, path: path, problem: "is not a PEM file of certificates (\(error))")
        }
    }

    private func googlePlay(_ google: KioskConfiguration.Stores.Google) throws -> StoreChecks.GooglePlay? {
        guard let file = google.serviceAccountFile else { return nil }
        let account = try Self.serviceAccount(file)
        let client = try Self.httpClient(trusting: google.caCertificates)
        let push = google.pushAudience.flatMap { audience in
            google.pushServiceAccount.map { email in
                PubSubPushVerifier(audience: audience, serviceAccountEmail: email, keysURL: google.signingKeysURL, httpClient: client)
            }
        }
        return StoreChecks.GooglePlay(tokens: GoogleAccessTokens(account: account, tokenURL: google.tokenURL, httpClient: client),
                                      apiBaseURL: google.apiBaseURL, httpClient: client, pushVerifier: push)
    }

    /// A client trusting only the roots of `caFile` (named at `key` in the configuration), kept for the
    /// process's life; `.shared` (the system's roots) when nil.
    static func httpClient(trusting caFile: String?, key: String = "stores.google.ca_certificates") throws -> HTTPClient {
        guard let caFile else { return .shared }
        let roots = try Self.trustRoots(caFile, key: key)
        // Made under the lock (an initializer, no I/O): two reloads never make a second client to shut down.
        return Self.clients.withLock { kept in
            if let existing = kept[caFile] { return existing }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(roots)
            tls.minimumTLSVersion = .tlsv12
            var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
            configuration.redirectConfiguration = .disallow
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            kept[caFile] = client
            return client
        }
    }
}
