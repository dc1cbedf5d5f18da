/// Push registrations: what `registrarAvisos` and `esborrarAvisos` mean, whatever the wire.
extension KioskService {
    /// `registrarAvisos`: stores the device's push token for the identity, replacing the device's earlier one
    /// (and taking the token from another device of the app that had it). `editions` empty: every edition
    /// the device may read; else only those, each one the app offers. `language` picks the alert's text
    /// (empty: the app's default). Bad input throws `PushRegistrationError` or `KioskError.editionNotOffered`
    /// and stores nothing.
    public func registerPush(appKey: String, deviceKey: String, identityKey: String, platform: String, token: String,
                             editions: [Int], language: String = "") async throws -> PushRegistration {
        try await requireApp(appKey)
        let identity = try await trustedIdentity(appKey: appKey, deviceKey: deviceKey, identityKey: identityKey)
        guard let platform = PushPlatform(wire: platform) else { throw PushRegistrationError.platform(platform) }
        try PushRegistrationRules.checkToken(token, platform: platform)
        let language = try PushRegistrationRules.language(language)
        let wanted = Array(Set(editions)).sorted()
        guard wanted.count <= PushRegistrationRules.maximumEditions else {
            throw PushRegistrationError.editions("at most \(PushRegistrationRules.maximumEditions) editions, got \(wanted.count)")
        }
        for editionID in wanted where try await store.offeredEdition(appKey: appKey, editionID: editionID) == nil {
            throw KioskError.editionNotOffered(editionID: editionID, appKey: appKey)
        }
        let time = clock.now
        return try await store.savePushRegistration(PushRegistration(
            appKey: appKey, deviceKey: identity.deviceKey, identityKey: identity.key, userID: identity.userID, platform: platform,
            token: PushRegistrationRules.normalized(token, platform: platform), editions: wanted, language: language,
            createdAt: time, updatedAt: time))
    }

    /// `esborrarAvisos`: removes the device's registration (only while its token is `token`, when given); false
    /// when there was none to remove.
    public func unregisterPush(appKey: String, deviceKey: String, identityKey: String, token: String? = nil) async throws -> Bool {
        try await requireApp(appKey)
        let identity = try await trustedIdentity(appKey: appKey, deviceKey: deviceKey, identityKey: identityKey)
        guard let registered = try await store.pushRegistration(appKey: appKey, deviceKey: identity.deviceKey) else { return false }
        let token = token.flatMap { $0.isEmpty ? nil : PushRegistrationRules.normalized($0, platform: registered.platform) }
        return try await store.deletePushRegistration(appKey: appKey, deviceKey: identity.deviceKey, token: token)
    }
}
