import Foundation
import KioskModels

extension KioskConfiguration {
    /// The server's push credentials: Apple's signing key and Firebase's service account. Without either,
    /// devices still register, and nothing is sent to that service.
    package struct Push: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case apns, fcm, batchSize = "batch_size", maxAgeHours = "max_age_hours"
        }
        package var apns: APNs?
        package var fcm: FCM?
        /// Devices claimed and sent to at once by one instance.
        package var batchSize = 500
        /// An issue published longer ago than this when the fan-out reaches it is not announced (a server that
        /// was down overnight does not ring yesterday's issue).
        package var maxAgeHours = 24

        package init() {}

        package struct APNs: Codable, Sendable, Equatable {
            package enum CodingKeys: String, CodingKey {
                case teamID = "team_id", keyID = "key_id", keyFile = "key_file"
                case productionURL = "production_url", sandboxURL = "sandbox_url", caCertificates = "ca_certificates"
            }
            /// The Apple developer team's id (10 characters).
            package var teamID: String
            /// The id of the APNs key (10 characters).
            package var keyID: String
            /// The `.p8` file Apple let you download.
            package var keyFile: String
            /// Nil: Apple's, `https://api.push.apple.com`.
            package var productionURL: String?
            /// Nil: Apple's, `https://api.sandbox.push.apple.com`.
            package var sandboxURL: String?
            /// A PEM file of the only roots APNs is trusted under (a test stand-in); nil: the system's.
            package var caCertificates: String?

            package init(teamID: String, keyID: String, keyFile: String) {
                self.teamID = teamID; self.keyID = keyID; self.keyFile = keyFile
            }
        }

        package struct FCM: Codable, Sendable, Equatable {
            package enum CodingKeys: String, CodingKey {
                case serviceAccountFile = "service_account_file", projectID = "project_id", baseURL = "base_url"
                case tokenURL = "token_url", caCertificates = "ca_certificates"
            }
            /// The Firebase service account's JSON key file.
            package var serviceAccountFile: String
            /// Nil: the key file's `project_id`.
            package var projectID: String?
            /// Nil: Google's, `https://fcm.googleapis.com`.
            package var baseURL: String?
            /// Nil: the key file's `token_uri`.
            package var tokenURL: String?
            /// A PEM file of the only roots Google is trusted under (a test stand-in); nil: the system's.
            package var caCertificates: String?

            package init(serviceAccountFile: String) { self.serviceAccountFile = serviceAccountFile }
        }
    }

    /// How an app's devices are told of a new issue.
    package struct AppPushEntry: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey {
            case apnsTopic = "apns_topic", apnsEnvironment = "apns_environment", fcmPackage = "fcm_package"
            case alert, defaultLanguage = "default_language", background, quietHours = "quiet_hours"
        }
        /// The bundle id; nil: `store.apple.bundle_id`.
        package var apnsTopic: String?
        /// `production` (TestFlight and App Store builds) or `sandbox` (Xcode builds).
        package var apnsEnvironment: String?
        /// The Android package; nil: `store.google.package_name`.
        package var fcmPackage: String?
        /// Language code → the alert's title and body; empty: no alert, a background push only.
        @DefaultsToEmpty package var alert: [String: AlertTemplate] = [:]
        /// The language of devices that named none or one without a template; nil: the first in order.
        package var defaultLanguage: String?
        /// Whether a background push (`content-available`) wakes the app to fetch the issue.
        @DefaultsToEmpty package var background = false
        /// Hours in which no alert is shown: only the background push is sent (nothing when `background` is false).
        package var quietHours: QuietHoursEntry?

        package init(apnsTopic: String? = nil, fcmPackage: String? = nil, alert: [String: AlertTemplate] = [:],
                     background: Bool = false, quietHours: QuietHoursEntry? = nil) {
            self.apnsTopic = apnsTopic; self.fcmPackage = fcmPackage; self.alert = alert; self.background = background
            self.quietHours = quietHours
        }
    }

    /// An alert's texts; `{edition}`, `{publication}`, `{date}` (the day, long, in the language) and
    /// `{iso_date}` (`yyyy-MM-dd`) are replaced.
    package struct AlertTemplate: Codable, Sendable, Equatable {
        package var title: String
        package var body: String
        package init(title: String, body: String) { self.title = title; self.body = body }
    }

    /// `from` and `to` as `HH:mm` in `time_zone` (an IANA name); `from` after `to` spans midnight.
    package struct QuietHoursEntry: Codable, Sendable, Equatable {
        package enum CodingKeys: String, CodingKey { case from, to, timeZone = "time_zone" }
        package var from: String
        package var to: String
        package var timeZone: String
        package init(from: String, to: String, timeZone: String) { self.from = from; self.to = to; self.timeZone = timeZone }
    }

    /// The app's push settings with its store identities filled in: the APNs topic and FCM package it sends to.
    package func pushSettings(of app: AppEntry) -> (apnsTopic: String?, fcmPackage: String?) {
        (app.push?.apnsTopic ?? app.store?.apple?.bundleID, app.push?.fcmPackage ?? app.store?.google?.packageName)
    }

    /// `push` and every app's `push`.
    func validatePush(_ fail: (String, String) -> ConfigurationError) throws {
        guard (1...10_000).contains(push.batchSize) else { throw fail("push.batch_size", "must be 1 to 10000") }
        guard (1...720).contains(push.maxAgeHours) else { throw fail("push.max_age_hours", "must be 1 to 720 (30 days)") }
        if let apns = push.apns {
            for (name, value) in [("team_id", apns.teamID), ("key_id", apns.keyID)] where !Self.isAppleID(value) {
                throw fail("push.apns.\(name)", "must be the 10-character id Apple shows (letters and digits), got \"\(value)\"")
            }
            guard !apns.keyFile.isEmpty else { throw fail("push.apns.key_file", "must name the .p8 file of the APNs key") }
            for (name, url) in [("production_url", apns.productionURL), ("sandbox_url", apns.sandboxURL)] {
                guard let url, !Self.isBaseURL(url, https: true) else { continue }
                throw fail("push.apns.\(name)", "must be an https URL without a path, e.g. https://api.push.apple.com; got \"\(url)\"")
            }
        }
        if let fcm = push.fcm {
            guard !fcm.serviceAccountFile.isEmpty else {
                throw fail("push.fcm.service_account_file", "must name the Firebase service account's JSON key file")
            }
            if let project = fcm.projectID, project.isEmpty || !project.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 122) || $0 == 45 }) {
                throw fail("push.fcm.project_id", "must be the Firebase project id (lower-case letters, digits, -), got \"\(project)\"")
            }
            if let url = fcm.baseURL, !Self.isBaseURL(url, https: false) {
                throw fail("push.fcm.base_url", "must be an http(s) URL without a path, e.g. https://fcm.googleapis.com")
            }
            if let url = fcm.tokenURL, !(url.hasPrefix("https://") || url.hasPrefix("http://")) {
                throw fail("push.fcm.token_url", "must be an http(s) URL")
            }
        }
        for (a, app) in apps.enumerated() {
            guard let entry = app.push else { continue }
            let key = "apps[\(a)].push"
            if entry.alert.isEmpty && !entry.background {
                throw fail(key, "sends nothing: give it alert texts, or background: true")
            }
            for language in entry.alert.keys.sorted() {
                guard !language.isEmpty, (try? PushRegistrationRules.language(language)) == language else {
                    throw fail("\(key).alert.\(language)", "must be a language code (2 to 8 lower-case letters, e.g. ca)")
                }
                guard let template = entry.alert[language], !template.title.isEmpty || !template.body.isEmpty else {
                    throw fail("\(key).alert.\(language)", "needs a title or a body")
                }
            }
            if let language = entry.defaultLanguage, entry.alert[language] == nil {
                throw fail("\(key).default_language", "\"\(language)\" has no alert text: add alert.\(language) or pick one of \(entry.alert.keys.sorted())")
            }
            if let environment = entry.apnsEnvironment, !["production", "sandbox"].contains(environment) {
                throw fail("\(key).apns_environment", "must be production or sandbox, got \"\(environment)\"")
            }
            let (topic, package) = pushSettings(of: app)
            if let topic, !StoreProductID.isValid(topic) {
                throw fail("\(key).apns_topic", "must be the app's bundle id, e.g. cat.elpunt.quiosc")
            }
            if let package, !StoreProductID.isValid(package) {
                throw fail("\(key).fcm_package", "must be the app's Android package name, e.g. cat.elpunt.quiosc")
            }
            if let quiet = entry.quietHours {
                guard QuietHours(from: quiet.from, to: quiet.to, timeZoneID: quiet.timeZone) != nil else {
                    if TimeZone(identifier: quiet.timeZone) == nil {
                        throw fail("\(key).quiet_hours.time_zone", "must be an IANA time zone, e.g. Europe/Madrid; got \"\(quiet.timeZone)\"")
                    }
                    throw fail("\(key).quiet_hours", "from and to must be HH:mm (00:00 to 23:59) and differ; got \"\(quiet.from)\" and \"\(quiet.to)\"")
                }
            }
        }
    }

    private static func isAppleID(_ text: String) -> Bool {
        (1...32).contains(text.utf8.count) && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) }
    }

    private static func isBaseURL(_ text: String, https: Bool) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme, url.host != nil, url.query == nil,
              url.path.isEmpty || url.path == "/" else { return false }
        return scheme == "https" || (!https && scheme == "http")
    }
}
