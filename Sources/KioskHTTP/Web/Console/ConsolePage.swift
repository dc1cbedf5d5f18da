import KioskRPC
import Foundation
import Hummingbird
import KioskConfig
import KioskEditions
import KioskModels

/// One request of a signed-in operator: who, in what language, with what store; and the console's pages.
struct ConsolePage: Sendable {
    /// The signed-in operator, as stored.
    let operatorAccount: Account
    let session: WebSessions.Session
    let sessions: WebSessions
    let runtime: KioskRuntime
    let database: any KioskDatabase
    let language: WebLanguage
    let parameters: Parameters
    let path: String
    let now: Int64
    var form: WebForm?

    /// Nil when the request has no valid session of a stored operator (one removed since, or whose password
    /// has changed since, is signed out).
    init?(request: Request, context: KioskRequestContext) async throws {
        runtime = context.runtime
        sessions = runtime.console.sessions
        now = runtime.environment.service.clock.now
        guard let session = sessions.session(of: request, now: now),
              let account = try await runtime.accounts.current().operators[WebSessions.subject(of: session.payload)],
              session.payload == WebSessions.payload(account.username, passwordHash: account.passwordHash),
              try await !runtime.console.database.sessionHasEnded(subject: SessionEnd.operatorSubject(account.username),
                                                                  session: session.id, began: session.began)
        else { return nil }
        self.session = session
        operatorAccount = account
        database = runtime.console.database
        language = WebLanguage(acceptLanguage: request.headers[.acceptLanguage])
        parameters = context.parameters
        path = request.uri.path
    }

    var text: [String: String] { language.consoleStrings }
    func acceptsCSRF(_ token: String) -> Bool { sessions.acceptsCSRF(token, binding: session.cookie) }

    var role: OperatorRole { operatorAccount.role ?? .editor }

    /// An operator's catalogue change may go ahead only when the database owns the catalogue
    /// (`catalogue_source: console`); otherwise `409` with the page's explanation (`explanation` key).
    func requireEditableCatalogue(_ explanation: String) throws {
        try requireConfiguring()
        guard runtime.configuration.catalogueSource == .console else { throw KioskHTTPError(.conflict, text[explanation] ?? "") }
    }

    /// What is wrong with `catalogue`, in an operator's words (`CatalogueProblem`), or nil when it is valid.
    func problem(with catalogue: Catalogue) -> String? {
        do {
            try catalogue.validate()
            return nil
        } catch {
            return error.description
        }
    }

    func requireConfiguring() throws {
        guard role.mayConfigure else { throw KioskHTTPError.forbidden(text["not_allowed"] ?? "") }
    }

    func render(_ template: String, _ title: String, _ content: Any, notice: String? = nil,
                        status: HTTPResponse.Status = .ok) -> Response {
        var links = [("/admin", text["dashboard"] ?? ""), ("/admin/issues", text["issues"] ?? ""), ("/admin/webhooks", text["webhooks"] ?? "")]
        if role.mayConfigure {
            links += [("/admin/apps", text["apps"] ?? ""), ("/admin/readers", text["readers"] ?? ""),
                      ("/admin/purchases", text["purchases"] ?? ""),
                      ("/admin/accounts", text["accounts"] ?? ""), ("/admin/audit", text["audit"] ?? "")]
        }
        let frame = ConsoleRendering.Frame(
            operatorName: operatorAccount.username, role: text[role.rawValue] ?? role.rawValue,
            csrf: sessions.csrfToken(session),
            links: links.map { .init(href: $0.0, label: $0.1, current: $0.0 == path) }, notice: notice)
        return ConsoleRendering.page(status, template: template, title: title, language: language, frame: frame,
                                     content: content, imageOrigin: runtime.configuration.publicURL)
    }

    func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }

    func audit(_ action: String, _ subject: String, before: String = "", after: String = "") async throws {
        try await database.recordAudit(AuditEntry(time: now, actor: operatorAccount.username, action: action, subject: subject,
                                                  before: before, after: after))
    }

    /// Ends this session, on every instance.
    func signOut() async throws -> Response {
        try await database.endSession(subject: SessionEnd.operatorSubject(operatorAccount.username), session: session.id,
                                      keptUntil: session.expires, at: now)
        var response = redirect("/admin/sign-in")
        response.setCookie(sessions.signOut())
        return response
    }

    // MARK: Dashboard

    func dashboard(_ request: Request) async throws -> Response {
        let period = try Self.period(request, today: IssueDate(unixTime: now))
        let from = period.first, to = period.last
        let statistics = try await database.statistics(StatisticsQuery(from: from, to: to, topIssues: 10, now: now))
        let activity = try await database.activity(in: period)
        var byDay: [IssueDate: Int] = [:]
        for row in statistics.byEditionAndDay { byDay[row.day, default: 0] += row.downloads }
        var devicesByDay: [IssueDate: Int] = [:]
        for row in statistics.activeDevices { devicesByDay[row.day, default: 0] += row.devices }
        let troubles = try await webhookTroubles()
        let view = DashboardView(
            from: from.description, to: to.description, total: statistics.totalDownloads,
            chart: DownloadsChart(from: from, to: to, byDay: byDay).svg(title: text["downloads_per_day"] ?? ""),
            byApp: statistics.byApp.map { .init(name: $0.appName, downloads: $0.downloads) },
            byOS: statistics.byOS.map { .init(name: $0.os.isEmpty ? "—" : $0.os, downloads: $0.downloads) },
            demos: statistics.demos.map {
                .init(app: $0.appName, devices: $0.devices, used: $0.used, converted: $0.converted,
                      conversion: String(format: "%.1f %%", $0.conversionRate * 100))
            },
            activeDevices: devicesByDay.sorted { $0.key > $1.key }.prefix(7).map { .init(name: $0.key.description, downloads: $0.value) },
            topIssues: statistics.topIssues.map { .init(name: "\($0.editionName) · \($0.date)", downloads: $0.downloads) },
            signInFailures: activity.signInFailures, bundleBuilds: activity.bundleBuilds,
            bundleMegabytes: String(format: "%.1f", Double(activity.bundleBytes) / 1_000_000),
            store: Self.storeView(statistics.storePurchases), webhooks: troubles, hasWebhookTroubles: !troubles.isEmpty)
        return render("console_dashboard", text["dashboard"] ?? "", view)
    }

    /// The dashboard's store purchases: per day (newest first, then the period's total) by kind, the
    /// subscriptions active now, refunds, revenue per currency and the demo-to-purchase conversion.
    static func storeView(_ store: KioskStatistics.StorePurchases) -> DashboardView.Store {
        var byDay: [IssueDate: [ProductKind: Int]] = [:]
        for row in store.byDayAndKind { byDay[row.day, default: [:]][row.kind, default: 0] += row.purchases }
        func day(_ label: String, _ counts: [ProductKind: Int], total: Bool) -> DashboardView.Store.Day {
            DashboardView.Store.Day(day: label, issue: counts[.issue] ?? 0, credits: counts[.credits] ?? 0,
                                    subscription: counts[.subscription] ?? 0, total: counts.values.reduce(0, +), isTotal: total)
        }
        let days = byDay.sorted { $0.key > $1.key }.map { day($0.key.description, $0.value, total: false) }
        return DashboardView.Store(
            days: days.isEmpty ? [] : days + [day("", store.totalsByKind, total: true)],
            activeSubscriptions: store.activeSubscriptions, refunds: store.refunds,
            revenue: store.revenue.map { .init(currency: $0.currency, payments: $0.payments, amount: $0.amount) },
            conversions: store.demoConversion.map {
                .init(app: $0.appName.isEmpty ? $0.appKey : $0.appName, devices: $0.devices, purchased: $0.purchased,
                      conversion: String(format: "%.1f %%", $0.conversionRate * 100))
            })
    }

    /// The dashboard's `from` and `to` (`YYYY-MM-DD`, both optional: the 30 days up to `to`, which is
    /// today by default); a date that is not one, or a start after the end, is a 400 saying so.
    static func period(_ request: Request, today: IssueDate) throws -> DayPeriod {
        func date(_ name: String) throws -> IssueDate? {
            guard let text = request.uri.queryParameters.get(name), !text.isEmpty else { return nil }
            guard let date = IssueDate(text) else {
                throw KioskHTTPError.badRequest("\(name) must be a day written YYYY-MM-DD (years 0001 to 9999)")
            }
            return date
        }
        let to = try date("to") ?? today
        let from = try date("from") ?? to.adding(days: -29)
        guard let period = DayPeriod(first: from, last: to) else {
            throw KioskHTTPError.badRequest("the period starts (from=\(from)) after it ends (to=\(to)): choose a start on or before the end")
        }
        return period
    }

    // MARK: Issues

    func issues(_ request: Request) async throws -> Response {
        let catalogue = try await database.catalogue()
        let chosen = request.uri.queryParameters.get("edition").flatMap { Int($0) } ?? catalogue.editions.first?.id
        var issues: [IssuesView.Issue] = []
        if let chosen {
            issues = try await database.editionIssues(editionID: chosen, limit: 60).map { issue in
                IssuesView.Issue(date: issue.date.description, pages: issue.pageCount, revision: issue.revision,
                                 bundleSize: issue.bundle.map { String($0.size) } ?? "—", sha256: issue.bundle?.sha256 ?? "—",
                                 withdrawn: issue.withdrawnAt.map(Self.timestamp))
            }
        }
        let view = IssuesView(
            editions: catalogue.editions.map { edition in
                .init(id: edition.id, name: "\(catalogue.publications.first { $0.id == edition.publicationID }?.name ?? "") · \(edition.name)",
                      selected: edition.id == chosen)
            },
            edition: chosen ?? 0, today: IssueDate(unixTime: now).description, issues: issues)
        return render("console_issues", text["issues"] ?? "", view)
    }

    /// One issue as readers get it: each page's small image (linking to the high-resolution one), section and
    /// PDF, through signed links as `getEdicio` gives them; a withdrawn issue is `404` until restored.
    func issue() async throws -> Response {
        let editionID = Int(parameters.get("edition") ?? "") ?? 0
        guard let date = IssueDate(parameters.get("date") ?? ""),
              let contents = try await database.issueContents(editionID: editionID, date: date) else {
            throw KioskHTTPError.notFound(text["no_visible_issue"] ?? "")
        }
        let links = runtime.environment.links
        let view = ConsoleIssueView(
            edition: editionID, date: date.description, revision: contents.revision,
            backURL: "/admin/issues?edition=\(editionID)#issue-\(date)",
            bundleURL: contents.bundle.map { _ in
                links.link(to: EditionsDirectory.bundlePath(editionID: editionID, date: date, revision: contents.revision), now: now)
            },
            pages: contents.pages.map { page in
                ConsoleIssueView.Page(number: page.number, section: page.section.name, image: links.link(to: page.files.jpg, now: now),
                               largeImage: links.link(to: page.files.jpgA, now: now), pdf: links.link(to: page.files.pdf, now: now))
            })
        return render("console_issue", "\(text["issue"] ?? "") \(editionID) · \(date)", view)
    }

    /// The upload form's `PUT`: the same archive and answers as `PUT /publish`.
    func upload(_ request: Request) async throws -> Response {
        let subject = "\(parameters.get("edition") ?? "")/\(parameters.get("date") ?? "")"
        return try await runtime.publishing.publish(request, publisherName: "console:" + operatorAccount.username,
                                                    editionText: parameters.get("edition"), dateText: parameters.get("date"),
                                                    published: { try await audit("issue.publish", subject) })
    }

    func withdraw() async throws -> Response {
        guard let edition = parameters.get("edition").flatMap({ Int($0) }), let date = parameters.get("date").flatMap({ IssueDate($0) }) else {
            throw KioskHTTPError.badRequest("the address must name an edition and a YYYY-MM-DD date")
        }
        guard try await runtime.publishing.publisher.withdraw(editionID: edition, date: date) else {
            throw KioskHTTPError.notFound("no visible issue of edition \(edition) on \(date)")
        }
        try await audit("issue.withdraw", "\(edition)/\(date)", before: "published", after: "withdrawn")
        return redirect("/admin/issues?edition=\(edition)")
    }

    func restore() async throws -> Response {
        guard let edition = parameters.get("edition").flatMap({ Int($0) }), let date = parameters.get("date").flatMap({ IssueDate($0) }) else {
            throw KioskHTTPError.badRequest("the address must name an edition and a YYYY-MM-DD date")
        }
        do { _ = try await runtime.publishing.publisher.restore(editionID: edition, date: date) }
        catch let refused as IssueRestoreRefused { throw KioskHTTPError.refused(refused) }
        try await audit("issue.restore", "\(edition)/\(date)", before: "withdrawn", after: "published")
        return redirect("/admin/issues?edition=\(edition)")
    }

    // MARK: Readers

    func readers(_ request: Request, notice: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        try requireConfiguring()
        let query = request.uri.queryParameters.get("q").map { String($0.prefix(100)) } ?? ""
        var found: [ReadersView.Reader] = []
        if !query.isEmpty {
            for user in try await database.findUsers(matching: query, limit: 50) {
                let subscriptions = try await database.subscriptions(userID: user.id)
                found.append(.init(username: user.username, name: user.name, email: user.email,
                                   subscriptions: subscriptions.map { "\($0.editionID) → \($0.until)" }.joined(separator: ", ")))
            }
        }
        var demos: String?
        if let app = request.uri.queryParameters.get("app"), let device = request.uri.queryParameters.get("device"), !device.isEmpty {
            demos = String(try await database.demosConsumed(appKey: String(app.prefix(100)), deviceKey: String(device.prefix(200))))
        }
        let catalogue = try await database.catalogue()
        let view = ReadersView(query: query, searched: !query.isEmpty, readers: found, demos: demos,
                               apps: catalogue.apps.map(\.key), editions: catalogue.editions.map(\.id))
        return render("console_readers", text["readers"] ?? "", view, notice: notice, status: status)
    }

    /// One change to readers (`action`: `add`, `subscribe`, `password`, `end_sessions`, `unlock`), made by
    /// `ReaderAdministration` as the CLI makes it, and audited.
    func changeReader(_ request: Request) async throws -> Response {
        try requireConfiguring()
        let form = self.form ?? WebForm.empty
        let username = form.text("username")
        let administration = ReaderAdministration(database: database, passwords: runtime.environment.service.passwords,
                                                  clock: runtime.environment.service.clock)
        do {
            switch form.text("action") {
            case "add":
                _ = try await administration.add(username: username, name: form.text("name"), email: form.text("email"),
                                          password: form["password"] ?? "")
                try await audit("reader.add", username, after: form.text("name"))
            case "subscribe":
                guard let edition = Int(form.text("edition")), let until = IssueDate(form.text("until")) else {
                    throw ReaderChangeRefused.invalid("until: must be a date written YYYY-MM-DD, with an edition")
                }
                try await administration.subscribe(username: username, editionID: edition, until: until)
                try await audit("reader.subscribe", username, after: "edition \(edition) until \(until)")
            case "password":
                try await administration.setPassword(username: username, to: form["password"] ?? "")
                try await audit("reader.password", username, after: "reset")
            case "end_sessions":
                try await administration.endSessions(username: username, sessionLifetime: runtime.readerSessions.lifetimeSeconds)
                try await audit("reader.end_sessions", username, after: "every session ended")
            case "unlock":
                let cleared = try await administration.unlock(username: username)
                try await audit("reader.unlock", username, before: "\(cleared) failed sign-ins", after: "0")
            default:
                throw KioskHTTPError.badRequest("unknown action \"\(form.text("action").prefix(32))\"")
            }
        } catch let refused as ReaderChangeRefused {
            return try await readers(request, notice: refused.description, status: .unprocessableContent)
        }
        return redirect("/admin/readers?q=" + (username.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
    }

    // MARK: Audit

    func audit() async throws -> Response {
        try requireConfiguring()
        let entries = try await database.auditEntries(limit: 200).map { entry in
            AuditView.Entry(when: Self.timestamp(entry.time), who: entry.actor, what: entry.action, subject: entry.subject,
                            before: entry.before, after: entry.after)
        }
        return render("console_audit", text["audit"] ?? "", AuditView(entries: entries))
    }

    static func timestamp(_ time: Int64) -> String {
        let date = IssueDate(unixTime: time)
        let seconds = ((time % 86_400) + 86_400) % 86_400
        return String(format: "%@ %02lld:%02lld UTC", date.description, seconds / 3600, seconds % 3600 / 60)
    }
}
