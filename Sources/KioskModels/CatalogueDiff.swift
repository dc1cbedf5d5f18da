/// What making a stored catalogue match a configured one changes, in the order a store makes the
/// changes, with the lines a person reads (the same on every store).
///
/// Publications and editions are added or changed, never removed (issues refer to them); apps, their
/// tariff lines and web kiosks are made exactly as configured, so an app removed from the configuration
/// is removed; so are the accounts (API clients, publishers, operators).
package struct CatalogueDiff: Sendable, Hashable {
    /// One change to the stored catalogue.
    package enum Change: Sendable, Hashable {
        /// Adds the publication, or renames it.
        case savePublication(Publication)
        /// Adds the edition, or updates it.
        case saveEdition(Edition)
        /// Removes an app that is no longer configured, with its lines and web kiosk.
        case removeApp(key: String)
        /// Adds the app, or updates it.
        case saveApp(App)
        /// Replaces the app's tariff lines with `lines` (in the configuration's order; none removes them all).
        case setTariffLines(appKey: String, lines: [TariffLine])
        /// Adds or replaces the app's web kiosk.
        case saveWebKiosk(AppWebKiosk)
        /// Removes the app's web kiosk: it keeps Kiosk's own.
        case removeWebKiosk(appKey: String)
        /// Replaces the products the app sells with `products` (in the configuration's order; none removes them all).
        case setProducts(appKey: String, products: [StoreProduct])
        /// Removes an account that is no longer configured.
        case removeAccount(Account)
        /// Adds the account, or updates its password hash, role and scope.
        case saveAccount(Account)
    }

    /// The changes, in the order to make them.
    package private(set) var changes: [Change] = []
    /// What changes, as lines a person reads.
    package private(set) var lines: [String] = []
    /// The events the changes make, written with them: an edition added or changed, an app added,
    /// changed (one event for all its changes, their lines in `summary`) or removed. Accounts make none.
    package private(set) var events: [NewEvent] = []

    /// What changes from `stored` (as a store reads it back: accounts by kind, then username) to `wanted`.
    package init(from stored: Catalogue, to wanted: Catalogue) {
        let publications = Dictionary(stored.publications.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        for publication in wanted.publications where publications[publication.id] != publication.name {
            add(.savePublication(publication), publications[publication.id] == nil
                ? "add publication \(publication.id) \"\(publication.name)\""
                : "rename publication \(publication.id) to \"\(publication.name)\"")
        }
        let editions = Dictionary(stored.editions.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for edition in wanted.editions where editions[edition.id] != edition {
            add(.saveEdition(edition), "\(editions[edition.id] == nil ? "add" : "update") edition \(edition.id) \"\(edition.name)\"")
            events.append(NewEvent(editions[edition.id] == nil ? .editionAdded : .editionChanged,
                                   EventBody(edition: edition.id, summary: lines.last)))
        }
        let configuredApps = Set(wanted.apps.map(\.key))
        for app in stored.apps where !configuredApps.contains(app.key) {
            add(.removeApp(key: app.key), "remove app \(app.key)")
            events.append(NewEvent(.appRemoved, EventBody(app: app.key, summary: lines.last)))
        }
        let apps = Dictionary(stored.apps.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        for app in wanted.apps {
            let linesBefore = lines.count
            defer {
                if lines.count > linesBefore {
                    events.append(NewEvent(apps[app.key] == nil ? .appAdded : .appChanged,
                                           EventBody(app: app.key, summary: lines[linesBefore...].joined(separator: "; "))))
                }
            }
            if apps[app.key] != app {
                add(.saveApp(app), "\(apps[app.key] == nil ? "add" : "update") app \(app.key) (demo quota \(app.demoQuota))")
            }
            let lines = wanted.tariffLines.filter { $0.appKey == app.key }
            let byEdition = lines.sorted(by: TariffLine.byEdition)
            if stored.tariffLines.filter({ $0.appKey == app.key }).sorted(by: TariffLine.byEdition) != byEdition {
                add(.setTariffLines(appKey: app.key, lines: lines), "set tariff lines of app \(app.key): "
                    + byEdition.map { "\($0.editionID):\($0.order):\($0.access.rawValue)" }.joined(separator: ", "))
            }
            let kiosk = wanted.webKiosk(of: app.key)
            if stored.webKiosk(of: app.key) != kiosk {
                if let kiosk {
                    add(.saveWebKiosk(kiosk), WebKioskChange.set(kiosk))
                } else {
                    add(.removeWebKiosk(appKey: app.key), WebKioskChange.remove(appKey: app.key))
                }
            }
            let products = wanted.products(of: app.key)
            if stored.products(of: app.key) != products {
                add(.setProducts(appKey: app.key, products: products), "set products of app \(app.key): "
                    + (products.isEmpty ? "none" : products.map(\.summary).joined(separator: ", ")))
            }
        }
        let accounts = wanted.sortedAccounts
        let accountLines = AccountChanges.describe(from: stored.accounts, to: accounts)
        guard !accountLines.isEmpty else { return }
        let kept = Set(accounts.map(\.label))
        changes += stored.accounts.filter { !kept.contains($0.label) }.map(Change.removeAccount)
        let unchanged = Set(stored.accounts)
        changes += accounts.filter { !unchanged.contains($0) }.map(Change.saveAccount)
        lines += accountLines
    }

    private mutating func add(_ change: Change, _ line: String) {
        changes.append(change)
        lines.append(line)
    }
}

extension TariffLine {
    /// Orders lines by edition id: how a sync compares an app's lines and reports them.
    package static func byEdition(_ a: TariffLine, _ b: TariffLine) -> Bool { a.editionID < b.editionID }
}
