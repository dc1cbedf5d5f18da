import Foundation
import Hummingbird
import KioskConfig
import KioskModels

/// The console's webhook endpoints (`/admin/webhooks`) and one endpoint's delivery log
/// (`/admin/webhook?id=N`).
///
/// An `operator` sees and acts on every endpoint, with its owner; an `editor` on their own only, and only
/// for the events a publisher may read (issues and editions), since readers and purchases are an operator's
/// (as on the purchases page). An endpoint made here gets a new secret, shown once on the answer page. The
/// configuration file's endpoints keep their URL, types and secrets there (no delete or rotation here); their
/// state is the store's, so they are enabled, disabled, tested and sent again here like the console's. Every
/// action is a form with the session's CSRF token and is audited without any secret.
extension ConsolePage {
    /// The most tries the delivery log shows.
    static let deliveryLogLimit = 200
    /// An endpoint failing for longer than this (seconds) is named on the dashboard.
    static let failingNoticeAfter: Int64 = 86_400
    /// The most endpoints one operator may add here: each is a worker's sends on every matching event, so an
    /// account (or a stolen session) cannot make the server post without end.
    static let consoleEndpointsPerOwner = 25

    /// The types an endpoint of this role may receive: an editor's are those a publisher reads in the stream.
    var webhookTypes: [EventType] {
        let types = role.mayConfigure ? EventReader.operator.visibleTypes : EventReader.publisher(scope: nil).visibleTypes
        return EventType.allCases.filter { types.contains($0) }
    }

    /// The endpoints this operator may see: every one for an `operator`, their own for an `editor`.
    func visibleWebhooks() async throws -> [WebhookEndpoint] {
        try await database.webhookEndpoints(owner: role.mayConfigure ? nil : operatorAccount.username)
    }

    func webhooks(notice: String? = nil, status: HTTPResponse.Status = .ok, entered: WebhooksView.Entered = .init(),
                  secret: WebhooksView.Secret? = nil) async throws -> Response {
        let endpoints = try await visibleWebhooks()
        let view = WebhooksView(
            showOwner: role.mayConfigure, hasEndpoints: !endpoints.isEmpty, endpoints: endpoints.map(webhookRow),
            types: webhookTypes.map { .init(value: $0.rawValue, checked: entered.types.contains($0)) },
            everyTypeAllowed: role.mayConfigure, entered: entered, secret: secret)
        return render("console_webhooks", text["webhooks"] ?? "", view, notice: notice, status: status)
    }

    /// One endpoint and its delivery log, newest try first; "send again" on each event's newest try.
    func webhook(_ request: Request) async throws -> Response {
        try await webhookPage(try await webhookEndpoint(request.uri.queryParameters.get("id") ?? ""))
    }

    private func webhookPage(_ endpoint: WebhookEndpoint, notice: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        var seen = Set<Int64>()
        let attempts = try await database.deliveryLog(endpointID: endpoint.id, limit: Self.deliveryLogLimit).map { attempt in
            WebhookView.Attempt(
                time: Self.timestamp(attempt.time), eventID: attempt.eventID, publicID: "evt_\(attempt.eventID)",
                type: attempt.eventType.rawValue, attempt: attempt.attempt,
                status: attempt.status.map(String.init) ?? (text["no_answer"] ?? ""),
                delivered: attempt.status.map { (200..<300).contains($0) } ?? false,
                latency: "\(attempt.latencyMilliseconds) ms", answer: attempt.answer, sendAgain: seen.insert(attempt.eventID).inserted)
        }
        let view = WebhookView(endpoint: webhookRow(endpoint), hasAttempts: !attempts.isEmpty, attempts: attempts)
        return render("console_webhook", "\(text["webhook"] ?? "") \(endpoint.name)", view, notice: notice, status: status)
    }

    /// An action on the endpoints (`action`): `add`; or, on the endpoint `id`, `enable`, `disable`, `delete`,
    /// `test`, `rotate`, `finish_rotation`, `send_again` (with `event`).
    func changeWebhook() async throws -> Response {
        let form = self.form ?? WebForm.empty
        let action = form.text("action")
        if action == "add" { return try await addWebhook(form) }
        guard ["enable", "disable", "delete", "test", "rotate", "finish_rotation", "send_again"].contains(action) else {
            throw KioskHTTPError.badRequest("unknown action \"\(action.prefix(32))\"")
        }
        var endpoint = try await webhookEndpoint(form.text("id"))
        let before = Self.describe(endpoint), subject = Self.webhookSubject(endpoint)
        let list = "/admin/webhooks#webhook-\(endpoint.id)", detail = "/admin/webhook?id=\(endpoint.id)"
        switch action {
        case "enable", "disable":
            let enable = action == "enable"
            guard endpoint.enabled != enable else { return redirect(list) }
            endpoint = try await change(endpoint, enable ? .enable : .disable(reason: "disabled by \(operatorAccount.username) in the console"))
            try await audit("webhook." + action, subject, before: before, after: Self.describe(endpoint))
            return redirect(list)
        case "delete":
            try requireConsoleEndpoint(endpoint)
            guard try await database.deleteWebhookEndpoint(id: endpoint.id) else { throw KioskHTTPError.notFound(text["no_such_webhook"] ?? "") }
            try await audit("webhook.delete", subject, before: before, after: "deleted")
            return redirect("/admin/webhooks")
        case "rotate":
            try requireConsoleEndpoint(endpoint)
            guard endpoint.secrets.count < 2 else {
                return try await webhooks(notice: text["finish_rotation_first"], status: .unprocessableContent)
            }
            let secret = runtime.console.webhooks.newSecret()
            endpoint = try await change(endpoint, .secrets([secret] + endpoint.secrets))
            try await audit("webhook.rotate", subject, before: before, after: Self.describe(endpoint))
            return try await webhooks(secret: .init(name: endpoint.name, value: secret, rotated: true))
        case "finish_rotation":
            try requireConsoleEndpoint(endpoint)
            guard endpoint.secrets.count > 1, let current = endpoint.secrets.first else { return redirect(list) }
            endpoint = try await change(endpoint, .secrets([current]))
            try await audit("webhook.finish_rotation", subject, before: before, after: Self.describe(endpoint))
            return redirect(list)
        case "test":
            let event = try await database.appendEvent(
                NewEvent(.webhookTest, EventBody(summary: "a test event sent from the console by \(operatorAccount.username)")), at: now)
            guard try await database.redeliver(eventID: event.id, endpointID: endpoint.id, at: now) else {
                throw KioskHTTPError.notFound(text["no_such_webhook"] ?? "")
            }
            try await audit("webhook.test", subject, after: "\(event.publicID) queued")
            return redirect(detail)
        default:   // send_again
            guard let eventID = KioskEvent.position(ofPublicID: Substring(form.text("event"))) else {
                throw KioskHTTPError.badRequest("event must be an event id such as evt_12")
            }
            guard try await database.redeliver(eventID: eventID, endpointID: endpoint.id, at: now) else {
                return try await webhookPage(endpoint, notice: "evt_\(eventID): \(text["event_gone"] ?? "")", status: .unprocessableContent)
            }
            try await audit("webhook.send_again", subject, after: "evt_\(eventID) queued")
            return redirect(detail)
        }
    }

    /// `endpoint` after `change`, stored on its own so that what deliveries recorded meanwhile stays.
    private func change(_ endpoint: WebhookEndpoint, _ change: WebhookEndpointChange) async throws -> WebhookEndpoint {
        guard let changed = try await database.changeWebhookEndpoint(id: endpoint.id, change) else {
            throw KioskHTTPError.notFound(text["no_such_webhook"] ?? "")
        }
        return changed
    }

    /// A new console endpoint of this operator: checked (name, URL's form and destination, types), saved
    /// with a new secret, which the answer shows once.
    private func addWebhook(_ form: WebForm) async throws -> Response {
        var types = Set<EventType>()
        for type in EventType.allCases where form["type_" + type.rawValue] != nil {
            guard webhookTypes.contains(type) else { throw KioskHTTPError.forbidden(text["not_allowed"] ?? "") }
            types.insert(type)
        }
        let entered = WebhooksView.Entered(name: form.text("name"), url: form.text("url"), types: types)
        if let problem = webhookProblem(entered) {
            return try await webhooks(notice: problem, status: .unprocessableContent, entered: entered)
        }
        let owned = try await database.webhookEndpoints(owner: operatorAccount.username).filter { $0.source == .console }
        guard owned.count < Self.consoleEndpointsPerOwner else {
            let notice = "\(text["too_many_webhooks"] ?? "") (\(Self.consoleEndpointsPerOwner))"
            return try await webhooks(notice: notice, status: .unprocessableContent, entered: entered)
        }
        let secret = runtime.console.webhooks.newSecret()
        let endpoint = try await database.saveWebhookEndpoint(WebhookEndpoint(
            source: .console, name: entered.name, owner: operatorAccount.username, url: entered.url, types: types,
            secrets: [secret], createdAt: now))
        try await audit("webhook.add", Self.webhookSubject(endpoint), after: Self.describe(endpoint))
        return try await webhooks(secret: .init(name: endpoint.name, value: secret, rotated: false))
    }

    /// What is wrong with a new endpoint, in the form's words; nil when it will do.
    private func webhookProblem(_ entered: WebhooksView.Entered) -> String? {
        guard (1...100).contains(entered.name.count) else { return "\(text["name"] ?? ""): \(text["webhook_name_rule"] ?? "")" }
        if let problem = WebhookEndpoint.urlProblem(entered.url)
            ?? runtime.console.webhooks.destinationProblem(entered.url, allowHosts: runtime.configuration.webhooks.allowHosts) {
            return "URL: \(problem)"
        }
        guard role.mayConfigure || !entered.types.isEmpty else { return text["choose_types"] ?? "" }
        return nil
    }

    /// The endpoint `id` names, if this operator may see it: `404` when there is none, `403` when it is another's.
    private func webhookEndpoint(_ id: String) async throws -> WebhookEndpoint {
        guard let number = Int64(id), let endpoint = try await database.webhookEndpoint(id: number) else {
            throw KioskHTTPError.notFound(text["no_such_webhook"] ?? "")
        }
        guard role.mayConfigure || endpoint.owner == operatorAccount.username else {
            throw KioskHTTPError.forbidden(text["not_allowed"] ?? "")
        }
        return endpoint
    }

    /// A file endpoint's URL, types and secrets are the file's: `409` saying so.
    private func requireConsoleEndpoint(_ endpoint: WebhookEndpoint) throws {
        guard endpoint.source == .console else { throw KioskHTTPError(.conflict, text["webhook_from_file"] ?? "") }
    }

    /// Disabled endpoints and endpoints failing for over a day that this operator sees, for the dashboard.
    func webhookTroubles() async throws -> [DashboardView.Webhook] {
        try await visibleWebhooks().compactMap { endpoint in
            let failing = endpoint.failingSince.flatMap { now - $0 > Self.failingNoticeAfter ? Self.timestamp($0) : nil }
            guard !endpoint.enabled || failing != nil else { return nil }
            return .init(name: endpoint.name, url: "/admin/webhook?id=\(endpoint.id)",
                         disabled: endpoint.enabled ? nil : endpoint.disabledReason ?? "—", failingSince: failing)
        }
    }

    private func webhookRow(_ endpoint: WebhookEndpoint) -> WebhooksView.Endpoint {
        let fromFile = endpoint.source == .file
        return WebhooksView.Endpoint(
            id: endpoint.id, name: endpoint.name, url: endpoint.url, owner: endpoint.owner,
            types: endpoint.types.isEmpty ? (text["every_type"] ?? "") : endpoint.types.map(\.rawValue).sorted().joined(separator: ", "),
            fromFile: fromFile, enabled: endpoint.enabled, disabledReason: endpoint.enabled ? nil : endpoint.disabledReason ?? "—",
            failingSince: endpoint.failingSince.map(Self.timestamp), rotating: endpoint.secrets.count > 1,
            detail: "/admin/webhook?id=\(endpoint.id)")
    }

    /// What the audit log records of an endpoint: never a secret, only how many there are.
    static func describe(_ endpoint: WebhookEndpoint) -> String {
        let state = endpoint.enabled ? "enabled" : "disabled (\(endpoint.disabledReason ?? "no reason"))"
        let types = endpoint.types.isEmpty ? "every type" : endpoint.types.map(\.rawValue).sorted().joined(separator: " ")
        return "\(state); \(endpoint.url); \(types); owner \(endpoint.owner); \(endpoint.secrets.count == 1 ? "1 secret" : "\(endpoint.secrets.count) secrets")"
    }

    static func webhookSubject(_ endpoint: WebhookEndpoint) -> String { "webhook \(endpoint.id) \(endpoint.name)" }
}

struct WebhooksView {
    struct Endpoint {
        var id: Int64; var name, url, owner, types: String
        var fromFile, enabled: Bool
        /// Why it is disabled; nil while enabled.
        var disabledReason: String?
        var failingSince: String?
        /// Two secrets: deliveries carry a signature by each until the rotation is finished.
        var rotating: Bool
        var detail: String
    }
    struct TypeChoice { var value: String; var checked: Bool }
    /// What the add form held, given back with its problem.
    struct Entered { var name = "", url = ""; var types = Set<EventType>() }
    /// A secret made just now, shown this once.
    struct Secret { var name, value: String; var rotated: Bool }
    var showOwner, hasEndpoints: Bool
    var endpoints: [Endpoint]
    var types: [TypeChoice]
    /// Whether no type checked means every type (an operator's); an editor must choose.
    var everyTypeAllowed: Bool
    var entered: Entered
    var secret: Secret?
}

struct WebhookView {
    struct Attempt {
        var time: String; var eventID: Int64; var publicID, type: String; var attempt: Int
        var status: String; var delivered: Bool; var latency, answer: String
        /// The newest try of its event, which carries the "send again" button.
        var sendAgain: Bool
    }
    var endpoint: WebhooksView.Endpoint
    var hasAttempts: Bool
    var attempts: [Attempt]
}
