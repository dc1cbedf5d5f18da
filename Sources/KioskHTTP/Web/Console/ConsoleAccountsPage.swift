import KioskRPC
import Foundation
import Hummingbird
import KioskConfig
import KioskIntegers
import KioskModels

/// The console's accounts page (`/admin/accounts`, operators only): API clients, publishers and operators
/// as stored. With `catalogue_source: console` they are added, given a new password (typed twice, or
/// generated and shown once), an operator's role changed, removed (never the signed-in operator's own
/// account: since only an operator may change accounts, one always remains); with `file` they are shown only. Every
/// change is validated like the file's accounts, written through the catalogue sync (so every instance
/// authenticates with it at its next request) and audited without any password or hash.
extension ConsolePage {
    func accounts(notice: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        try requireConfiguring()
        let stored = try await database.accounts()
        let editable = runtime.configuration.catalogueSource == .console
        let view = AccountsView(editable: editable, kinds: AccountKind.allCases.map { kind in
            AccountsView.Kind(
                kind: kind.rawValue, title: text["kind_" + kind.rawValue] ?? kind.rawValue, isOperator: kind == .operator,
                isPublisher: kind == .publisher,
                editable: editable,
                accounts: stored.filter { $0.kind == kind }.map {
                    .init(kind: kind.rawValue, username: $0.username, role: $0.role.map { text[$0.rawValue] ?? $0.rawValue },
                          isEditor: $0.role == .editor, isSelf: kind == .operator && $0.username == operatorAccount.username,
                          isOperator: kind == .operator, editable: editable,
                          scope: kind == .publisher ? Self.scopeRow($0.scope) : nil)
                })
        })
        return render("console_accounts", text["accounts"] ?? "", view, notice: notice, status: status)
    }

    /// One change to the accounts (`action`: `add`, `password`, `role`, `scope`, `remove`), made by
    /// `AccountAdministration` as the CLI makes it; never the signed-in operator's own role or account.
    func changeAccount(_ request: Request) async throws -> Response {
        try requireEditableCatalogue("accounts_from_file")
        let form = self.form ?? WebForm.empty
        func refuse(_ message: String) async throws -> Response { try await accounts(notice: message, status: .unprocessableContent) }
        guard let kind = AccountKind(rawValue: form.text("kind")) else { return try await refuse("kind: must be api_client, publisher or operator") }
        let username = form.text("username")
        var generated: String?
        func password() -> Result<String, AccountAdministration.Refused> {
            switch Self.chosenPassword(form) {
            case .typed(let typed): return .success(typed)
            case .generate:
                let made = AccountAdministration.generatedPassword()
                generated = made
                return .success(made)
            case .refused(let problem): return .failure(.invalid(problem))
            }
        }
        let change: AccountAdministration.Change
        switch form.text("action") {
        case "add":
            var scope: PublisherScope?
            if kind == .publisher {
                switch Self.chosenScope(form) {
                case .success(let chosen): scope = chosen
                case .failure(let refused): return try await refuse(refused.message)
                }
            }
            switch password() {
            case .success(let chosen):
                change = .add(kind, username: username, password: chosen, role: OperatorRole(rawValue: form.text("role")), scope: scope)
            case .failure(let refused): return try await refuse(refused.description)
            }
        case "password":
            switch password() {
            case .success(let chosen): change = .password(kind, username: username, password: chosen)
            case .failure(let refused): return try await refuse(refused.description)
            }
        case "scope":
            guard kind == .publisher else { return try await refuse("scope: only a publisher has one") }
            switch Self.chosenScope(form) {
            case .success(let chosen): change = .scope(publisher: username, chosen)
            case .failure(let refused): return try await refuse(refused.message)
            }
        case "role":
            guard kind == .operator, let role = OperatorRole(rawValue: form.text("role")) else {
                return try await refuse("role: an operator's role is operator or editor")
            }
            change = .role(operator: username, role)
        case "remove":
            change = .remove(kind, username: username)
        default:
            throw KioskHTTPError.badRequest("unknown action \"\(form.text("action").prefix(32))\"")
        }
        let administration = AccountAdministration(configuration: runtime.configuration, database: database,
                                                   passwords: runtime.environment.service.passwords,
                                                   clock: runtime.environment.service.clock, actor: operatorAccount.username)
        do {
            try await administration.apply(change, protecting: operatorAccount.username)
        } catch AccountAdministration.Refused.notYourself {
            return try await refuse(text["not_yourself"] ?? "")
        } catch let refused as AccountAdministration.Refused {
            return try await refuse(refused.description)
        }
        if let generated {
            let subject = Account(kind: kind, username: username, passwordHash: "").label
            return try await accounts(notice: (text["generated_password"] ?? "") + " \(subject): \(generated)")
        }
        return redirect("/admin/accounts#\(kind.rawValue)-\(username.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
    }

    /// Ends every session of an operator (the form's `username`; one's own included), on every instance,
    /// whoever owns the catalogue; audited.
    func endOperatorSessions() async throws -> Response {
        try requireConfiguring()
        let username = (form ?? WebForm.empty).text("username")
        guard try await runtime.accounts.current().operators[username] != nil else {
            return try await accounts(notice: "\(AccountKind.operator.rawValue):\(username): no such account", status: .unprocessableContent)
        }
        try await database.endAllSessions(subject: SessionEnd.operatorSubject(username),
                                          keptUntil: now + Int64(widening: sessions.lifetimeSeconds), at: now)
        try await audit("account.end_sessions", Account(kind: .operator, username: username, passwordHash: "").label, after: "every session ended")
        return redirect(username == operatorAccount.username ? "/admin/sign-in" : "/admin/accounts#operator-\(username.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
    }

    static func scopeRow(_ scope: PublisherScope?) -> AccountsView.Scope {
        guard let scope else { return .init(shown: "", publications: "", editions: "", every: true) }
        return .init(shown: scope.description, publications: scope.publications.sorted().map(String.init).joined(separator: ","),
                     editions: scope.editions.sorted().map(String.init).joined(separator: ","), every: false)
    }

    /// The form's scope: nil with `every` checked; otherwise its `publications` and `editions` (comma
    /// lists of ids; both empty: nothing).
    static func chosenScope(_ form: WebForm) -> Result<PublisherScope?, ScopeRefused> {
        if form.text("every") == "1" { return .success(nil) }
        guard let publications = PublisherScope.ids(Substring(form.text("publications"))),
              let editions = PublisherScope.ids(Substring(form.text("editions"))) else {
            return .failure(ScopeRefused())
        }
        return .success(PublisherScope(publications: publications, editions: editions))
    }

    struct ScopeRefused: Error {
        let message = "scope: publications and editions are lists of ids separated by commas, e.g. 1,2"
    }

    enum PasswordChoice: Equatable {
        case typed(String)
        case generate
        case refused(String)
    }

    /// The form's `password` typed twice (`password2`), or, with both left empty, one to generate.
    static func chosenPassword(_ form: WebForm) -> PasswordChoice {
        let password = form["password"] ?? "", again = form["password2"] ?? ""
        if password.isEmpty && again.isEmpty { return .generate }
        guard password == again else { return .refused("password: the two passwords differ") }
        return .typed(password)   // its rule is `AccountAdministration`'s
    }
}

struct AccountsView {
    struct Row {
        var kind, username: String; var role: String?; var isEditor, isSelf, isOperator, editable: Bool
        /// A publisher's scope as shown, and as its form's fields hold it.
        var scope: Scope?
    }
    struct Scope { var shown, publications, editions: String; var every: Bool }
    struct Kind { var kind, title: String; var isOperator, isPublisher, editable: Bool; var accounts: [Row] }
    var editable: Bool
    var kinds: [Kind]
}
