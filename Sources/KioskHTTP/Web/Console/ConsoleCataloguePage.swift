import Foundation
import Hummingbird
import KioskModels

/// The catalogue part of the console's apps page (`POST /admin/catalogue`, operators only): publications
/// and editions added or renamed, apps added. Like every console change it needs `catalogue_source:
/// console`, is validated like the configuration file, written through the catalogue sync (every instance
/// answers from it at once) and audited. Nothing is removed here: an edition may have issues, downloads and
/// subscriptions; removing one is a `config apply` of a file without it, on purpose.
extension ConsolePage {
    /// The publications with their editions, for the apps page.
    func catalogueView(_ catalogue: Catalogue, editable: Bool) -> AppsView.Catalogue {
        AppsView.Catalogue(
            editable: editable, today: IssueDate(unixTime: now).description,
            publications: catalogue.publications.sorted { $0.id < $1.id }.map { publication in
                AppsView.Publication(id: publication.id, name: publication.name, editable: editable, editions: catalogue.editions
                    .filter { $0.publicationID == publication.id }.sorted { $0.id < $1.id }
                    .map { AppsView.EditionRow(id: $0.id, name: $0.name, createdOn: $0.createdOn.description, editable: editable) })
            })
    }

    /// One change (`action`: `add_publication`, `rename_publication`, `add_edition`, `rename_edition`, `add_app`).
    func changeCatalogue() async throws -> Response {
        try requireEditableCatalogue("managed_by_file")
        let form = self.form ?? WebForm.empty
        var catalogue = try await database.catalogue()
        let action = form.text("action"), name = form.text("name").trimmingCharacters(in: .whitespaces)
        func refused(_ problem: String) async throws -> Response { try await apps(notice: problem, status: .unprocessableContent) }
        let subject: String, before: String
        switch action {
        case "add_publication":
            guard let id = Int(form.text("id")) else { return try await refused("A new publication, id: must be a whole number") }
            catalogue.publications.append(Publication(id: id, name: name))
            (subject, before) = ("publication \(id)", "")
        case "rename_publication":
            let id = Int(form.text("id")) ?? 0
            guard let index = catalogue.publications.firstIndex(where: { $0.id == id }) else { throw KioskHTTPError.notFound("no publication \(id)") }
            (subject, before) = ("publication \(id)", catalogue.publications[index].name)
            catalogue.publications[index].name = name
        case "add_edition":
            guard let id = Int(form.text("id")) else { return try await refused("A new edition, id: must be a whole number") }
            let publicationID = Int(form.text("publication")) ?? 0
            guard catalogue.publications.contains(where: { $0.id == publicationID }) else {
                return try await refused("Edition \(id), publication: publication \(publicationID) is not defined")
            }
            guard let createdOn = IssueDate(form.text("created_on")) else {
                return try await refused("Edition \(id), created on: must be a date as YYYY-MM-DD")
            }
            catalogue.editions.append(Edition(id: id, publicationID: publicationID, name: name, createdOn: createdOn))
            (subject, before) = ("edition \(id)", "")
        case "rename_edition":
            let id = Int(form.text("id")) ?? 0
            guard let index = catalogue.editions.firstIndex(where: { $0.id == id }) else { throw KioskHTTPError.notFound("no edition \(id)") }
            (subject, before) = ("edition \(id)", catalogue.editions[index].name)
            catalogue.editions[index].name = name
        case "add_app":
            let key = form.text("key")
            catalogue.apps.append(App(key: key, name: name, demoQuota: 0))
            (subject, before) = ("app \(key)", "")
        default:
            throw KioskHTTPError.badRequest("unknown action \"\(action.prefix(32))\"")
        }
        if let problem = problem(with: catalogue) { return try await refused(problem) }
        if try await !database.syncCatalogue(catalogue, dryRun: false).isEmpty {
            try await audit("catalogue." + action, subject, before: before, after: name)
        }
        return redirect(action == "add_app" ? "/admin/apps#app-\(form.text("key"))" : "/admin/apps#catalogue")
    }
}
