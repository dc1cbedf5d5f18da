import Foundation

/// The languages of the web pages, chosen from the reader's `Accept-Language` (Catalan unless English is preferred).
package enum WebLanguage: String, Sendable, CaseIterable {
    case ca, en

    /// The best of `ca` and `en` for an `Accept-Language` header: the highest-weighted listed language
    /// whose primary tag is one of them; Catalan when none is.
    package init(acceptLanguage header: String?) {
        var best: (language: WebLanguage, weight: Double)?
        for item in (header ?? "").split(separator: ",").prefix(32) {
            let parts = item.split(separator: ";")
            let tag = parts.first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            let primary = tag.split(separator: "-").first.map(String.init) ?? ""
            guard let language = WebLanguage(rawValue: primary) else { continue }
            var weight = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces) == "q" {
                    weight = Double(pair[1].trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
            if weight > 0, weight > (best?.weight ?? 0) { best = (language, weight) }
        }
        self = best?.language ?? .ca
    }

    /// The words of the pages in this language, by key; templates read them as `{{t.key}}`.
    package var strings: [String: String] {
        switch self {
        case .ca: WebStrings.catalan
        case .en: WebStrings.english
        }
    }

    /// Month names, January first.
    package var months: [String] {
        switch self {
        case .ca: ["gener", "febrer", "març", "abril", "maig", "juny", "juliol", "agost", "setembre", "octubre", "novembre", "desembre"]
        case .en: ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
        }
    }
}

/// The text of the web pages. Every key exists in both languages (a test checks it).
package enum WebStrings {
    package static let catalan: [String: String] = [
        "skip": "Salta al contingut",
        "shelf": "Quiosc",
        "account": "El meu compte",
        "signed_in_as": "Heu entrat com a",
        "anonymous": "No heu entrat amb cap compte: veieu el que és de lliure accés.",
        "sign_in_from_app": "Per entrar, obriu el quiosc des de l'aplicació amb el vostre usuari.",
        "link_expired": "L'enllaç ha caducat o no és vàlid. Torneu-lo a obrir des de l'aplicació.",
        "sign_out": "Surt",
        "sign_out_everywhere": "Tanca totes les sessions (aquest i altres navegadors)",
        "editions": "Edicions",
        "no_editions": "Encara no hi ha cap número publicat.",
        "newest": "Darrer número",
        "cover_of": "Portada:",
        "archive": "Hemeroteca",
        "archive_of": "Hemeroteca de",
        "previous_month": "Mes anterior",
        "next_month": "Mes següent",
        "no_issues_in_month": "Cap número aquest mes.",
        "issue": "Número",
        "pages": "Pàgines",
        "page": "Pàgina",
        "section": "Secció",
        "download_bundle": "Descarrega el número sencer (ZIP)",
        "bytes": "bytes",
        "pdf": "PDF",
        "high_resolution": "Alta resolució",
        "subscriptions": "Subscripcions",
        "no_subscriptions": "No teniu cap subscripció.",
        "until": "fins al",
        "purchases": "Compres a les botigues",
        "no_purchases": "No teniu cap compra feta amb aquest compte a les botigues.",
        "product": "Producte",
        "kind": "Tipus",
        "state": "Estat",
        "details": "Què dona",
        "kind_issue": "Número solt",
        "kind_credits": "Paquet de números",
        "kind_subscription": "Subscripció",
        "purchase_active": "Activa",
        "purchase_expired": "Caducada",
        "purchase_revoked": "Revocada",
        "credits_left": "números per triar, de",
        "edition": "Edició",
        "not_entitled": "Aquest número és per a subscriptors.",
        "not_entitled_hint": "Entreu des de l'aplicació amb un compte subscrit, o subscriviu-vos.",
        "not_found": "No s'ha trobat aquesta pàgina.",
        "bad_request": "Aquesta adreça no és vàlida.",
        "too_many_searches": "Massa cerques des d'aquesta adreça.",
        "try_again_in": "Torneu-ho a provar d'aquí a uns segons:",
        "excerpt_for_subscribers": "El text d'aquesta pàgina és per a subscriptors.",
        "back_to_shelf": "Torna al quiosc",
        "free": "Accés lliure",
        "subscribers": "Per a subscriptors",
        "language": "Llengua",
        "search": "Cerca",
        "search_results": "Resultats de la cerca",
        "no_results": "No s'ha trobat res.",
    ]

    package static let english: [String: String] = [
        "skip": "Skip to content",
        "shelf": "Kiosk",
        "account": "My account",
        "signed_in_as": "Signed in as",
        "anonymous": "You are not signed in: you see what is free to read.",
        "sign_in_from_app": "To sign in, open the kiosk from the app with your account.",
        "link_expired": "The link has expired or is not valid. Open it again from the app.",
        "sign_out": "Sign out",
        "sign_out_everywhere": "Sign out everywhere (this and other browsers)",
        "editions": "Editions",
        "no_editions": "Nothing has been published yet.",
        "newest": "Latest issue",
        "cover_of": "Cover:",
        "archive": "Archive",
        "archive_of": "Archive of",
        "previous_month": "Previous month",
        "next_month": "Next month",
        "no_issues_in_month": "No issues this month.",
        "issue": "Issue",
        "pages": "Pages",
        "page": "Page",
        "section": "Section",
        "download_bundle": "Download the whole issue (ZIP)",
        "bytes": "bytes",
        "pdf": "PDF",
        "high_resolution": "High resolution",
        "subscriptions": "Subscriptions",
        "no_subscriptions": "You have no subscriptions.",
        "until": "until",
        "purchases": "Store purchases",
        "no_purchases": "You have made no store purchases with this account.",
        "product": "Product",
        "kind": "Kind",
        "state": "State",
        "details": "What it gives",
        "kind_issue": "Single issue",
        "kind_credits": "Pack of issues",
        "kind_subscription": "Subscription",
        "purchase_active": "Active",
        "purchase_expired": "Expired",
        "purchase_revoked": "Revoked",
        "credits_left": "issues left to choose, of",
        "edition": "Edition",
        "not_entitled": "This issue is for subscribers.",
        "not_entitled_hint": "Sign in from the app with a subscribed account, or subscribe.",
        "not_found": "This page was not found.",
        "bad_request": "This address is not valid.",
        "too_many_searches": "Too many searches from this address.",
        "try_again_in": "Try again in a few seconds:",
        "excerpt_for_subscribers": "This page's text is for subscribers.",
        "back_to_shelf": "Back to the kiosk",
        "free": "Free",
        "subscribers": "Subscribers",
        "language": "Language",
        "search": "Search",
        "search_results": "Search results",
        "no_results": "Nothing found.",
    ]
}
