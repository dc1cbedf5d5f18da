import Foundation
import KioskConfig
import KioskGoogleAuth
import KioskHTTP
import KioskIntegers
import KioskModels
import KioskPush
import KioskPushFanOut
import Logging
import NIOSSL
import ServiceLifecycle

/// Push notifications as the configuration sets them: the apps that announce new issues, the senders of the
/// services that have credentials (read from their files at start and by `config check`), and the worker.
package enum PushWiring {
    /// The apps with a `push` section, in the fan-out's terms.
    package static func apps(_ configuration: KioskConfiguration) -> [String: PushApp] {
        var apps: [String: PushApp] = [:]
        for app in configuration.apps {
            guard let entry = app.push else { continue }
            let (topic, package) = configuration.pushSettings(of: app)
            let quiet = entry.quietHours.flatMap { QuietHours(from: $0.from, to: $0.to, timeZoneID: $0.timeZone) }
            let policy = AppPushPolicy(alerts: entry.alert.mapValues { PushAlertTemplate(title: $0.title, body: $0.body) },
                                       defaultLanguage: entry.defaultLanguage, background: entry.background, quietHours: quiet)
            apps[app.key] = PushApp(policy: policy, apnsTopic: topic, apnsSandbox: entry.apnsEnvironment == "sandbox", fcmPackage: package)
        }
        return apps
    }

    /// Reads and checks the key files `push` names, without keeping anything (`config check`).
    package static func checkFiles(_ configuration: KioskConfiguration) throws {
        if let apns = configuration.push.apns { _ = try signingKey(apns) }
        if let fcm = configuration.push.fcm { _ = try serviceAccount(fcm) }
    }

    /// The push service of the server's group, or nil when no app announces issues or no service has credentials.
    package static func service(_ configuration: KioskConfiguration, database: any KioskDatabase, links: (any LinkSigning)?,
                                metrics: KioskMetrics?, logger: Logger) throws -> (any Service)? {
        let apps = apps(configuration)
        let push = configuration.push
        guard !apps.isEmpty, push.apns != nil || push.fcm != nil else { return nil }
        let observer: any PushFanOutObserver = metrics.map { MetricsPushObserver(metrics: $0) } ?? UnobservedPushFanOut()
        var senders = PushSenders()
        var apnsSenders: [APNsSender] = []
        if let apns = push.apns {
            let tokens = APNsTokens(key: try signingKey(apns))
            let tls = try apns.caCertificates.map { file -> TLSConfiguration in
                var tls = TLSConfiguration.makeClientConfiguration()
                tls.trustRoots = .certificates(try StoreWiring.trustRoots(file, key: "push.apns.ca_certificates"))
                return tls
            }
            for environment in APNsConfiguration.Environment.allCases {
                let url = environment == .production ? apns.productionURL : apns.sandboxURL
                let sender: APNsSender
                do {
                    sender = try APNsSender(tokens: tokens, configuration: APNsConfiguration(environment: environment, baseURL: url, tls: tls),
                                            observer: observer)
                } catch {
                    throw StoreFileProblem(key: "push.apns.\(environment)_url", path: url ?? environment.baseURL, problem: error.description)
                }
                apnsSenders.append(sender)
                if environment == .production { senders.apnsProduction = sender } else { senders.apnsSandbox = sender }
            }
        }
        if let fcm = push.fcm {
            let account = try serviceAccount(fcm)
            let client = try StoreWiring.httpClient(trusting: fcm.caCertificates, key: "push.fcm.ca_certificates")
            guard let project = fcm.projectID ?? account.projectID else {
                throw StoreFileProblem(key: "push.fcm.project_id", path: fcm.serviceAccountFile,
                                       problem: "the key file has no project_id: give push.fcm.project_id")
            }
            let tokens = GoogleAccessTokens(account: account, scope: GoogleAccessTokens.firebaseMessagingScope, tokenURL: fcm.tokenURL,
                                            httpClient: client)
            do {
                senders.fcm = try FCMSender(tokens: tokens, configuration: FCMConfiguration(
                    projectID: project, baseURL: fcm.baseURL ?? FCMConfiguration.defaultBaseURL), httpClient: client, observer: observer)
            } catch {
                throw StoreFileProblem(key: "push.fcm", path: fcm.serviceAccountFile, problem: error.description)
            }
        }
        let worker = PushWorker(store: database, apps: apps, senders: senders, links: links,
                                options: .init(batchSize: push.batchSize, maximumAgeSeconds: Int64(widening: push.maxAgeHours) * 3_600),
                                observer: observer, logger: logger)
        return PushServing(worker: worker, apnsSenders: apnsSenders)
    }

    private static func signingKey(_ apns: KioskConfiguration.Push.APNs) throws -> APNsSigningKey {
        do {
            return try APNsSigningKey(contentsOf: URL(fileURLWithPath: apns.keyFile), keyID: apns.keyID, teamID: apns.teamID)
        } catch {
            throw StoreFileProblem(key: "push.apns.key_file", path: apns.keyFile, problem: error.description)
        }
    }

    private static func serviceAccount(_ fcm: KioskConfiguration.Push.FCM) throws -> GoogleServiceAccount {
        do {
            return try GoogleServiceAccount(contentsOf: URL(fileURLWithPath: fcm.serviceAccountFile))
        } catch {
            throw StoreFileProblem(key: "push.fcm.service_account_file", path: fcm.serviceAccountFile,
                                   problem: "is not a usable service account key file (\(error)); generate a private key under Project settings → Service accounts in the Firebase console")
        }
    }
}

/// The worker, then the APNs connections closed once it stopped.
private struct PushServing: Service, CustomStringConvertible {
    let worker: PushWorker
    let apnsSenders: [APNsSender]

    func run() async throws {
        do {
            try await worker.run()
        } catch {
            await closeConnections()
            throw error
        }
        await closeConnections()
    }

    private func closeConnections() async {
        for sender in apnsSenders { try? await sender.shutdown() }
    }

    var description: String { "PushWorker" }
}
