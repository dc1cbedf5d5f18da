import Logging
import KioskIntegers
import KioskModels
import XMLRPC

/// The six methods of the 2012 wire contract (SPEC.md, "Methods"), and `epquiosc.cercar`, added by
/// Kiosk: names, parameter order and member names are fixed; every member is a `string`.
public enum KioskMethods {
    public static func register<Context: KioskRPCContext>(into dispatcher: inout XMLRPCDispatcher<Context>) {
        dispatcher.register(
            "epquiosc.getEdicions", signature: [["array", "string", "string"]],
            help: "getEdicions(appkey, idenkey): the editions the app offers that have a published issue, by ordre.",
            { params, context in try await getEdicions(params, context.environment) })
        dispatcher.register(
            "epquiosc.getDarrersEdicio",
            signature: [["array", "string", "string", "string", "string", "int", "string"],
                        ["array", "string", "string", "int", "string", "int", "string"]],
            help: "getDarrersEdicio(appkey, idenkey, edicio_id, data, num, direccio): up to num (1-100, default 7) "
                + "published issues on or before data, newest first (DESC, default), or on or after it, oldest first (ASC).",
            { params, context in try await getDarrersEdicio(params, context.environment) })
        dispatcher.register(
            "epquiosc.getEdicio",
            signature: [["struct", "string", "string", "string", "string", "string", "string"],
                        ["struct", "string", "string", "int", "string", "string", "string"]],
            help: "getEdicio(appkey, idenkey, edicio_id, data, usuari_id, os): the pages and bundle of one issue, "
                + "for an entitled identity; records the download.",
            { params, context in try await getEdicio(params, context.environment) })
        dispatcher.register(
            "epusuaris.registrar",
            signature: [["struct", "string", "string", "string", "string", "array", "string"],
                        ["struct", "string", "string", "string", "string", "struct", "string"],
                        ["struct", "string", "string", "string", "string", "string", "string"]],
            help: "registrar(app_key, disp_key, username, password, disp_info, os): signs a device in, "
                + "with a user when credentials are given; returns the identity key and what it may download.",
            { params, context in try await registrar(params, context.environment) })
        dispatcher.register(
            "epusuaris.consumirDemo",
            signature: [["struct", "string", "string", "string", "array", "string", "int"],
                        ["struct", "string", "string", "string", "struct", "string", "int"],
                        ["struct", "string", "string", "string", "string", "string", "int"],
                        ["struct", "string", "string", "string", "struct", "string", "string"]],
            help: "consumirDemo(app_key, disp_key, iden_key, disp_info, os, max_demos): grants one free download "
                + "when the device has demos left (servir_demo \"1\").",
            { params, context in try await consumirDemo(params, context.environment) })
        dispatcher.register(
            "epusuaris.hashQuiosc", signature: [["struct", "string", "string", "string", "string"]],
            help: "hashQuiosc(appkey, username, password, seccioQ): a link opening the web kiosk at a section, "
                + "signed in when credentials are given.",
            { params, context in try await hashQuiosc(params, context) })
        dispatcher.register(
            "epquiosc.cercar",
            signature: [["array", "string", "string", "string", "string", "string", "string", "int"],
                        ["array", "string", "string", "string", "int", "string", "string", "int"]],
            help: "cercar(appkey, idenkey, text, edicio_id, desde, fins, num): pages of the editions the app offers "
                + "(or of edicio_id) whose text matches, newest first, up to num (1-100, default 20); each with id, titol, "
                + "edicio, data, numero and fragment (HTML, matches in <b>). Words are AND-ed, \"a phrase\" matches "
                + "in order, word* is a prefix; accents and case do not matter.",
            { params, context in try await cercar(params, context.environment) })
    }

    // MARK: epquiosc

    static func getEdicions(_ params: XMLRPCParameters, _ env: KioskRPCEnvironment) async throws -> XMLRPCValue {
        let call = try CatalogueCall.getEdicions(params)
        let service = env.service
        let now = service.clock.now
        let (answer, _) = try await env.cachedAnswer(call.cacheMethod, call.cacheArguments, versioned: true, now: now) {
            let listings = try await service.editions(appKey: call.appKey)
            return .array(listings.map { listing in
                var members = editionMembers(listing.offered, date: listing.newest.date)
                members.insert(XMLRPCMember("ordre", .string(String(listing.offered.line.order))), at: 5)
                members.append(XMLRPCMember("portada", .string(cover(listing.newest, env, now))))
                return .structure(members)
            })
        }
        call.noteCaller(in: service)
        return answer
    }

    static func getDarrersEdicio(_ params: XMLRPCParameters, _ env: KioskRPCEnvironment) async throws -> XMLRPCValue {
        let (call, listing) = try CatalogueCall.listingCall(params)
        let service = env.service
        let now = service.clock.now
        let (answer, _) = try await env.cachedAnswer(call.cacheMethod, call.cacheArguments, versioned: true, now: now) {
            let (offered, issues) = try await service.issues(
                appKey: call.appKey, editionID: listing.editionID, from: listing.date,
                direction: listing.direction, limit: listing.count)
            return .array(issues.map { issue in
                .structure(editionMembers(offered, date: issue.date) + [XMLRPCMember("portada", .string(cover(issue, env, now)))])
            })
        }
        call.noteCaller(in: service)
        return answer
    }

    static func getEdicio(_ params: XMLRPCParameters, _ env: KioskRPCEnvironment) async throws -> XMLRPCValue {
        let appKey = try params.string(0, "appkey")
        let identityKey = try params.string(1, "idenkey")
        let editionID = try params.int(2, "edicio_id", in: 1...Int(widening: Int32.max))
        guard let date = try optionalDate(params, 3, "data") else {
            throw XMLRPCFault.invalidParameter("data", "expected a date YYYY-MM-DD")
        }
        let claimedUserID = try params.string(4, "usuari_id")
        let os = try params.string(5, "os")
        let (offered, contents) = try await env.service.openIssue(
            appKey: appKey, identityKey: identityKey, editionID: editionID, date: date,
            claimedUserID: claimedUserID, os: os)
        let bundle = try await env.bundles.bundle(for: contents, offered: offered)
        let now = env.service.clock.now
        // A revision's pages never change (a republish is a new revision), so its signed list is kept
        // by revision and link bucket alone.
        let (pages, _) = try await env.cachedAnswer(
            "getEdicio.pagines", [String(editionID), date.description, String(contents.revision)], versioned: false, now: now
        ) {
            .array(contents.pages.map { page in
                .structure([
                    XMLRPCMember("id", .string(String(page.id))),
                    XMLRPCMember("seccio_id", .string(String(page.section.id))),
                    XMLRPCMember("seccio", .string(page.section.name)),
                    XMLRPCMember("numero", .string(String(page.number))),
                    XMLRPCMember("jpg", .string(env.links.link(to: page.files.jpg, now: now))),
                    XMLRPCMember("jpgA", .string(env.links.link(to: page.files.jpgA, now: now))),
                    XMLRPCMember("pdf", .string(env.links.link(to: page.files.pdf, now: now))),
                ])
            })
        }
        return .structure(Array(editionMembers(offered, date: date).prefix(4)) + [
            XMLRPCMember("zip", .string(env.links.link(to: bundle.path, now: now))),
            XMLRPCMember("zip_size", .string(String(bundle.size))),
            XMLRPCMember("zip_sha256", .string(bundle.sha256)),
            XMLRPCMember("pagines", pages),
        ])
    }

    /// Not kept in the `AnswerCache`: the texts are many and rarely asked twice.
    static func cercar(_ params: XMLRPCParameters, _ env: KioskRPCEnvironment) async throws -> XMLRPCValue {
        let appKey = try params.string(0, "appkey")
        let identityKey = try params.string(1, "idenkey")
        let text = try params.string(2, "text")
        let editionID = try params.int(3, "edicio_id", default: 0, in: 1...Int(widening: Int32.max))
        let from = try optionalDate(params, 4, "desde")
        let through = try optionalDate(params, 5, "fins")
        let count = try params.int(6, "num", default: PageSearch.defaultLimit, in: PageSearch.limitRange)
        let results = try await env.service.search(
            appKey: appKey, by: .app(identityKey: identityKey), text: text, editionID: editionID == 0 ? nil : editionID,
            from: from, through: through, limit: count)
        return .array(results.map { result in
            .structure(Array(editionMembers(result.offered, date: result.hit.date).prefix(4)) + [
                XMLRPCMember("numero", .string(String(result.hit.pageNumber))),
                XMLRPCMember("fragment", .string(result.hit.fragment)),
            ])
        })
    }

    // MARK: epusuaris

    static func registrar(_ params: XMLRPCParameters, _ env: KioskRPCEnvironment) async throws -> XMLRPCValue {
        let registration = try await env.service.register(
            appKey: try params.string(0, "app_key"), deviceKey: try params.string(1, "disp_key"),
            username: try params.string(2, "username"), password: try params.string(3, "password"),
            deviceInfo: deviceFacts(params, 4), os: try params.string(5, "os"))
        return .structure(registrationMembers(registration))
    }

    static func consumirDemo(_ params: XMLRPCParameters, _ env: KioskRPCEnvironment) async throws -> XMLRPCValue {
        let (registration, outcome) = try await env.service.consumeDemo(
            appKey: try params.string(0, "app_key"), deviceKey: try params.string(1, "disp_key"),
            identityKey: try params.string(2, "iden_key"), deviceInfo: deviceFacts(params, 3),
            os: try params.string(4, "os"), clientMaximum: try params.int(5, "max_demos", default: 0))
        return .structure(registrationMembers(registration) + [
            XMLRPCMember("servir_demo", .string(outcome.granted ? "1" : "0")),
            XMLRPCMember("error_msg", .string(outcome.granted ? "" : demosExhaustedMessage)),
        ])
    }

    /// Shown to the reader when no demo is left (the apps are Catalan).
    static let demosExhaustedMessage = "Ja heu fet servir totes les descàrregues de prova d'aquest dispositiu."

    /// An unknown or empty `seccioQ` opens the app's default section: the apps send constants compiled
    /// into each build, and a section name is never a reason to refuse the call. The app's web kiosk is
    /// the stored one (console or file), read again once the catalogue version moves; without one, Kiosk's own.
    static func hashQuiosc(_ params: XMLRPCParameters, _ context: some KioskRPCContext) async throws -> XMLRPCValue {
        let env = context.environment
        let appKey = try params.string(0, "appkey")
        let username = try params.string(1, "username")
        let password = try params.string(2, "password")
        let sectionName = (try? params.string(3, "seccioQ"))?.trimmingASCIISpaces ?? ""
        try await env.service.requireApp(appKey)
        let kiosk = try await env.service.storedWebKiosk(appKey: appKey)?.webKiosk(ownBaseURL: env.ownWebKiosks + "/" + appKey)
            ?? AppWebKiosk.own(baseURL: env.ownWebKiosks + "/" + appKey)
        let resolution = kiosk.resolve(sectionName)
        if !resolution.matched && !sectionName.isEmpty {
            context.logger.notice("hashQuiosc: unknown seccioQ, opened the default section", metadata: [
                "app": .string(appKey), "seccioQ": .string(String(sectionName.prefix(64))),
                "section": .string(resolution.section.name)])
            env.observer.unknownSection(appKey: appKey, section: sectionName)
        }
        var hash = ""
        if !(username.isEmpty && password.isEmpty) {
            let user = try await env.service.authenticate(appKey: appKey, username: username, password: password)
            hash = env.webKioskTokens.token(userID: user.id, expires: env.service.clock.now + Int64(widening: env.webKioskTokenLifetime))
        }
        return .structure([
            XMLRPCMember("url_base", .string(kiosk.baseURL)),
            XMLRPCMember("hash", .string(hash)),
            XMLRPCMember("url", .string(kiosk.url(section: resolution.section, hash: hash))),
        ])
    }

    // MARK: Shapes

    /// `id`, `titol`, `edicio`, `data`, `data_alta`.
    static func editionMembers(_ offered: OfferedEdition, date: IssueDate) -> [XMLRPCMember] {
        [
            XMLRPCMember("id", .string(String(offered.edition.id))),
            XMLRPCMember("titol", .string(offered.publicationName)),
            XMLRPCMember("edicio", .string(offered.edition.name)),
            XMLRPCMember("data", .string(date.description)),
            XMLRPCMember("data_alta", .string(offered.edition.createdOn.description)),
        ]
    }

    static func registrationMembers(_ registration: KioskService.Registration) -> [XMLRPCMember] {
        let user = registration.user
        let editions: [XMLRPCMember] = registration.entitlements.map { entry in
            XMLRPCMember(String(entry.edition.edition.id), .structure([
                XMLRPCMember("id", .string(String(entry.edition.edition.id))),
                XMLRPCMember("titol", .string(entry.edition.publicationName)),
                XMLRPCMember("edicio", .string(entry.edition.edition.name)),
                XMLRPCMember("fins", .string(entry.until?.description ?? "")),
            ]))
        }
        return [
            XMLRPCMember("username", .string(user?.username ?? "")),
            XMLRPCMember("name", .string(user?.name ?? "")),
            XMLRPCMember("email", .string(user?.email ?? "")),
            XMLRPCMember("usuari_id", .string(String(user?.id ?? 0))),
            XMLRPCMember("demos", .string(String(registration.demosConsumed))),
            XMLRPCMember("edicions", .structure(editions)),
            XMLRPCMember("iden_key", .string(registration.identity.key)),
        ]
    }

    static func cover(_ issue: IssueSummary, _ env: KioskRPCEnvironment, _ now: Int64) -> String {
        issue.coverPath.map { env.links.link(to: $0, now: now) } ?? ""
    }

    // MARK: Lenient parameters

    /// A `YYYY-MM-DD` string or a `dateTime.iso8601`; empty or absent is nil.
    static func optionalDate(_ params: XMLRPCParameters, _ index: Int, _ name: String) throws -> IssueDate? {
        if case .dateTime(let value)? = params.value(index) {
            guard let date = IssueDate(year: value.year, month: value.month, day: value.day) else {
                throw XMLRPCFault.invalidParameter(name, "expected a date YYYY-MM-DD")
            }
            return date
        }
        let text = try params.string(index, name).trimmingASCIISpaces
        if text.isEmpty { return nil }
        guard let date = IssueDate(text) else {
            throw XMLRPCFault.invalidParameter(name, "expected a date YYYY-MM-DD, got \"\(text.prefix(40))\"")
        }
        return date
    }

    static func listingDirection(_ params: XMLRPCParameters, _ index: Int, _ name: String) throws -> ListingDirection {
        let text = try params.string(index, name).trimmingASCIISpaces.uppercased()
        if text.isEmpty { return .descending }
        guard let direction = ListingDirection(rawValue: text) else {
            throw XMLRPCFault.invalidParameter(name, "expected ASC or DESC")
        }
        return direction
    }

    /// `disp_info` as the app sent it, flattened into facts the statistics can read: a struct's members by
    /// name, an array's elements by position (`0`, `1`, …), nested ones joined with `.` (`1.model`), a plain
    /// string as `info`. Its shape never refuses a call: values that are not text (base64) are left out,
    /// and at most 64 facts of bounded length are kept.
    static func deviceFacts(_ params: XMLRPCParameters, _ index: Int) -> [String: String] {
        var facts: [String: String] = [:]
        func add(_ value: XMLRPCValue, path: String, depth: Int) {
            guard facts.count < 64 else { return }
            let key = path.isEmpty ? "info" : String(path.prefix(64))
            switch value {
            case .string(let text): if !text.isEmpty { facts[key] = String(text.prefix(256)) }
            case .int(let number): facts[key] = String(number)
            case .i8(let number): facts[key] = String(number)
            case .bool(let flag): facts[key] = flag ? "1" : "0"
            case .double(let number): facts[key] = String(number)
            case .dateTime(let date): facts[key] = date.description
            case .structure(let members) where depth < 3:
                for member in members { add(member.value, path: path.isEmpty ? member.name : path + "." + member.name, depth: depth + 1) }
            case .array(let elements) where depth < 3:
                for (position, element) in elements.enumerated() {
                    add(element, path: path.isEmpty ? String(position) : path + "." + String(position), depth: depth + 1)
                }
            default: break
            }
        }
        if let value = params.value(index) { add(value, path: "", depth: 0) }
        return facts
    }
}

extension String {
    var trimmingASCIISpaces: String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
