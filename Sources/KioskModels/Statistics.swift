/// What `KioskServer stats` asks for. Days are UTC; both ends are included; nil is unbounded.
public struct StatisticsQuery: Sendable, Hashable {
    public var from: IssueDate?
    public var to: IssueDate?
    public var appKey: String?
    public var editionID: Int?
    /// How many issues `topIssues` lists.
    public var topIssues: Int
    public init(from: IssueDate? = nil, to: IssueDate? = nil, appKey: String? = nil, editionID: Int? = nil, topIssues: Int = 10) {
        self.from = from; self.to = to; self.appKey = appKey; self.editionID = editionID; self.topIssues = topIssues
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

    public init(query: StatisticsQuery, totalDownloads: Int, byEditionAndDay: [EditionDay], byApp: [AppDownloads],
                byOS: [OSDownloads], demos: [DemoUse], topIssues: [IssueDownloads], activeDevices: [ActiveDevices],
                legacyPasswordHashes: Int) {
        self.query = query; self.totalDownloads = totalDownloads; self.byEditionAndDay = byEditionAndDay
        self.byApp = byApp; self.byOS = byOS; self.demos = demos; self.topIssues = topIssues
        self.activeDevices = activeDevices; self.legacyPasswordHashes = legacyPasswordHashes
    }
}
