import KioskGoogleAuth

/// Google could not answer now (`GoogleUnavailable`, shared with the other Google clients): its token, API or
/// key endpoint is unreachable, slow, overloaded (5xx, 429), or refused our own credentials.
///
/// It says nothing about the purchase: the caller answers "try again later" (a push route answers 5xx so
/// Pub/Sub redelivers), never "refused".
public typealias GooglePlayUnavailable = GoogleUnavailable
