import KioskConfig
import Foundation
import Hummingbird
import KioskIntegers
import KioskModels
import KioskRPC

/// The reader's web kiosk at `/web/{app}/…`, the site `hashQuiosc` links to when an app's web kiosk is
/// Kiosk's own: the shelf, an edition's archive by month, an issue's pages, the reader's account.
///
/// `?hash=` (from `hashQuiosc`) on any page signs the reader in with a session cookie and redirects to the
/// page without it. Entitlement is decided by `KioskService.openIssueOnWeb`, as for `getEdicio`.
package struct ReaderKioskController {
    package init() {}

    package func addRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.get("/web/:app", use: page { try await $0.shelf() })
        group.get("/web/:app/compte", use: page { try await $0.account() })
        group.get("/web/:app/cerca", use: page { try await $0.search() })
        group.get("/web/:app/edicio/:edition", use: page { try await $0.archive() })
        group.get("/web/:app/edicio/:edition/:date", use: page { try await $0.issue() })
        group.post("/web/:app/sortir", use: signOut)
        group.post("/web/:app/sortir-arreu", use: signOutEverywhere)
    }

    /// A GET page: the `hash` sign-in first, then `render`, with the kiosk's refusals as pages.
    private func page(_ render: @escaping @Sendable (ReaderPage) async throws -> (name: String, title: String, content: Any?))
        -> @Sendable (Request, KioskRequestContext) async throws -> Response {
        { request, context in
            var page = try await ReaderPage(request: request, context: context)
            if let hash = request.uri.queryParameters.get("hash"), !hash.isEmpty {
                if let userID = context.environment.webKioskTokens.verify(hash, now: page.now),
                   let user = try await context.environment.service.store.user(id: userID) {
                    var response = Response(status: .seeOther, headers: [.location: WebPath.local(request.uri.path), .cacheControl: "no-store"])
                    response.setCookie(page.sessions.signIn(WebSessions.payload(String(user.id), passwordHash: user.passwordHash), now: page.now))
                    return response
                }
                page.notice = page.text["link_expired"]
            }
            do {
                let (name, title, content) = try await render(page)
                return page.response(.ok, template: name, title: title, content: content)
            } catch let error as KioskError {
                let status = KioskHTTPError.webStatus(for: error)
                let key = switch status {
                case .forbidden: "not_entitled"
                case .badRequest: "bad_request"
                case .tooManyRequests: "too_many_searches"
                default: "not_found"
                }
                let heading = page.text[key] ?? ""
                let hint: String? = switch error {
                case .invalidArgument(let parameter, let problem): "\(parameter): \(problem)"
                case .tooManySearches(let seconds): "\(page.text["try_again_in"] ?? "") \(seconds) s"
                default: status == .forbidden ? page.text["not_entitled_hint"] : nil
                }
                var response = page.response(status, template: "message", title: heading,
                                             content: MessageView(heading: heading, hint: hint, base: page.base))
                if case .tooManySearches(let seconds) = error { response.headers[.retryAfter] = String(seconds) }
                return response
            }
        }
    }

    /// Ends this session, on every instance.
    @Sendable private func signOut(_ request: Request, context: KioskRequestContext) async throws -> Response {
        try await signOut(request, context: context) { store, user, session, now in
            try await store.endSession(subject: SessionEnd.readerSubject(user.id), session: session.id, keptUntil: session.expires, at: now)
        }
    }

    /// Ends every session of the signed-in reader (other browsers included), on every instance.
    @Sendable private func signOutEverywhere(_ request: Request, context: KioskRequestContext) async throws -> Response {
        try await signOut(request, context: context) { store, user, session, now in
            try await store.endAllSessions(subject: SessionEnd.readerSubject(user.id),
                                           keptUntil: now + Int64(widening: context.runtime.readerSessions.lifetimeSeconds), at: now)
        }
    }

    private func signOut(_ request: Request, context: KioskRequestContext,
                         ending: (any KioskStore, User, WebSessions.Session, Int64) async throws -> Void) async throws -> Response {
        let page = try await ReaderPage(request: request, context: context)
        let token = try await WebForm(request).text("csrf")
        guard let session = page.session, let user = page.user, page.sessions.acceptsCSRF(token, binding: session.cookie) else {
            throw KioskHTTPError.forbidden("the form is missing its CSRF token or it does not match the session; reload the page and try again")
        }
        try await ending(context.environment.service.store, user, session, page.now)
        var response = Response(status: .seeOther, headers: [.location: page.base + "/", .cacheControl: "no-store"])
        response.setCookie(page.sessions.signOut())
        return response
    }
}

/// One request to the web kiosk: the app, the reader (if signed in), the language, and the page views.
struct ReaderPage: Sendable {
    let app: App
    let environment: KioskRPCEnvironment
    let sessions: WebSessions
    let language: WebLanguage
    let text: [String: String]
    let session: WebSessions.Session?
    let user: User?
    let base: String
    let now: Int64
    let parameters: Parameters
    /// The archive's `mes` parameter (`YYYY-MM`).
    let monthParameter: String?
    let searchText: String
    let contentSecurityPolicy: String
    var notice: String?

    init(request: Request, context: KioskRequestContext) async throws {
        environment = context.environment
        sessions = context.runtime.readerSessions
        now = environment.service.clock.now
        language = WebLanguage(acceptLanguage: request.headers[.acceptLanguage])
        text = language.strings
        parameters = context.parameters
        monthParameter = request.uri.queryParameters.get("mes")
        searchText = request.uri.queryParameters.get("q").map { String($0.prefix(500)) } ?? ""
        let appKey = context.parameters.get("app") ?? ""
        guard let app = try await environment.service.store.app(key: appKey) else {
            throw KioskHTTPError.notFound("no app \"\(appKey.prefix(64))\" in this kiosk")
        }
        self.app = app
        base = "/web/" + (appKey.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? appKey)
        let session = sessions.session(of: request, now: now)
        var user: User?
        let store = environment.service.store
        if let session, let userID = Int(WebSessions.subject(of: session.payload)),
           let stored = try await store.user(id: userID),
           session.payload == WebSessions.payload(String(stored.id), passwordHash: stored.passwordHash),
           try await !store.sessionHasEnded(subject: SessionEnd.readerSubject(userID), session: session.id, began: session.began) {
            user = stored
        }
        self.session = user == nil ? nil : session
        self.user = user
        contentSecurityPolicy = "default-src 'none'; img-src 'self' \(context.runtime.configuration.publicURL); "
            + "style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    private var readerID: Int? { user?.id }
    private func link(_ path: String) -> String { environment.links.link(to: path, now: now) }
    private func editionID() throws -> Int {
        guard let id = parameters.get("edition").flatMap({ Int($0) }) else { throw KioskError.editionNotOffered(editionID: 0, appKey: app.key) }
        return id
    }

    // MARK: Pages

    func shelf() async throws -> (name: String, title: String, content: Any?) {
        let listings = try await environment.service.editions(appKey: app.key)
        let editions = listings.map { listing in
            ShelfView.Edition(
                title: listing.offered.publicationName, edition: listing.offered.edition.name,
                date: listing.newest.date.description, coverURL: listing.newest.coverPath.map(link) ?? "",
                archiveURL: "\(base)/edicio/\(listing.offered.edition.id)",
                issueURL: "\(base)/edicio/\(listing.offered.edition.id)/\(listing.newest.date)",
                access: text[listing.offered.line.access == .free ? "free" : "subscribers"] ?? "")
        }
        return ("shelf", text["shelf"] ?? "", ShelfView(editions: editions))
    }

    func archive() async throws -> (name: String, title: String, content: Any?) {
        let service = environment.service
        let editionID = try editionID()
        let (offered, newest) = try await service.issues(appKey: app.key, editionID: editionID,
                                                         from: nil, direction: .descending, limit: 1)
        let chosen: IssueMonth?
        if let monthParameter, !monthParameter.isEmpty {
            guard let month = IssueMonth(monthParameter) else {
                throw KioskError.invalidArgument(parameter: "mes", problem: "a month is written YYYY-MM, years 0001 to 9999")
            }
            chosen = month
        } else {
            chosen = newest.first.map { IssueMonth($0.date) }
        }
        guard let month = chosen else { throw KioskError.noPublishedIssue(editionID: editionID, date: nil) }
        let (_, inMonth) = try await service.issues(appKey: app.key, editionID: editionID,
                                                    from: month.last, direction: .descending, limit: 31)
        let before = month.first == .earliest ? [] : try await service.issues(
            appKey: app.key, editionID: editionID, from: month.first.adding(days: -1), direction: .descending, limit: 1).1
        let after = month.last == .latest ? [] : try await service.issues(
            appKey: app.key, editionID: editionID, from: month.last.adding(days: 1), direction: .ascending, limit: 1).1
        let archiveURL = "\(base)/edicio/\(editionID)"
        let view = ArchiveView(
            title: offered.publicationName, edition: offered.edition.name, monthLabel: month.label(language),
            previousURL: before.first.map { "\(archiveURL)?mes=\(IssueMonth($0.date))" },
            previousLabel: before.first.map { IssueMonth($0.date).label(language) },
            nextURL: after.first.map { "\(archiveURL)?mes=\(IssueMonth($0.date))" },
            nextLabel: after.first.map { IssueMonth($0.date).label(language) },
            issues: inMonth.filter { month.contains($0.date) }.map {
                ArchiveView.Issue(date: $0.date.description, url: "\(archiveURL)/\($0.date)", coverURL: $0.coverPath.map(link) ?? "")
            })
        return ("archive", "\(text["archive"] ?? "") · \(offered.edition.name)", view)
    }

    func issue() async throws -> (name: String, title: String, content: Any?) {
        let editionID = try editionID()
        guard let date = parameters.get("date").flatMap({ IssueDate($0) }) else {
            throw KioskError.noPublishedIssue(editionID: editionID, date: nil)
        }
        let (offered, contents) = try await environment.service.openIssueOnWeb(appKey: app.key, userID: readerID,
                                                                               editionID: editionID, date: date)
        let bundle = try await environment.bundles.bundle(for: contents, offered: offered)
        let view = IssueView(
            title: offered.publicationName, edition: offered.edition.name, date: date.description,
            archiveURL: "\(base)/edicio/\(editionID)?mes=\(IssueMonth(date))",
            bundleURL: link(bundle.path), bundleSize: String(bundle.size), bundleSHA256: bundle.sha256,
            pages: contents.pages.map {
                IssueView.Page(number: $0.number, section: $0.section.name, jpgURL: link($0.files.jpg),
                               jpgAURL: link($0.files.jpgA), pdfURL: link($0.files.pdf))
            })
        return ("issue", "\(offered.edition.name) · \(date)", view)
    }

    /// The search box: pages of the app's editions whose text matches, as `cercar` finds them.
    func search() async throws -> (name: String, title: String, content: Any?) {
        var view = SearchView(query: searchText, hits: [])
        if !searchText.isEmpty {
            do {
                let results = try await environment.service.search(appKey: app.key, by: .webReader(userID: readerID), text: searchText, editionID: nil,
                                                                   from: nil, through: nil, limit: PageSearch.defaultLimit)
                view.hits = results.map { result in
                    let hit = result.hit
                    return SearchView.Hit(title: result.offered.publicationName, edition: result.offered.edition.name,
                                          date: hit.date.description, page: hit.pageNumber,
                                          url: "\(base)/edicio/\(hit.editionID)/\(hit.date)#p\(hit.pageNumber)", fragment: hit.fragment,
                                          hasExcerpt: !hit.fragment.isEmpty)
                }
            } catch KioskError.invalidArgument(_, let problem) {
                view.problem = problem
            }
        }
        return ("search", text["search_results"] ?? "", view)
    }

    func account() async throws -> (name: String, title: String, content: Any?) {
        guard let user else { return ("account", text["account"] ?? "", nil) }
        let subscriptions = try await environment.service.subscriptions(appKey: app.key, userID: user.id)
        let purchases = try await purchases(of: user)
        let view = AccountView(
            name: user.name.isEmpty ? user.username : user.name, username: user.username, email: user.email,
            hasSubscriptions: !subscriptions.isEmpty, hasPurchases: !purchases.isEmpty, purchases: purchases,
            csrf: session.map { sessions.csrfToken($0) } ?? "",
            subscriptions: subscriptions.map {
                AccountView.Subscription(edition: "\($0.edition.publicationName) · \($0.edition.edition.name)", until: $0.until.description)
            })
        return ("account", text["account"] ?? "", view)
    }

    /// The store purchases the reader holds in this app (not those of a device only: the web has none), each
    /// with its state now and what it gives: a subscription's last day, a pack's credits left, the issues bought.
    private func purchases(of user: User) async throws -> [AccountView.Purchase] {
        let store = environment.service.store
        let held = try await store.purchases(appKey: app.key, userID: user.id, deviceKey: "")
        var editionNames: [Int: String] = [:]
        for editionID in Set(held.flatMap { $0.purchase.issues.map(\.editionID) }) {
            editionNames[editionID] = try await store.offeredEdition(appKey: app.key, editionID: editionID)
                .map { "\($0.publicationName) · \($0.edition.name)" }
        }
        return held.map { held in
            let purchase = held.purchase, product = purchase.product
            let state = purchase.state(at: now)
            let details: String
            switch product.kind {
            case .subscription:
                details = purchase.accessEnd > 0 ? "\(text["until"] ?? "") \(IssueDate(unixTime: purchase.accessEnd - 1))" : ""
            case .credits:
                details = "\(purchase.unspentCredits) \(text["credits_left"] ?? "") \(product.credits)"
            case .issue:
                details = purchase.issues.map { "\(editionNames[$0.editionID] ?? String($0.editionID)) · \($0.date)" }
                    .joined(separator: ", ")
            }
            let stateName = switch state {
            case .active: "purchase_active"
            case .expired: "purchase_expired"
            case .revoked: "purchase_revoked"
            }
            return AccountView.Purchase(product: product.id, kind: text["kind_" + product.kind.rawValue] ?? product.kind.rawValue,
                                        state: text[stateName] ?? state.rawValue, stateName: stateName, details: details)
        }
    }

    // MARK: Answer

    func response(_ status: HTTPResponse.Status, template: String, title: String, content: Any?) -> Response {
        let frame = PageFrame(
            lang: language.rawValue, t: text, title: title, appName: app.name, base: base,
            reader: user.map { user in
                PageFrame.Reader(name: user.name.isEmpty ? user.username : user.name,
                                 csrf: session.map { sessions.csrfToken($0) } ?? "")
            },
            notice: notice, query: searchText, content: content)
        return WebTemplates.response(status, template: template, context: frame, language: language,
                                     contentSecurityPolicy: contentSecurityPolicy)
    }
}

extension IssueMonth {
    func label(_ language: WebLanguage) -> String { "\(language.months[month - 1]) \(year)" }
}
