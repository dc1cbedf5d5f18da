import KioskIntegers

/// The kiosk's rules over a store: what each wire method means, independent of the wire.
public struct KioskService: Sendable {
    public let store: any KioskStore
    public let identityKeys: IdentityKeyIssuer
    public let passwords: any PasswordHasher
    public let signInPolicy: SignInPolicy
    public let clock: any KioskClock
    /// The catalogue reads `getEdicio` makes, kept under the catalogue version.
    public let catalogueMemo: CatalogueMemo
    /// How often each client (`RequestClient.address`) may search.
    public let searchBudget: ClientBudget
    /// How many purchases each client may have verified (`registrarCompra`, `restaurarCompres`).
    public let purchaseCheckBudget: ClientBudget
    /// Hears what the rules decide (demos, downloads, sightings, purchases).
    public let observer: any KioskServiceObserver
    /// Checks what apps and stores send about purchases (`KioskPurchases`).
    public let stores: any StoreVerifying
    /// On how many devices an anonymous reader's purchase opens before the reader must sign in.
    public let anonymousDeviceLimit: Int

    public init(store: any KioskStore, identityKeys: IdentityKeyIssuer, passwords: any PasswordHasher,
                signInPolicy: SignInPolicy, clock: any KioskClock = SystemClock(), catalogueMemo: CatalogueMemo = CatalogueMemo(byteLimit: 0),
                searchBudget: ClientBudget = .unlimited, observer: any KioskServiceObserver = UnobservedKioskService(),
                stores: any StoreVerifying = NoStores(), anonymousDeviceLimit: Int = 5,
                purchaseCheckBudget: ClientBudget = .unlimited) {
        self.store = store; self.identityKeys = identityKeys; self.passwords = passwords
        self.signInPolicy = signInPolicy; self.clock = clock
        self.catalogueMemo = catalogueMemo; self.searchBudget = searchBudget; self.observer = observer
        self.stores = stores; self.anonymousDeviceLimit = anonymousDeviceLimit
        self.purchaseCheckBudget = purchaseCheckBudget
    }

    // MARK: Catalogue

    /// `getEdicions`: the app's editions that have a published issue, by line order. (The caller's
    /// `idenkey` is noted as seen by the wire method, for made and kept answers alike: `noteSeen`.)
    public func editions(appKey: String) async throws -> [EditionListing] {
        let listings = try await store.editionListings(appKey: appKey)
        if listings.isEmpty { _ = try await requireApp(appKey) }
        return listings
    }

    /// `getDarrersEdicio`: up to `limit` issues of an edition the app offers, around `date`.
    public func issues(appKey: String, editionID: Int, from date: IssueDate?,
                       direction: ListingDirection, limit: Int) async throws -> (OfferedEdition, [IssueSummary]) {
        let offered = try await requireOffered(appKey: appKey, editionID: editionID)
        let issues = try await store.issues(editionID: editionID, from: date, direction: direction, limit: limit)
        return (offered, issues)
    }

    /// A page that matched a search, with the edition it belongs to.
    public struct SearchResult: Sendable, Hashable {
        public var offered: OfferedEdition
        public var hit: PageSearchHit
    }

    /// Who searches, which decides which hits carry an excerpt.
    public enum Searcher: Sendable, Hashable {
        /// An app, with the identity key it sent (recorded as seen as for `editions`; trusted, as for
        /// `getEdicio`, only when this server issued it for this app).
        case app(identityKey: String)
        /// A reader of the web kiosk: the signed-in user, nil when anonymous.
        case webReader(userID: Int?)
    }

    /// `cercar`: published pages of the editions the app offers (or of `editionID`, which it must offer)
    /// whose text matches `text`, newest first. Only hits on issues the searcher may open (a free line,
    /// or a subscription covering the issue's date) carry an excerpt; the others keep edition, date and
    /// page with an empty one, so searching never reveals paid text. A text the query language cannot
    /// use is `KioskError.invalidArgument` naming `text`; a client over its `searchBudget` gets
    /// `KioskError.tooManySearches`.
    public func search(appKey: String, by searcher: Searcher, text: String, editionID: Int?,
                       from: IssueDate?, through: IssueDate?, limit: Int) async throws -> [SearchResult] {
        let query: SearchQuery
        do {
            query = try SearchQuery(parsing: text)
        } catch {
            throw KioskError.invalidArgument(parameter: "text", problem: error.description)
        }
        if let wait = searchBudget.take(client: RequestClient.address, now: Double(clock.now)) {
            throw KioskError.tooManySearches(retryAfterSeconds: wait)
        }
        let offered: [OfferedEdition]
        if let editionID {
            offered = [try await requireOffered(appKey: appKey, editionID: editionID)]
        } else {
            offered = try await store.editionListings(appKey: appKey).map(\.offered)
            if offered.isEmpty { try await requireApp(appKey) }
        }
        if case .app(let identityKey) = searcher { noteSeen(appKey: appKey, identityKey: identityKey) }
        if offered.isEmpty { return [] }
        if let from, let through, from > through { return [] }
        let byID = Dictionary(offered.map { ($0.edition.id, $0) }, uniquingKeysWith: { first, _ in first })
        let hits = try await store.searchPages(PageSearch(query: query, editionIDs: offered.map(\.edition.id),
                                                          from: from, through: through, limit: limit))
        var subscriptions: [Subscription]?
        var results: [SearchResult] = []
        for hit in hits {
            guard let offered = byID[hit.editionID] else { continue }
            var result = SearchResult(offered: offered, hit: hit)
            if offered.line.access != .free {
                if subscriptions == nil { subscriptions = try await self.subscriptions(of: searcher, appKey: appKey) }
                if Entitlement.withoutDemo(line: offered.line, subscriptions: subscriptions ?? [], issueDate: hit.date) == nil {
                    result.hit.fragment = ""
                }
            }
            results.append(result)
        }
        return results
    }

    /// The subscriptions of the user behind a searcher: none for an anonymous reader, or for a key this
    /// server did not issue for `appKey`.
    private func subscriptions(of searcher: Searcher, appKey: String) async throws -> [Subscription] {
        let userID: Int
        switch searcher {
        case .webReader(let id?): userID = id
        case .webReader(nil): return []
        case .app(let identityKey):
            guard !identityKey.isEmpty, let identity = try await store.identity(key: identityKey), identity.appKey == appKey,
                  identity.imported || identityKeys.isValid(identityKey, appKey: appKey, deviceKey: identity.deviceKey,
                                                            userID: identity.userID)
            else { return [] }
            userID = identity.userID
        }
        return userID == 0 ? [] : try await store.subscriptions(userID: userID)
    }

    /// Active devices are counted by the key they present, per app and day (answers kept between calls
    /// still count their callers through this).
    public func noteSeen(appKey: String, identityKey: String) {
        guard !identityKey.isEmpty else { return }
        let kept = identityKey.utf8.count <= 200 ? identityKey : String(decoding: identityKey.utf8.prefix(200), as: UTF8.self)
        if store.recordActivity(appKey: appKey, identityKey: kept, at: clock.now) == .overLimit {
            observer.sightingUnrecorded(appKey: appKey)
        }
    }

    /// `getEdicio`: the issue's contents when the identity behind `identityKey` is entitled; records the download.
    ///
    /// `claimedUserID` is recorded only. On a free line no identity is needed (old apps send their
    /// device id as the key); elsewhere the key must be one this server issued for this app.
    public func openIssue(appKey: String, identityKey: String, editionID: Int, date: IssueDate,
                          claimedUserID: String, os: String) async throws -> (OfferedEdition, IssueContents) {
        let (offered, contents) = try await offeredIssue(appKey: appKey, editionID: editionID, date: date)
        let identity = identityKey.isEmpty ? nil : try await store.identity(key: identityKey)
        let trusted = identity.flatMap { $0.appKey == appKey ? $0 : nil }
        let time = clock.now
        if offered.line.access != .free {
            guard let trusted else { throw KioskError.invalidIdentity }
            let subscriptions = trusted.userID == 0 ? [] : try await store.subscriptions(userID: trusted.userID)
            if Entitlement.withoutDemo(line: offered.line, subscriptions: subscriptions, issueDate: date) == nil,
               try await store.purchasesGrant(IssueRef(editionID: editionID, date: date), appKey: appKey,
                                        userID: trusted.userID, deviceKey: trusted.deviceKey, at: time) == false {
                guard try await store.useDemoGrant(appKey: appKey, deviceKey: trusted.deviceKey,
                                                   editionID: editionID, date: date, at: time)
                else { throw KioskError.notEntitled(editionID: editionID, date: date) }
            }
        }
        try await store.recordDownload(DownloadRecord(
            editionID: editionID, date: date, appKey: appKey, identityKey: identityKey,
            userID: trusted?.userID ?? 0, claimedUserID: claimedUserID,
            deviceKey: trusted?.deviceKey ?? "", os: os, time: time))
        observer.issueDownloaded(appKey: appKey)
        noteSeen(appKey: appKey, identityKey: identityKey)
        return (offered, contents)
    }

    /// The OS recorded for downloads from the reader web kiosk.
    public static let webOS = "web"

    /// The reader web kiosk's issue page: the issue's contents when `userID` (nil: an anonymous reader)
    /// is entitled, decided as for `getEdicio` — a free line, or a subscription valid on `date`; with no
    /// device there is no demo grant. Records the download with the `web` OS.
    public func openIssueOnWeb(appKey: String, userID: Int?, editionID: Int,
                               date: IssueDate) async throws -> (OfferedEdition, IssueContents) {
        let (offered, contents) = try await offeredIssue(appKey: appKey, editionID: editionID, date: date)
        var held: [Subscription] = []
        if let userID { held = try await store.subscriptions(userID: userID) }
        if Entitlement.withoutDemo(line: offered.line, subscriptions: held, issueDate: date) == nil {
            guard let userID, try await store.purchasesGrant(IssueRef(editionID: editionID, date: date), appKey: appKey,
                                                       userID: userID, deviceKey: "", at: clock.now)
            else { throw KioskError.notEntitled(editionID: editionID, date: date) }
        }
        try await store.recordDownload(DownloadRecord(
            editionID: editionID, date: date, appKey: appKey, identityKey: "", userID: userID ?? 0,
            claimedUserID: "", deviceKey: "", os: Self.webOS, time: clock.now))
        observer.issueDownloaded(appKey: appKey)
        return (offered, contents)
    }

    /// The editions `userID` subscribes to among those `appKey` offers, with the last date each covers.
    public func subscriptions(appKey: String, userID: Int) async throws -> [(edition: OfferedEdition, until: IssueDate)] {
        let subscriptions = try await store.subscriptions(userID: userID)
        var result: [(edition: OfferedEdition, until: IssueDate)] = []
        for editionID in Set(subscriptions.map(\.editionID)).sorted() {
            guard let offered = try await store.offeredEdition(appKey: appKey, editionID: editionID),
                  let until = subscriptions.filter({ $0.editionID == editionID }).map(\.until).max() else { continue }
            result.append((offered, until))
        }
        return result.sorted { $0.edition.line.order < $1.edition.line.order }
    }

    // MARK: Sign-in

    /// The result of `registrar` and `consumirDemo`.
    public struct Registration: Sendable, Hashable {
        public var user: User?
        public var identity: DeviceIdentity
        public var demosConsumed: Int
        /// Editions this identity may download, with the subscription end (nil for a free line).
        public var entitlements: [(edition: OfferedEdition, until: IssueDate?)]

        public static func == (lhs: Registration, rhs: Registration) -> Bool {
            lhs.user == rhs.user && lhs.identity == rhs.identity && lhs.demosConsumed == rhs.demosConsumed
                && lhs.entitlements.map(\.edition) == rhs.entitlements.map(\.edition)
                && lhs.entitlements.map(\.until) == rhs.entitlements.map(\.until)
        }
        public func hash(into hasher: inout Hasher) { hasher.combine(identity) }
    }

    /// `registrar`: signs a device in, with a user when credentials are given.
    public func register(appKey: String, deviceKey: String, username: String, password: String,
                         deviceInfo: [String: String], os: String) async throws -> Registration {
        _ = try await requireApp(appKey)
        guard !deviceKey.isEmpty else { throw KioskError.invalidArgument(parameter: "disp_key", problem: "must not be empty") }
        let user = username.isEmpty && password.isEmpty
            ? nil : try await signIn(username: username, password: password, deviceKey: deviceKey)
        let identity = DeviceIdentity(
            key: identityKeys.key(appKey: appKey, deviceKey: deviceKey, userID: user?.id ?? 0),
            appKey: appKey, deviceKey: deviceKey, userID: user?.id ?? 0, deviceInfo: deviceInfo, os: os)
        try await store.saveIdentity(identity, at: clock.now, retiringImported: true)
        // What the device bought anonymously becomes the reader's.
        if let user { try await store.movePurchases(appKey: appKey, deviceKey: deviceKey, toUser: user.id, at: clock.now) }
        noteSeen(appKey: appKey, identityKey: identity.key)
        return try await registration(identity: identity, user: user)
    }

    /// `consumirDemo`: one free download when the device has demos left.
    public func consumeDemo(appKey: String, deviceKey: String, identityKey: String, deviceInfo: [String: String],
                            os: String, clientMaximum: Int) async throws -> (Registration, DemoOutcome) {
        let app = try await requireApp(appKey)
        guard !deviceKey.isEmpty else { throw KioskError.invalidArgument(parameter: "disp_key", problem: "must not be empty") }
        var identity: DeviceIdentity
        var user: User?
        if identityKey.isEmpty {
            identity = DeviceIdentity(key: identityKeys.key(appKey: appKey, deviceKey: deviceKey, userID: 0),
                                      appKey: appKey, deviceKey: deviceKey, userID: 0, deviceInfo: deviceInfo, os: os)
        } else {
            // An imported (2012) key is trusted as stored; a Kiosk key must also be the one derived for it.
            guard let known = try await store.identity(key: identityKey), known.appKey == appKey,
                  known.deviceKey == deviceKey,
                  known.imported || identityKeys.isValid(identityKey, appKey: appKey, deviceKey: deviceKey, userID: known.userID)
            else { throw KioskError.invalidIdentity }
            identity = known
            identity.deviceInfo = deviceInfo.isEmpty ? known.deviceInfo : deviceInfo
            identity.os = os.isEmpty ? known.os : os
            user = known.userID == 0 ? nil : try await store.user(id: known.userID)
        }
        let time = clock.now
        try await store.saveIdentity(identity, at: time, retiringImported: false)
        noteSeen(appKey: appKey, identityKey: identity.key)
        let quota = DemoQuota.effective(appQuota: app.demoQuota, clientMaximum: clientMaximum)
        let outcome = try await store.consumeDemo(appKey: appKey, deviceKey: deviceKey, quota: quota, at: time)
        observer.demoConsumed(appKey: appKey, granted: outcome.granted)
        var registration = try await registration(identity: identity, user: user)
        registration.demosConsumed = outcome.consumed
        return (registration, outcome)
    }

    /// `hashQuiosc` with credentials: the signed-in user, or a fault.
    public func authenticate(appKey: String, username: String, password: String) async throws -> User {
        _ = try await requireApp(appKey)
        return try await signIn(username: username, password: password, deviceKey: nil)
    }

    /// Checks credentials under the lock-out policy; the same answer and cost for unknown users and wrong
    /// passwords. A legacy hash that matches is replaced by bcrypt before the sign-in is answered.
    private func signIn(username: String, password: String, deviceKey: String?) async throws -> User {
        let time = clock.now
        // The attempt counts as a failure from before the check until it succeeds.
        guard let attempt = try await store.beginSignInAttempt(
            username: username, deviceKey: deviceKey, since: time - Int64(widening: signInPolicy.windowSeconds),
            maxFailures: signInPolicy.maxFailures, at: time)
        else { throw KioskError.tooManySignInAttempts(retryAfterSeconds: signInPolicy.windowSeconds) }
        let user = username.isEmpty ? nil : try await store.user(username: username)
        let matches = try await passwords.verify(password, against: user?.passwordHash, username: username)
        guard var user, matches, !password.isEmpty else { throw KioskError.wrongCredentials }
        try await store.forgetSignInAttempt(attempt)
        if StoredPasswordHash(user.passwordHash)?.isLegacy == true {
            let upgraded = try await passwords.hash(password)
            try await store.replacePasswordHash(userID: user.id, from: user.passwordHash, to: upgraded)
            user.passwordHash = upgraded
        }
        return user
    }

    func registration(identity: DeviceIdentity, user: User?) async throws -> Registration {
        let listings = try await store.editionListings(appKey: identity.appKey)
        var subscriptions: [Subscription] = []
        if let user { subscriptions = try await store.subscriptions(userID: user.id) }
        let purchased = try await purchasedSubscriptions(
            appKey: identity.appKey, userID: identity.userID, deviceKey: identity.deviceKey,
            subscriberEditions: listings.map(\.offered.line).filter { $0.access == .subscribers }.map(\.editionID))
        var entitlements: [(edition: OfferedEdition, until: IssueDate?)] = []
        for listing in listings {
            let offered = listing.offered
            if offered.line.access == .free {
                entitlements.append((offered, nil))
            } else if let until = (subscriptions.filter({ $0.editionID == offered.edition.id }).map(\.until)
                                   + [purchased[offered.edition.id]].compactMap { $0 }).max() {
                entitlements.append((offered, until))
            }
        }
        let demos = try await store.demosConsumed(appKey: identity.appKey, deviceKey: identity.deviceKey)
        return Registration(user: user, identity: identity, demosConsumed: demos, entitlements: entitlements)
    }

    // MARK: Lookups

    @discardableResult
    public func requireApp(_ appKey: String) async throws -> App {
        guard let app = try await store.app(key: appKey) else { throw KioskError.unknownApp(appKey) }
        return app
    }

    /// The app's web kiosk as stored (nil: it keeps Kiosk's own), through the memo: read again only once
    /// the catalogue version moved (a console change, a sync, on any instance).
    public func storedWebKiosk(appKey: String) async throws -> AppWebKiosk? {
        let store = self.store, memo = catalogueMemo
        let version = memo.byteLimit > 0 ? try await CatalogueSnapshot.version(of: store) : 0
        return try await memo.webKiosk(appKey: appKey, version: version, read: { try await store.webKiosk(appKey: appKey) })
    }

    /// The app's offer of the edition and the issue's contents, through the memo (the catalogue version
    /// is read only when it keeps anything); refused as `requireOffered` refuses, or `noPublishedIssue`.
    private func offeredIssue(appKey: String, editionID: Int, date: IssueDate) async throws -> (OfferedEdition, IssueContents) {
        let store = self.store, memo = catalogueMemo
        let version = memo.byteLimit > 0 ? try await CatalogueSnapshot.version(of: store) : 0
        let offered = try await required(memo.offeredEdition(appKey: appKey, editionID: editionID, version: version, read: {
            try await store.offeredEdition(appKey: appKey, editionID: editionID)
        }), appKey: appKey, editionID: editionID)
        guard let contents = try await memo.issueContents(editionID: editionID, date: date, version: version, read: {
            try await store.issueContents(editionID: editionID, date: date)
        }) else {
            throw KioskError.noPublishedIssue(editionID: editionID, date: date)
        }
        return (offered, contents)
    }

    private func requireOffered(appKey: String, editionID: Int) async throws -> OfferedEdition {
        try await required(store.offeredEdition(appKey: appKey, editionID: editionID), appKey: appKey, editionID: editionID)
    }

    /// `offered`, or `unknownApp` when the app does not exist, else `editionNotOffered`.
    private func required(_ offered: OfferedEdition?, appKey: String, editionID: Int) async throws -> OfferedEdition {
        if let offered { return offered }
        try await requireApp(appKey)
        throw KioskError.editionNotOffered(editionID: editionID, appKey: appKey)
    }
}

/// What the kiosk's rules decide, reported as they decide it; metrics plug in here.
public protocol KioskServiceObserver: Sendable {
    /// `consumirDemo` granted a demo, or refused one (the quota used up).
    func demoConsumed(appKey: String, granted: Bool)
    /// An issue was handed out (`getEdicio`, the reader web kiosk).
    func issueDownloaded(appKey: String)
    /// A device seen was not recorded: the day's sightings waiting to be written were at their limit.
    func sightingUnrecorded(appKey: String)
    /// An app registered (or restored) a store purchase that verified and was stored.
    func purchaseRegistered(appKey: String, store: Storefront, kind: ProductKind)
    /// A pack's credit opened an issue.
    func creditSpent(appKey: String)
    /// A store's notification verified and was stored, applied or dropped as a duplicate.
    func storeNoticeApplied(appKey: String, store: Storefront, outcome: KioskService.NoticeOutcome)
    /// A store was not told of a stored grant (Google's acknowledgement or consumption); retried at the purchase's next word.
    func storeConfirmationFailed(appKey: String, store: Storefront, error: String)
}

/// The observer when nobody listens.
public struct UnobservedKioskService: KioskServiceObserver {
    public init() {}
    public func demoConsumed(appKey: String, granted: Bool) {}
    public func issueDownloaded(appKey: String) {}
    public func sightingUnrecorded(appKey: String) {}
    public func purchaseRegistered(appKey: String, store: Storefront, kind: ProductKind) {}
    public func creditSpent(appKey: String) {}
    public func storeNoticeApplied(appKey: String, store: Storefront, outcome: KioskService.NoticeOutcome) {}
    public func storeConfirmationFailed(appKey: String, store: Storefront, error: String) {}
}
