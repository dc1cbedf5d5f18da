import Foundation
import Hummingbird
import KioskModels

/// The console's store purchases (`/admin/purchases`): found by reader (username), device key, or the
/// store's lasting name of one (Apple's original transaction id, a Google purchase token), newest change
/// first; and one purchase (`/admin/purchase?app=…&store=…&id=…`) with its payments and the stores'
/// notices about it.
///
/// Every role sees them (an editor reads); only a role that may change readers and the catalogue (an
/// `operator`) acts: releases the binding of an anonymous device, revokes a purchase by hand and restores
/// it. Each action is a form carrying the session's CSRF token, made atomically on the purchase as it is
/// in the database (`changePurchase`, so every instance sees it at once) and audited with the purchase's
/// state before and after.
extension ConsolePage {
    /// The most purchases the list shows.
    static let purchaseListLimit = 100

    /// Operators only, as the readers page: it finds readers' purchases by username and device.
    func purchases(_ request: Request) async throws -> Response {
        try requireConfiguring()
        let query = request.uri.queryParameters
        func field(_ name: String, _ limit: Int) -> String {
            String((query.get(name) ?? "").trimmingCharacters(in: .whitespacesAndNewlines).prefix(limit))
        }
        let reader = field("reader", 100), device = field("device", 200), originalID = field("id", 1000), appKey = field("app", 100)
        var filter = PurchaseFilter(appKey: appKey.isEmpty ? nil : appKey, deviceKey: device.isEmpty ? nil : device,
                                    originalID: originalID.isEmpty ? nil : originalID, limit: Self.purchaseListLimit)
        var notice: String?
        var found: [HeldPurchase] = []
        if !reader.isEmpty {
            if let user = try await database.user(username: reader) {
                filter.userID = user.id
            } else {
                notice = "\(text["no_such_reader"] ?? "") \(reader)"
            }
        }
        if reader.isEmpty || filter.userID != nil {
            found = try await database.purchases(matching: filter)
        }
        let usernames = try await usernames(of: found)
        let apps = try await database.catalogue().apps.map(\.key)
        let view = PurchasesView(
            reader: reader, device: device, id: originalID,
            apps: [AppsView.Option(value: "", label: text["every_app"] ?? "", selected: appKey.isEmpty)]
                + apps.map { AppsView.Option(value: $0, label: $0, selected: $0 == appKey) },
            searched: !(reader.isEmpty && device.isEmpty && originalID.isEmpty && appKey.isEmpty), hasPurchases: !found.isEmpty,
            purchases: found.map { row($0, usernames: usernames) },
            limited: found.count >= Self.purchaseListLimit)
        return render("console_purchases", text["purchases"] ?? "", view, notice: notice)
    }

    /// One purchase: what it grants, whose it is, its ledger and the notices about it, with the actions.
    func purchase(_ request: Request, notice: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        try requireConfiguring()
        let query = request.uri.queryParameters
        let (appKey, store, originalID) = try Self.purchaseName(app: query.get("app") ?? "", store: query.get("store") ?? "",
                                                                id: query.get("id") ?? "")
        return try await purchasePage(appKey: appKey, store: store, originalID: originalID, notice: notice, status: status)
    }

    private func purchasePage(appKey: String, store: Storefront, originalID: String, notice: String? = nil,
                              status: HTTPResponse.Status = .ok) async throws -> Response {
        guard let held = try await database.purchase(appKey: appKey, store: store, originalID: originalID) else {
            throw KioskHTTPError.notFound(text["no_such_purchase"] ?? "")
        }
        let notices = try await database.notices(appKey: appKey, store: store, originalID: originalID)
        let releasable: Bool
        if case .device = held.holder { releasable = true } else { releasable = false }
        let view = PurchaseView(
            purchase: row(held, usernames: try await usernames(of: [held])),
            environment: held.environment, accountToken: held.accountToken ?? "—",
            created: Self.timestamp(held.createdAt), updated: Self.timestamp(held.updatedAt),
            revokedByOperator: held.revokedByOperator, mayAct: role.mayConfigure,
            devices: held.devices.map { PurchaseView.Device(key: $0, releasable: releasable) },
            payments: held.payments.map { payment in
                PurchaseView.Payment(
                    id: payment.id, paidAt: Self.timestamp(payment.paidAt),
                    period: payment.period.map { "\(IssueDate(unixTime: $0.start)) – \(IssueDate(unixTime: $0.end))" } ?? "—",
                    price: payment.price.map { KioskStatistics.StorePurchases.Revenue.units($0) + " " + (payment.currency ?? "") } ?? "—",
                    revoked: payment.revoked)
            },
            notices: notices.map {
                PurchaseView.Notice(received: Self.timestamp($0.receivedAt), type: $0.type, subtype: $0.subtype.isEmpty ? nil : $0.subtype,
                                    outcome: $0.outcome, id: $0.id)
            })
        return render("console_purchase", "\(text["purchase"] ?? "") \(originalID.prefix(40))", view, notice: notice, status: status)
    }

    /// One action on a purchase (`action`: `release` with `device`, `revoke`, `restore`), by an operator.
    /// Revoking or restoring sets what the form names, so a form sent twice changes nothing the second time.
    func changePurchase() async throws -> Response {
        try requireConfiguring()
        let form = self.form ?? WebForm.empty
        let (appKey, store, originalID) = try Self.purchaseName(app: form.text("app"), store: form.text("store"), id: form.text("id"))
        let action = form.text("action"), device = form.text("device"), time = now
        guard ["release", "revoke", "restore"].contains(action) else {
            throw KioskHTTPError.badRequest("unknown action \"\(action.prefix(32))\"")
        }
        let change = try await database.changePurchase(appKey: appKey, store: store, originalID: originalID,
                                                       recording: nil) { held throws -> PurchaseChange in
            guard var current = held else { return .missing }
            let before = Self.describe(current, at: time)
            switch action {
            case "release":
                guard current.release(deviceKey: device, at: time) else { return .notBound }
            default:
                let revoked = action == "revoke"
                guard current.revokedByOperator != revoked else { return .unchanged }
                current.setRevokedByOperator(revoked, at: time)
            }
            held = current
            return .changed(before: before, after: Self.describe(current, at: time))
        }
        switch change ?? .missing {
        case .missing:
            throw KioskHTTPError.notFound(text["no_such_purchase"] ?? "")
        case .notBound:
            return try await purchasePage(appKey: appKey, store: store, originalID: originalID,
                                          notice: "\(text["device_not_bound"] ?? "") \(device)", status: .unprocessableContent)
        case .unchanged:
            break
        case .changed(let before, let after):
            try await audit("purchase." + action, Self.subject(appKey: appKey, store: store, originalID: originalID),
                            before: before, after: action == "release" ? after + " (released " + device + ")" : after)
        }
        return redirect(Self.purchaseURL(appKey: appKey, store: store, originalID: originalID))
    }

    // MARK: Rows

    /// The list's row of a purchase (and the detail's summary).
    private func row(_ held: HeldPurchase, usernames: [Int: String]) -> PurchasesView.Purchase {
        let purchase = held.purchase, product = purchase.product
        let state = purchase.state(at: now)
        let holder: String
        switch held.holder {
        case .unclaimed: holder = text["unclaimed"] ?? ""
        case .reader(let userID): holder = "\(text["reader"] ?? "") \(usernames[userID] ?? "#\(userID)")"
        case .device(let deviceKey): holder = "\(text["device"] ?? "") \(deviceKey)"
        }
        return PurchasesView.Purchase(
            app: held.appKey, store: purchase.store.rawValue, originalID: purchase.originalID, product: product.id,
            kind: text["kind_" + product.kind.rawValue] ?? product.kind.rawValue, holder: holder,
            state: text[Self.stateKey(state)] ?? state.rawValue, stateName: Self.stateKey(state),
            accessEnd: product.kind == .subscription && purchase.accessEnd > 0 ? Self.timestamp(purchase.accessEnd) : "—",
            creditsLeft: product.kind == .credits ? "\(purchase.unspentCredits) / \(product.credits)" : "—",
            issues: purchase.issues.isEmpty ? "—" : purchase.issues.map { "\($0.editionID) · \($0.date)" }.joined(separator: ", "),
            devices: held.devices.isEmpty ? "—" : held.devices.joined(separator: ", "),
            url: Self.purchaseURL(appKey: held.appKey, store: purchase.store, originalID: purchase.originalID))
    }

    /// The usernames of the readers holding `purchases`.
    private func usernames(of purchases: [HeldPurchase]) async throws -> [Int: String] {
        var names: [Int: String] = [:]
        for held in purchases {
            guard case .reader(let userID) = held.holder, names[userID] == nil else { continue }
            names[userID] = try await database.user(id: userID)?.username
        }
        return names
    }

    static func stateKey(_ state: PurchaseState) -> String {
        switch state {
        case .active: "purchase_active"
        case .expired: "purchase_expired"
        case .revoked: "purchase_revoked"
        }
    }

    /// What the audit log records of a purchase: its state, holder and devices, and a revocation by hand.
    static func describe(_ held: HeldPurchase, at time: Int64) -> String {
        let holder: String
        switch held.holder {
        case .unclaimed: holder = "unclaimed"
        case .reader(let userID): holder = "reader \(userID)"
        case .device(let deviceKey): holder = "device \(deviceKey)"
        }
        return "\(held.purchase.state(at: time).rawValue); \(holder); devices "
            + (held.devices.isEmpty ? "none" : held.devices.joined(separator: " "))
            + (held.revokedByOperator ? "; revoked by an operator" : "")
    }

    static func subject(appKey: String, store: Storefront, originalID: String) -> String {
        "\(appKey) \(store.rawValue) \(originalID)"
    }

    static func purchaseURL(appKey: String, store: Storefront, originalID: String) -> String {
        func escaped(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "" }
        return "/admin/purchase?app=\(escaped(appKey))&store=\(store.rawValue)&id=\(escaped(originalID))"
    }

    /// A purchase's name as a page or form gives it; a store that is not one is a 400.
    static func purchaseName(app: String, store: String, id: String) throws -> (String, Storefront, String) {
        guard let storefront = Storefront(rawValue: store) else {
            throw KioskHTTPError.badRequest("store must be apple or google")
        }
        return (String(app.prefix(100)), storefront, String(id.prefix(1000)))
    }
}

/// What an action on a purchase came to.
private enum PurchaseChange: Sendable {
    case missing, notBound, unchanged
    case changed(before: String, after: String)
}
