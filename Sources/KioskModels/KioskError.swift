/// What the kiosk's rules refuse. Each case maps to one application fault (see `KioskRPC`).
public enum KioskError: Error, Sendable, Hashable {
    /// Fault 1.
    case unknownApp(String)
    /// Fault 2: the identity key was not issued by this server for this app and device.
    case invalidIdentity
    /// Fault 3.
    case editionNotOffered(editionID: Int, appKey: String)
    /// Fault 4.
    case noPublishedIssue(editionID: Int, date: IssueDate?)
    /// Fault 5.
    case notEntitled(editionID: Int, date: IssueDate)
    /// Fault 6: the same whether the user exists or not.
    case wrongCredentials
    /// Fault 7.
    case tooManySignInAttempts(retryAfterSeconds: Int)
    /// Fault 11: this client used its search budget (`ClientBudget`).
    case tooManySearches(retryAfterSeconds: Int)
    /// Fault 11: this client used its budget of purchase checks (`ClientBudget`).
    case tooManyPurchaseChecks(retryAfterSeconds: Int)
    /// A request the rules cannot serve, e.g. an unknown `seccioQ` (a parameter fault, -32602).
    case invalidArgument(parameter: String, problem: String)
}
