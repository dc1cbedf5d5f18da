/// Which purchases the console lists: all of them (newest first), or those matching each given field.
public struct PurchaseFilter: Sendable, Hashable {
    public var appKey: String?
    public var userID: Int?
    /// A device that holds them or opens them.
    public var deviceKey: String?
    /// Apple's original transaction id or a Google purchase token.
    public var originalID: String?
    public var limit: Int
    public init(appKey: String? = nil, userID: Int? = nil, deviceKey: String? = nil, originalID: String? = nil, limit: Int = 100) {
        self.appKey = appKey; self.userID = userID; self.deviceKey = deviceKey; self.originalID = originalID; self.limit = limit
    }
}

/// Where store purchases and the stores' notices are kept. Every change is atomic across connections,
/// processes and instances.
public protocol PurchaseStore: Sendable {
    /// The products `appKey` sells, in order (the catalogue's, as the console or the file left them).
    func storeProducts(appKey: String) async throws -> [StoreProduct]
    /// The purchases a reader holds in the app (`userID` other than 0), and those that open on the device.
    func purchases(appKey: String, userID: Int, deviceKey: String) async throws -> [HeldPurchase]
    /// One purchase, by the store's lasting name for it.
    func purchase(appKey: String, store: Storefront, originalID: String) async throws -> HeldPurchase?
    /// Atomically, one purchase at a time: reads it (nil: none yet), lets `change` decide what it becomes
    /// (left nil: nothing is stored), stores that, and records `notice` in the same transaction. When
    /// `notice` is already recorded nothing is read or changed and the answer is nil. An error thrown by
    /// `change` rolls everything back.
    func changePurchase<T: Sendable>(appKey: String, store: Storefront, originalID: String, recording notice: StoreNoticeRecord?,
                                     _ change: @escaping @Sendable (inout HeldPurchase?) throws -> T) async throws -> T?
    /// Records a notice that changes no purchase; false when it was already recorded.
    func recordNotice(_ notice: StoreNoticeRecord) async throws -> Bool
    /// The notices recorded about a purchase, oldest first.
    func notices(appKey: String, store: Storefront, originalID: String) async throws -> [StoreNoticeRecord]
    /// Moves the anonymous purchases that open on a device in the app (bought or restored there) to `userID`,
    /// the reader who signed in on it (`HeldPurchase.claim`).
    func movePurchases(appKey: String, deviceKey: String, toUser userID: Int, at time: Int64) async throws
    /// The console's list, newest change first.
    func purchases(matching filter: PurchaseFilter) async throws -> [HeldPurchase]
}
