import Foundation
import Hummingbird
import KioskConfig
import KioskModels

/// The console's apps page (`/admin/apps`, operators only): each app's demo quota, tariff lines, web
/// kiosk (`hashQuiosc`: base URL, sections with their paths and aliases, default section) and the
/// products it sells in the stores (id, per-store ids, kind, editions, credits, scope). With
/// `catalogue_source: console` they are edited here; with `file` they are shown only. Every change is
/// validated like the configuration file, written through the catalogue sync (so every instance answers
/// from it at once) and audited with the app's state before and after.
extension ConsolePage {
    func apps(notice: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        try requireConfiguring()
        let catalogue = try await database.catalogue()
        let editable = runtime.configuration.catalogueSource == .console
        let names = Dictionary(uniqueKeysWithValues: catalogue.editions.map { edition in
            (edition.id, "\(catalogue.publications.first { $0.id == edition.publicationID }?.name ?? "") · \(edition.name)")
        })
        let view = AppsView(editable: editable, catalogue: catalogueView(catalogue, editable: editable), apps: catalogue.apps.map { app in
            let lines = catalogue.tariffLines.filter { $0.appKey == app.key }.sorted { $0.order < $1.order }
            return AppsView.App(
                key: app.key, name: app.name, demoQuota: app.demoQuota, editable: editable,
                lines: lines.map { .init(edition: $0.editionID, name: names[$0.editionID] ?? "\($0.editionID)", order: $0.order,
                                         free: $0.access == .free, editable: editable) },
                otherEditions: catalogue.editions.filter { edition in !lines.contains { $0.editionID == edition.id } }
                    .map { .init(id: $0.id, name: names[$0.id] ?? "") },
                webKiosk: webKioskView(catalogue.webKiosk(of: app.key), appKey: app.key, editable: editable),
                products: productsView(catalogue.products(of: app.key), editable: editable))
        })
        return render("console_apps", text["apps"] ?? "", view, notice: notice, status: status)
    }

    /// The web kiosk form of an app: its sections as they act (Kiosk's own when none are stored), then an
    /// empty row to add one.
    private func webKioskView(_ stored: AppWebKiosk?, appKey: String, editable: Bool) -> AppsView.WebKiosk {
        let ownURL = "\(runtime.configuration.publicURL)/web/\(appKey)"
        let acting = stored?.webKiosk(ownBaseURL: ownURL) ?? AppWebKiosk.own(baseURL: ownURL)
        let rows = acting.sections.enumerated().map { index, section in
            AppsView.Section(index: index, name: section.name, path: section.path, aliases: section.aliases.joined(separator: ", "),
                             isDefault: section.name == stored?.defaultSection, isNew: false, editable: editable)
        }
        return AppsView.WebKiosk(
            baseURL: stored?.baseURL ?? "", ownURL: ownURL, noDefault: stored?.defaultSection == nil, editable: editable,
            sections: rows + [AppsView.Section(index: rows.count, name: "", path: "", aliases: "", isDefault: false, isNew: true,
                                               editable: editable)])
    }

    /// The products form of an app: each product, then an empty row to add one.
    private func productsView(_ products: [StoreProduct], editable: Bool) -> AppsView.Products {
        func row(_ index: Int, _ product: StoreProduct?) -> AppsView.Product {
            let kind = product?.kind ?? .subscription, scope = product?.scope ?? .period
            return AppsView.Product(
                index: index, id: product?.id ?? "", appleID: product?.storeIDs[.apple] ?? "", googleID: product?.storeIDs[.google] ?? "",
                kinds: ProductKind.allCases.map { .init(value: $0.rawValue, label: text["kind_" + $0.rawValue] ?? $0.rawValue, selected: $0 == kind) },
                editions: product?.editions.map(String.init).joined(separator: ", ") ?? "",
                credits: product.map { $0.kind == .credits ? String($0.credits) : "" } ?? "",
                scopes: SubscriptionScope.allCases.map { .init(value: $0.rawValue, label: text["scope_" + $0.rawValue] ?? $0.rawValue, selected: $0 == scope) },
                summary: product?.summary ?? "", isNew: product == nil, editable: editable)
        }
        let rows = products.enumerated().map { row($0.offset, $0.element) }
        return AppsView.Products(editable: editable, hasProducts: !products.isEmpty, rows: rows + (editable ? [row(rows.count, nil)] : []))
    }

    /// One change to an app (`action`: `quota`, `add`, `remove`, `up`, `down`, `access`, `web_kiosk`, `products`), validated
    /// like the configuration file and written with the catalogue sync every writer uses.
    func changeApp(_ request: Request) async throws -> Response {
        try requireEditableCatalogue("managed_by_file")
        let form = self.form ?? WebForm.empty
        let key = parameters.get("app") ?? ""
        var catalogue = try await database.catalogue()
        guard let index = catalogue.apps.firstIndex(where: { $0.key == key }) else { throw KioskHTTPError.notFound("no app \"\(key)\"") }
        if form.text("action") == "web_kiosk" { return try await changeWebKiosk(of: key, in: catalogue, form: form) }
        if form.text("action") == "products" { return try await changeProducts(of: key, in: catalogue, form: form) }
        var lines = catalogue.tariffLines.filter { $0.appKey == key }.sorted { $0.order < $1.order }
        let before = Self.describe(catalogue.apps[index], lines)
        let edition = Int(form.text("edition"), radix: 10)
        switch form.text("action") {
        case "quota":
            guard let quota = Int(form.text("demo_quota")) else {
                return try await apps(notice: "App \(key), demo quota: must be a whole number", status: .unprocessableContent)
            }
            catalogue.apps[index].demoQuota = quota
        case "add":
            let access = LineAccess(rawValue: form.text("access")) ?? .subscribers
            lines.append(TariffLine(appKey: key, editionID: edition ?? 0, order: (lines.map(\.order).max() ?? 0) + 10, access: access))
        case "remove":
            lines.removeAll { $0.editionID == edition }
        case "up", "down":
            if let at = lines.firstIndex(where: { $0.editionID == edition }) {
                let other = form.text("action") == "up" ? at - 1 : at + 1
                if lines.indices.contains(other) {
                    (lines[at].order, lines[other].order) = (lines[other].order, lines[at].order)
                }
            }
        case "access":
            // The form names the access it sets, so a form sent twice sets it twice instead of switching it back.
            guard let access = LineAccess(rawValue: form.text("access")) else {
                return try await apps(notice: "App \(key), access: must be free or subscribers", status: .unprocessableContent)
            }
            if let at = lines.firstIndex(where: { $0.editionID == edition }) { lines[at].access = access }
        default:
            throw KioskHTTPError.badRequest("unknown action \"\(form.text("action").prefix(32))\"")
        }
        catalogue.tariffLines = catalogue.tariffLines.filter { $0.appKey != key } + lines
        if let problem = problem(with: catalogue) { return try await apps(notice: problem, status: .unprocessableContent) }
        let changes = try await database.syncCatalogue(catalogue, dryRun: false)
        if !changes.isEmpty {
            try await audit("app." + form.text("action"), key, before: before,
                            after: Self.describe(catalogue.apps[index], lines.sorted { $0.order < $1.order }))
        }
        return redirect("/admin/apps#app-\(key)")
    }

    static func describe(_ app: App, _ lines: [TariffLine]) -> String {
        "demo_quota \(app.demoQuota); lines " + lines.map { "\($0.editionID):\($0.order):\($0.access.rawValue)" }.joined(separator: ", ")
    }

    /// The web kiosk form's change: the base URL (empty: Kiosk's own), each row's name, path and aliases
    /// (comma-separated) unless marked for removal, a filled last row added, the default chosen by row. Checked
    /// with the catalogue's rules (`AppWebKiosk.validate`); a refused form changes nothing.
    private func changeWebKiosk(of key: String, in catalogue: Catalogue, form: WebForm) async throws -> Response {
        let stored = catalogue.webKiosk(of: key)
        let wanted = Self.webKiosk(of: key, from: form)
        guard stored != nil || !wanted.isOwn else { return redirect("/admin/apps#app-\(key)") }   // still Kiosk's own
        var changed = catalogue
        changed.webKiosks = catalogue.webKiosks.filter { $0.appKey != key } + [wanted]
        if let problem = problem(with: changed) { return try await apps(notice: problem, status: .unprocessableContent) }
        if try await !database.syncCatalogue(changed, dryRun: false).isEmpty {
            try await audit("app.web_kiosk", key, before: stored?.summary ?? "Kiosk's own", after: wanted.summary)
        }
        return redirect("/admin/apps#app-\(key)")
    }

    /// The web kiosk a submitted form describes: rows `section_name_N`, `section_path_N`, `section_aliases_N`
    /// (`section_remove_N` drops one; a row left empty is skipped), `default_section` the row chosen.
    static func webKiosk(of key: String, from form: WebForm) -> AppWebKiosk {
        var sections: [WebKiosk.Section] = []
        var defaultSection: String?
        for row in 0..<maximumSections {
            let name = form.text("section_name_\(row)"), path = form.text("section_path_\(row)")
            let aliases = form.text("section_aliases_\(row)").split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            if form["section_name_\(row)"] == nil && form["section_path_\(row)"] == nil { break }
            if form.text("default_section") == String(row) { defaultSection = name }
            guard form["section_remove_\(row)"] == nil, !(name.isEmpty && path.isEmpty && aliases.isEmpty) else { continue }
            sections.append(WebKiosk.Section(name: name, path: path, aliases: aliases))
        }
        let baseURL = form.text("base_url")
        return AppWebKiosk(appKey: key, baseURL: baseURL.isEmpty ? nil : baseURL, sections: sections, defaultSection: defaultSection)
    }

    /// The most rows a web kiosk form is read for.
    static let maximumSections = 100

    /// The products form's change: every row (`product_id_N`, `product_apple_id_N`, `product_google_id_N`,
    /// `product_kind_N`, `product_editions_N`, `product_credits_N`, `product_scope_N`) in order, unless marked
    /// `product_remove_N` or left without an id (the empty last row). Checked with the catalogue's rules
    /// (`[StoreProduct].validate(in:)` through `Catalogue.validate`) and audited with the products before and
    /// after; a refused form changes nothing.
    private func changeProducts(of key: String, in catalogue: Catalogue, form: WebForm) async throws -> Response {
        let stored = catalogue.products(of: key)
        let wanted: [StoreProduct]
        do {
            wanted = try Self.products(of: key, from: form)
        } catch {
            return try await apps(notice: error.description, status: .unprocessableContent)
        }
        guard wanted != stored else { return redirect("/admin/apps#products-\(key)") }
        var changed = catalogue
        // The app's products take the place of its old ones, the other apps' keep theirs and their order.
        changed.products = catalogue.products.filter { $0.appKey != key } + wanted
        if let problem = problem(with: changed) { return try await apps(notice: problem, status: .unprocessableContent) }
        if try await !database.syncCatalogue(changed, dryRun: false).isEmpty {
            try await audit("app.products", key, before: Self.describe(stored), after: Self.describe(wanted))
        }
        return redirect("/admin/apps#products-\(key)")
    }

    /// How the audit log shows an app's products: each one's summary, or `none`.
    static func describe(_ products: [StoreProduct]) -> String {
        products.isEmpty ? "none" : products.map(\.summary).joined(separator: ", ")
    }

    /// The products a submitted form describes, in its rows' order. A field that cannot be read as the
    /// form's control sends it (a kind, a scope, a number) is a `CatalogueProblem` naming the product.
    static func products(of key: String, from form: WebForm) throws(CatalogueProblem) -> [StoreProduct] {
        var products: [StoreProduct] = []
        for row in 0..<maximumProducts {
            guard form["product_id_\(row)"] != nil else { break }
            let id = form.text("product_id_\(row)")
            guard form["product_remove_\(row)"] == nil, !id.isEmpty else { continue }
            func problem(_ field: String, _ rule: String) -> CatalogueProblem {
                CatalogueProblem(.product(appKey: key, index: products.count), field: field, subject: "product \(id) of app \(key)", rule: rule)
            }
            guard let kind = ProductKind(rawValue: form.text("product_kind_\(row)")) else {
                throw problem("kind", "must be issue, credits or subscription")
            }
            let scopeText = form.text("product_scope_\(row)")
            guard let scope = scopeText.isEmpty ? .period : SubscriptionScope(rawValue: scopeText) else {
                throw problem("scope", "must be period or all")
            }
            let creditsText = form.text("product_credits_\(row)")
            guard let credits = creditsText.isEmpty ? 0 : Int(creditsText, radix: 10) else {
                throw problem("credits", "must be a whole number")
            }
            var editions: [Int] = []
            for word in form.text("product_editions_\(row)").split(whereSeparator: { $0 == "," || $0 == " " }) {
                guard let edition = Int(word, radix: 10) else { throw problem("editions", "must be edition ids separated by commas") }
                editions.append(edition)
            }
            var storeIDs: [Storefront: String] = [:]
            for store in Storefront.allCases {
                let storeID = form.text("product_\(store.rawValue)_id_\(row)")
                if !storeID.isEmpty && storeID != id { storeIDs[store] = storeID }
            }
            products.append(StoreProduct(appKey: key, id: id, storeIDs: storeIDs, kind: kind, editions: editions, credits: credits,
                                         scope: scope))
        }
        return products
    }

    /// The most rows a products form is read for.
    static let maximumProducts = 200
}
