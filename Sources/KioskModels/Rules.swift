/// Who may download an issue: the only three ways in.
public enum Entitlement: Sendable, Hashable {
    case freeLine
    case subscription(until: IssueDate)
    case demoGrant

    /// The entitlement that does not need a demo grant, if any.
    public static func withoutDemo(line: TariffLine, subscriptions: [Subscription], issueDate: IssueDate) -> Entitlement? {
        if line.access == .free { return .freeLine }
        if let covering = subscriptions.first(where: { $0.editionID == line.editionID && $0.covers(issueDate) }) {
            return .subscription(until: covering.until)
        }
        return nil
    }
}

/// How many demos a device may consume: the app's quota, lowered (never raised) by a positive client maximum.
public enum DemoQuota {
    public static func effective(appQuota: Int, clientMaximum: Int) -> Int {
        clientMaximum > 0 ? min(appQuota, clientMaximum) : max(appQuota, 0)
    }
}

/// When repeated failed sign-ins lock a username or a device out.
public struct SignInPolicy: Sendable, Hashable {
    /// Failures allowed within `windowSeconds`; the next attempt is refused until the oldest falls out.
    public var maxFailures: Int
    public var windowSeconds: Int
    public init(maxFailures: Int = 5, windowSeconds: Int = 900) {
        self.maxFailures = maxFailures; self.windowSeconds = windowSeconds
    }

    public func isLockedOut(failures: Int) -> Bool { failures >= maxFailures }

    /// Locked out when the username's failures or the device's reach `maxFailures`.
    public func isLockedOut(failures: (username: Int, device: Int)) -> Bool {
        isLockedOut(failures: max(failures.username, failures.device))
    }
}

/// Bounds on `getDarrersEdicio`.
public enum IssueListing {
    public static let defaultCount = 7
    public static let countRange = 1...100
}
