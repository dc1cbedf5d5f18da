/// What `KioskServer stats` asks for. Days are UTC; both ends are included; nil is unbounded.
public struct StatisticsQuery: Sendable, Hashable {
    public var from: IssueDate?
    public var to: IssueDate?
    public var appKey: String?
    public var editionID: Int?
    /// How many issues `topIssues` lists.
    public var topIssues: Int
    /// The time "now" means (Unix seconds), for the store subscriptions active now; the system's clock by default.
    public var now: Int64
    public init(from: IssueDate? = nil, to: IssueDate? = nil, appKey: String? = nil, editionID: Int? = nil, topIssues: Int = 10,
                now: Int64 = SystemClock().now) {
        self.from = from; self.to = to; self.appKey = appKey; self.editionID = editionID; self.topIssues = topIssues
        self.now = now
    }
}

/// Downloads (successful `getEdicio` calls) and demo use over a range of days.
public struct KioskStatistics: Sendable, Hashable {
    public struct EditionDay: Sendable, Hashable {
        public var editionID: Int
        public var editionName: String
        /// The UTC day of the downloads.
        public var day: IssueDate
        public var downloads: Int
        public init(editionID: Int, editionName: String, day: IssueDate, downloads: Int) {
            self.editionID = editionID; self.editionName = editionName; self.day = day; self.downloads = downloads
        }
    }

    public struct AppDownloads: Sendable, Hashable {
        public var appKey: String
        public var appName: String
        public var downloads: Int
        public init(appKey: String, appName: String, downloads: Int) {
            self.appKey = appKey; self.appName = appName; self.downloads = downloads
        }
    }

    public struct OSDownloads: Sendable, Hashable {
        /// As the app sent it; may be empty.
        public var os: String
        public var downloads: Int
        public init(os: String, downloads: Int) { self.os = os; self.downloads = downloads }
    }

    public struct IssueDownloads: Sendable, Hashable {
        public var editionID: Int
        public var editionName: String
        /// The issue's date.
        public var date: IssueDate
        public var downloads: Int
        public init(editionID: Int, editionName: String, date: IssueDate, downloads: Int) {
            self.editionID = editionID; self.editionName = editionName; self.date = date; self.downloads = downloads
        }
    }

    /// Demo use on one app: grants made in the range, by how many devices, how many were spent on an
    /// issue, and how many of those devices converted: signed in afterwards (on the same app and
    /// device) as a user who has a subscription.
    public struct DemoUse: Sendable, Hashable {
        public var appKey: String
        public var appName: String
        public var devices: Int
        public var grants: Int
        public var used: Int
        public var converted: Int
        public init(appKey: String, appName: String, devices: Int, grants: Int, used: Int, converted: Int) {
            self.appKey = appKey; self.appName = appName; self.devices = devices; self.grants = grants
            self.used = used; self.converted = converted
        }
        /// `converted / devices`, 0 when no device used a demo.
        public var conversionRate: Double { devices == 0 ? 0 : Double(converted) / Double(devices) }
    }

    /// Devices an app saw on a day: distinct identity keys (or device ids old apps send before they have
    /// one) in any call that names one.
    public struct ActiveDevices: Sendable, Hashable {
        public var day: IssueDate
        public var appKey: String
        public var appName: String
        public var devices: Int
        public init(day: IssueDate, appKey: String, appName: String, devices: Int) {
            self.day = day; self.appKey = appKey; self.appName = appName; self.devices = devices
        }
    }

    public var query: StatisticsQuery
    public var totalDownloads: Int
    /// By day, then edition.
    public var byEditionAndDay: [EditionDay]
    /// Most downloads first.
    public var byApp: [AppDownloads]
    /// Most downloads first.
    public var byOS: [OSDownloads]
    /// By app key.
    public var demos: [DemoUse]
    /// Most downloaded issues first (ties: edition, then date).
    public var topIssues: [IssueDownloads]
    /// By day, then app.
    public var activeDevices: [ActiveDevices]
    /// Users whose password hash is still the 2012 system's (replaced by bcrypt at their next sign-in).
    public var legacyPasswordHashes: Int
    /// Store purchases, payments and the demo-to-purchase conversion.
    public var storePurchases: StorePurchases

    public init(query: StatisticsQuery, totalDownloads: Int, byEditionAndDay: [EditionDay], byApp: [AppDownloads],
                byOS: [OSDownloads], demos: [DemoUse], topIssues: [IssueDownloads], activeDevices: [ActiveDevices],
                legacyPasswordHashes: Int, storePurchases: StorePurchases = StorePurchases()) {
        self.query = query; self.totalDownloads = totalDownloads; self.byEditionAndDay = byEditionAndDay
        self.byApp = byApp; self.byOS = byOS; self.demos = demos; self.topIssues = topIssues
        self.activeDevices = activeDevices; self.legacyPasswordHashes = legacyPasswordHashes
        self.storePurchases = storePurchases
    }
}

extension KioskStatistics {
    /// App Store and Google Play purchases, over the query's days (UTC) and app. The query's edition does not
    /// narrow them (a product is sold by an app, and a subscription may cover several editions), except the
    /// demo devices of `demoConversion`, which are those `demos` counts.
    ///
    /// - `byDayAndKind`: purchases Kiosk first heard of (`store_purchases.created_at`) on each day, by
    ///   product kind, whatever became of them since.
    /// - `activeSubscriptions`: subscriptions not revoked (by the store or an operator) whose access
    ///   (paid periods and grace) ends after the query's `now`, wherever in time they were bought.
    /// - `refunds`: payments made in the range (`store_payments.paid_at`) that are revoked now: refunded or
    ///   revoked by the store, or revoked by an operator. The stores do not date a refund, so a refund
    ///   counts on the day of the payment it took back.
    /// - `revenue`: per currency, the payments made in the range that are not revoked and have a price.
    /// - `demoConversion`: per app, the devices that took a demo in the range (as `demos` counts them) and
    ///   how many of them bought: there is a purchase of the same app, first heard of at or after the
    ///   device's first demo of the range, that the device holds (`store_purchases.device_key`), that opens
    ///   on it (a `store_purchase_devices` row), or that is held by a reader the device signed in as (an
    ///   `identities` row of the app and device with that user). Counted whatever became of the purchase
    ///   since (expired, refunded).
    public struct StorePurchases: Sendable, Hashable {
        public struct KindDay: Sendable, Hashable {
            /// The UTC day Kiosk first heard of them.
            public var day: IssueDate
            public var kind: ProductKind
            public var purchases: Int
            public init(day: IssueDate, kind: ProductKind, purchases: Int) {
                self.day = day; self.kind = kind; self.purchases = purchases
            }
        }

        public struct Revenue: Sendable, Hashable {
            /// ISO 4217, as the store gave it.
            public var currency: String
            /// Payments counted.
            public var payments: Int
            /// Their sum, in thousandths of the currency's unit (as the stores give prices).
            public var thousandths: Int64
            public init(currency: String, payments: Int, thousandths: Int64) {
                self.currency = currency; self.payments = payments; self.thousandths = thousandths
            }
            /// The sum in units with two decimals, rounded half away from zero: 4995 thousandths are `5.00`.
            public var amount: String { Self.units(thousandths) }

            /// `thousandths` as units with two decimals (`12.35`), rounded half away from zero.
            public static func units(_ thousandths: Int64) -> String {
                let magnitude = thousandths.magnitude
                let hundredths = magnitude / 10 + (magnitude % 10 >= 5 ? 1 : 0)
                let cents = hundredths % 100
                return (thousandths < 0 ? "-" : "") + "\(hundredths / 100)." + (cents < 10 ? "0" : "") + "\(cents)"
            }
        }

        public struct DemoConversion: Sendable, Hashable {
            public var appKey: String
            public var appName: String
            /// Devices that took a demo in the range.
            public var devices: Int
            /// Those of them that bought afterwards.
            public var purchased: Int
            public init(appKey: String, appName: String, devices: Int, purchased: Int) {
                self.appKey = appKey; self.appName = appName; self.devices = devices; self.purchased = purchased
            }
            /// `purchased / devices`, 0 when no device took a demo.
            public var conversionRate: Double { devices == 0 ? 0 : Double(purchased) / Double(devices) }
        }

        /// By day, then kind by name (`credits`, `issue`, `subscription`).
        public var byDayAndKind: [KindDay]
        public var activeSubscriptions: Int
        public var refunds: Int
        /// By currency code.
        public var revenue: [Revenue]
        /// By app key.
        public var demoConversion: [DemoConversion]

        public init(byDayAndKind: [KindDay] = [], activeSubscriptions: Int = 0, refunds: Int = 0, revenue: [Revenue] = [],
                    demoConversion: [DemoConversion] = []) {
            self.byDayAndKind = byDayAndKind; self.activeSubscriptions = activeSubscriptions; self.refunds = refunds
            self.revenue = revenue; self.demoConversion = demoConversion
        }

        /// Purchases per kind over the range.
        public var totalsByKind: [ProductKind: Int] {
            byDayAndKind.reduce(into: [:]) { $0[$1.kind, default: 0] += $1.purchases }
        }
    }
}
