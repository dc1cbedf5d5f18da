import KioskModels
import XMLRPC

/// The one mapping from the kiosk's domain errors to application faults (SPEC.md).
extension KioskError: XMLRPCFaultConvertible {
    public var xmlrpcFault: XMLRPCFault {
        switch self {
        case .unknownApp(let key):
            XMLRPCFault(code: 1, message: "unknown appkey \"\(key)\"")
        case .invalidIdentity:
            XMLRPCFault(code: 2, message: "idenkey was not issued by this server for this app and device; call registrar")
        case .editionNotOffered(let edition, let app):
            XMLRPCFault(code: 3, message: "edition \(edition) is not offered by app \"\(app)\"")
        case .noPublishedIssue(let edition, let date):
            XMLRPCFault(code: 4, message: "no published issue of edition \(edition)" + (date.map { " on \($0)" } ?? ""))
        case .notEntitled(let edition, let date):
            XMLRPCFault(code: 5, message: "not entitled to download edition \(edition) of \(date): no subscription, free line or demo")
        case .wrongCredentials:
            XMLRPCFault(code: 6, message: "wrong username or password")
        case .tooManySignInAttempts(let seconds):
            XMLRPCFault(code: 7, message: "too many failed sign-ins; try again in \(max(1, seconds / 60)) minutes")
        case .tooManySearches(let seconds):
            XMLRPCFault(code: 11, message: "too many searches from this address; try again in \(seconds) seconds")
        case .tooManyPurchaseChecks(let seconds):
            XMLRPCFault(code: 11, message: "too many purchases to verify from this address; try again in \(seconds) seconds")
        case .invalidArgument(let parameter, let problem):
            .invalidParameter(parameter, problem)
        }
    }
}

/// The one mapping from the purchase rules' errors to application faults.
extension PurchaseError: XMLRPCFaultConvertible {
    public var xmlrpcFault: XMLRPCFault {
        switch self {
        case .unverifiable(let reason):
            XMLRPCFault(code: 8, message: "the purchase cannot be verified: \(reason)")
        case .anotherAccount(let reason):
            XMLRPCFault(code: 9, message: reason)
        case .storeUnavailable(let reason):
            XMLRPCFault(code: 10, message: "the store could not be reached; try again later (\(reason))")
        case .noCreditLeft:
            XMLRPCFault(code: 5, message: "no credit left: buy a pack of issues, or subscribe")
        }
    }
}

/// The one mapping from push registration input errors to faults: a parameter fault naming the parameter.
extension PushRegistrationError: XMLRPCFaultConvertible {
    public var xmlrpcFault: XMLRPCFault { .invalidParameter(parameter, description) }
}
