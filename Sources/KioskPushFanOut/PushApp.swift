import KioskModels
import KioskPush

/// An app as the fan-out sends to it: what its devices are told, and who it is at each push service.
public struct PushApp: Sendable {
    public var policy: AppPushPolicy
    /// The APNs topic (bundle id); nil: its Apple devices are not sent to.
    public var apnsTopic: String?
    /// Its Apple devices run builds for APNs's Sandbox (Xcode builds) rather than Production.
    public var apnsSandbox: Bool
    /// The Android package (FCM's `restricted_package_name`); nil: its Android devices are not sent to.
    public var fcmPackage: String?

    public init(policy: AppPushPolicy, apnsTopic: String?, apnsSandbox: Bool = false, fcmPackage: String?) {
        self.policy = policy; self.apnsTopic = apnsTopic; self.apnsSandbox = apnsSandbox; self.fcmPackage = fcmPackage
    }

    /// The `PushDevice.app` a registration of `platform` is sent as; nil when the app has none for it.
    func address(_ platform: PushPlatform) -> String? {
        switch platform {
        case .apns: apnsTopic
        case .fcm: fcmPackage
        }
    }
}

/// The senders the configuration gave; a service without one is not sent to.
public struct PushSenders: Sendable {
    public var apnsProduction: (any PushSender)?
    public var apnsSandbox: (any PushSender)?
    public var fcm: (any PushSender)?

    public init(apnsProduction: (any PushSender)? = nil, apnsSandbox: (any PushSender)? = nil, fcm: (any PushSender)? = nil) {
        self.apnsProduction = apnsProduction; self.apnsSandbox = apnsSandbox; self.fcm = fcm
    }

    func sender(_ platform: PushPlatform, for app: PushApp) -> (any PushSender)? {
        switch platform {
        case .apns: app.apnsSandbox ? apnsSandbox : apnsProduction
        case .fcm: fcm
        }
    }
}
