/// The push services a reader app registers with: the word the wire and the store use.
public enum PushPlatform: String, Sendable, Hashable, Codable, CaseIterable {
    /// Apple Push Notification service: the token is the device token in hexadecimal.
    case apns
    /// Firebase Cloud Messaging: the token is the registration token.
    case fcm

    /// Reads the wire's word in any case; nil for any other.
    public init?(wire text: String) {
        self.init(rawValue: text.lowercased())
    }
}

/// One device of an app that wants push notifications: its token at a push service, tied to the identity
/// that registered it. An app has one registration per device; a new token replaces the old one.
public struct PushRegistration: Sendable, Hashable {
    /// The store's id, increasing: fan-out pages through registrations by it. 0 before it is stored.
    public var id: Int64
    public var appKey: String
    public var deviceKey: String
    /// The identity key (`iden_key`) that registered it.
    public var identityKey: String
    /// The identity's reader when it registered (0: anonymous); decides what the device may read.
    public var userID: Int
    public var platform: PushPlatform
    public var token: String
    /// The editions it asked for; empty: every edition of the app it may read.
    public var editions: [Int]
    /// The language of the alert text (`ca`, `es`, …); empty: the app's default.
    public var language: String
    /// Unix seconds.
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(id: Int64 = 0, appKey: String, deviceKey: String, identityKey: String, userID: Int, platform: PushPlatform,
                token: String, editions: [Int], language: String = "", createdAt: Int64, updatedAt: Int64) {
        self.id = id; self.appKey = appKey; self.deviceKey = deviceKey; self.identityKey = identityKey; self.userID = userID
        self.platform = platform; self.token = token; self.editions = editions; self.language = language
        self.createdAt = createdAt; self.updatedAt = updatedAt
    }

    /// Whether it asked for `editionID` by name (not through an empty list).
    public func names(editionID: Int) -> Bool { editions.contains(editionID) }
}

/// What a registration's input breaks; nothing is stored. Mapped to a parameter fault naming the parameter.
public enum PushRegistrationError: Error, Sendable, Hashable, CustomStringConvertible {
    case platform(String)
    case token(platform: PushPlatform, problem: String)
    case editions(String)
    case language(String)

    /// The wire's name of the parameter at fault.
    public var parameter: String {
        switch self {
        case .platform: "plataforma"
        case .token: "token"
        case .editions: "edicions"
        case .language: "idioma"
        }
    }

    public var description: String {
        switch self {
        case .platform(let text):
            "unknown push platform \"\(text.prefix(20))\": apns or fcm"
        case .token(let platform, let problem):
            "not a\(platform == .apns ? "n APNs device" : " FCM registration") token: \(problem)"
        case .editions(let problem):
            problem
        case .language(let text):
            "\"\(text.prefix(20))\" is not a language code (2 to 8 letters, e.g. ca)"
        }
    }
}

/// The rules a registration's input must follow, before anything is stored.
public enum PushRegistrationRules {
    /// APNs device tokens: hexadecimal, 64 digits today, up to 200 allowed for.
    public static let apnsTokenLength = 64...200
    /// FCM registration tokens: printable ASCII.
    public static let fcmTokenLength = 1...4096
    /// At most this many editions in one registration.
    public static let maximumEditions = 100

    /// Checks `token`'s shape for `platform`.
    public static func checkToken(_ token: String, platform: PushPlatform) throws(PushRegistrationError) {
        let bytes = token.utf8
        switch platform {
        case .apns:
            guard apnsTokenLength.contains(bytes.count) else {
                throw .token(platform: platform, problem: "\(bytes.count) characters, expected \(apnsTokenLength.lowerBound) to \(apnsTokenLength.upperBound)")
            }
            guard bytes.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 70) || ($0 >= 97 && $0 <= 102) }) else {
                throw .token(platform: platform, problem: "expected hexadecimal digits only")
            }
        case .fcm:
            guard fcmTokenLength.contains(bytes.count) else {
                throw .token(platform: platform, problem: "\(bytes.count) characters, expected \(fcmTokenLength.lowerBound) to \(fcmTokenLength.upperBound)")
            }
            guard bytes.allSatisfy({ $0 > 32 && $0 < 127 }) else {
                throw .token(platform: platform, problem: "expected printable ASCII without spaces")
            }
        }
    }

    /// The stored form of a token: APNs tokens in lower case (Apple's are case-insensitive), FCM's as sent.
    public static func normalized(_ token: String, platform: PushPlatform) -> String {
        platform == .apns ? token.lowercased() : token
    }

    /// A language code, lower case; "" stays "" (the app's default).
    public static func language(_ text: String) throws(PushRegistrationError) -> String {
        let code = text.lowercased()
        guard code.isEmpty || ((2...8).contains(code.utf8.count) && code.utf8.allSatisfy({ ($0 >= 97 && $0 <= 122) || $0 == 45 })) else {
            throw .language(text)
        }
        return code
    }
}

/// Where push registrations are kept, and the publish fan-out's progress. Safe across processes and
/// instances: a batch of devices is claimed by one worker, in a transaction committed before anything is sent.
public protocol PushRegistry: Sendable {
    /// Stores `registration` as the one of its device in its app (replacing the one there, keeping its creation
    /// time) and removes the token from any other device of the app. Returns it as stored.
    func savePushRegistration(_ registration: PushRegistration) async throws -> PushRegistration
    /// Removes the device's registration (only if its token is `token`, when given); false when none was removed.
    func deletePushRegistration(appKey: String, deviceKey: String, token: String?) async throws -> Bool
    /// The device's registration in the app.
    func pushRegistration(appKey: String, deviceKey: String) async throws -> PushRegistration?
    /// Removes registrations of tokens a push service called dead (`PushDeadToken`); returns how many went.
    /// A device that registered a new token since keeps it.
    func removeDeadPushTokens(_ tokens: [PushDeadToken]) async throws -> Int
    /// Claims the next batch of a publish's fan-out (see `PushBatch`), or nil when no event waits.
    func claimPushBatch(_ request: PushBatchRequest) async throws -> PushBatch?
}

/// A token a push service called dead.
public struct PushDeadToken: Sendable, Hashable {
    public var appKey: String
    public var platform: PushPlatform
    public var token: String
    public init(appKey: String, platform: PushPlatform, token: String) {
        self.appKey = appKey; self.platform = platform; self.token = token
    }
}
