/// The App Store environment that signed a transaction, renewal or notification.
///
/// A struct rather than an enum so that an environment Apple adds later is kept as its raw string.
public struct AppleEnvironment: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let production = AppleEnvironment(rawValue: "Production")
    public static let sandbox = AppleEnvironment(rawValue: "Sandbox")
    /// StoreKit testing in Xcode: signed by Xcode, never by the App Store, so it never verifies here.
    public static let xcode = AppleEnvironment(rawValue: "Xcode")
    /// Local StoreKit testing: signed locally, never by the App Store, so it never verifies here.
    public static let localTesting = AppleEnvironment(rawValue: "LocalTesting")

    public var description: String { rawValue }
}

/// The app whose purchases are verified: what signed data must name to be accepted.
public struct AppleStoreIdentity: Hashable, Sendable {
    /// The app's bundle identifier, e.g. `com.example.kiosk`.
    public var bundleId: String
    /// The app's Apple ID (the number App Store Connect shows). Production notifications must name it;
    /// without it, no Production notification is accepted.
    public var appAppleId: Int64?
    /// The environments accepted, e.g. `[.production]` or `[.production, .sandbox]`.
    public var environments: Set<AppleEnvironment>

    public init(bundleId: String, appAppleId: Int64?, environments: Set<AppleEnvironment>) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environments = environments
    }
}
