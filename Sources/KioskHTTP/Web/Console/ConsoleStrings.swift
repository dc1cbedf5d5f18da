extension WebLanguage {
    /// The console's words in this language (`{{t.key}}` in its templates).
    package var consoleStrings: [String: String] {
        switch self {
        case .ca: ConsoleStrings.catalan
        case .en: ConsoleStrings.english
        }
    }
}

/// The text of the operator console. Every key exists in both languages (a test checks it).
package enum ConsoleStrings {
    package static let catalan: [String: String] = [
        "console": "Consola", "skip": "Salta al contingut", "sign_in": "Entra", "sign_out": "Surt",
        "username": "Usuari", "password": "Contrasenya", "signed_in_as": "Heu entrat com a",
        "wrong_credentials": "Usuari o contrasenya incorrectes.", "locked_out": "Massa intents fallits; torneu-ho a provar més tard.",
        "dashboard": "Tauler", "apps": "Aplicacions", "issues": "Números", "readers": "Lectors", "audit": "Registre de canvis",
        "from": "Des de", "to": "Fins a", "show": "Mostra", "downloads": "Descàrregues", "downloads_per_day": "Descàrregues per dia",
        "by_app": "Per aplicació", "by_os": "Per sistema", "demos": "Demos i conversió", "devices_with_demos": "Dispositius amb demos",
        "demos_used": "Demos usades", "converted": "Convertits", "conversion": "Conversió", "active_devices": "Dispositius actius",
        "top_issues": "Números més descarregats", "app": "Aplicació", "os": "Sistema", "edition": "Edició", "date": "Data",
        "demo_quota": "Demos per dispositiu", "save": "Desa", "lines": "Línies de tarifa", "order": "Ordre", "access": "Accés",
        "free": "Lliure", "subscribers": "Subscriptors", "add_line": "Afegeix una línia", "remove": "Treu", "up": "Puja", "down": "Baixa",
        "managed_by_file": "El catàleg el governa el fitxer de configuració (catalogue_source: file): aquí només es mostra.",
        "saved": "Desat.", "choose_edition": "Tria una edició", "upload": "Puja un número", "archive_file": "Arxiu (ZIP, tar o PDF)",
        "publish": "Publica", "withdraw": "Retira", "withdrawn": "Retirat.", "pages": "Pàgines", "bundle": "Paquet",
        "published": "Publicat", "find": "Cerca", "find_reader": "Cerca un lector", "name": "Nom", "email": "Correu",
        "add_reader": "Afegeix un lector", "add": "Afegeix", "subscriptions": "Subscripcions", "until": "Fins al",
        "set_subscription": "Subscriu", "reset_password": "Canvia la contrasenya", "new_password": "Contrasenya nova",
        "clear_lockout": "Desbloqueja", "device_demos": "Demos d'un dispositiu", "device": "Dispositiu", "demos_consumed": "Demos consumides",
        "when": "Quan", "who": "Qui", "what": "Què", "before": "Abans", "after": "Després", "no_results": "Cap resultat.",
        "not_allowed": "El vostre rol no permet aquesta acció.", "progress": "Progrés de la pujada", "refresh": "Actualitza la llista",
        "phase_rendering": "Renderitzant les pàgines", "phase_checking": "Comprovant", "phase_copying": "Copiant", "phase_bundling": "Fent el paquet",
        "phase_committing": "Desant", "phase_done": "Fet",
        "activity": "Activitat", "bundle_builds": "Paquets generats", "sign_in_failures": "Inicis de sessió fallits", "editor": "editor", "operator": "operador",
        "state": "Estat", "restore": "Restaura", "withdrawn_on": "Retirat el",
        "accounts": "Comptes", "kind_api_client": "Clients de l'API (aplicacions)", "kind_publisher": "Editors que publiquen (HTTP)",
        "kind_operator": "Operadors de la consola", "role": "Rol", "add_account": "Afegeix un compte", "password_again": "Repetiu la contrasenya",
        "password_hint": "Deixeu les dues contrasenyes en blanc per generar-ne una, que es mostrarà només un cop.",
        "generated_password": "Contrasenya generada (apunteu-la: no es tornarà a mostrar) per a", "make_operator": "Fes-lo operador",
        "make_editor": "Fes-lo editor", "not_yourself": "No podeu treure ni canviar el rol del vostre propi compte.",
        "accounts_from_file": "Els comptes vénen del fitxer de configuració (catalogue_source: file): aquí només es mostren.",
        "web_kiosk": "Quiosc web (hashQuiosc)", "base_url": "Adreça base",
        "base_url_hint": "En blanc: el quiosc web del mateix Kiosk,", "web_sections": "Seccions del quiosc web",
        "section_name": "Nom de la secció", "section_path": "Camí", "aliases": "Altres noms",
        "aliases_hint": "Altres noms que envien les aplicacions per a la secció, separats per comes (majúscules o minúscules, igual).",
        "default_section": "Secció per defecte", "new_section": "Secció nova",
        "default_first": "Sense secció per defecte: s'obre la primera.",
    ]

    package static let english: [String: String] = [
        "console": "Console", "skip": "Skip to content", "sign_in": "Sign in", "sign_out": "Sign out",
        "username": "Username", "password": "Password", "signed_in_as": "Signed in as",
        "wrong_credentials": "Wrong username or password.", "locked_out": "Too many failed attempts; try again later.",
        "dashboard": "Dashboard", "apps": "Apps", "issues": "Issues", "readers": "Readers", "audit": "Audit log",
        "from": "From", "to": "To", "show": "Show", "downloads": "Downloads", "downloads_per_day": "Downloads per day",
        "by_app": "By app", "by_os": "By OS", "demos": "Demos and conversion", "devices_with_demos": "Devices with demos",
        "demos_used": "Demos used", "converted": "Converted", "conversion": "Conversion", "active_devices": "Active devices",
        "top_issues": "Most downloaded issues", "app": "App", "os": "OS", "edition": "Edition", "date": "Date",
        "demo_quota": "Demos per device", "save": "Save", "lines": "Tariff lines", "order": "Order", "access": "Access",
        "free": "Free", "subscribers": "Subscribers", "add_line": "Add a line", "remove": "Remove", "up": "Up", "down": "Down",
        "managed_by_file": "The catalogue is governed by the configuration file (catalogue_source: file): shown here only.",
        "saved": "Saved.", "choose_edition": "Choose an edition", "upload": "Upload an issue", "archive_file": "Archive (ZIP, tar or PDF)",
        "publish": "Publish", "withdraw": "Withdraw", "withdrawn": "Withdrawn.", "pages": "Pages", "bundle": "Bundle",
        "published": "Published", "find": "Find", "find_reader": "Find a reader", "name": "Name", "email": "E-mail",
        "add_reader": "Add a reader", "add": "Add", "subscriptions": "Subscriptions", "until": "Until",
        "set_subscription": "Subscribe", "reset_password": "Reset the password", "new_password": "New password",
        "clear_lockout": "Clear lock-out", "device_demos": "A device's demos", "device": "Device", "demos_consumed": "Demos consumed",
        "when": "When", "who": "Who", "what": "What", "before": "Before", "after": "After", "no_results": "No results.",
        "not_allowed": "Your role does not allow this.", "progress": "Upload progress", "refresh": "Refresh the list",
        "phase_rendering": "Rendering the pages", "phase_checking": "Checking", "phase_copying": "Copying", "phase_bundling": "Building the bundle",
        "phase_committing": "Saving", "phase_done": "Done",
        "activity": "Activity", "bundle_builds": "Bundles built", "sign_in_failures": "Failed sign-ins", "editor": "editor", "operator": "operator",
        "state": "State", "restore": "Restore", "withdrawn_on": "Withdrawn on",
        "accounts": "Accounts", "kind_api_client": "API clients (apps)", "kind_publisher": "Publishers (HTTP)",
        "kind_operator": "Console operators", "role": "Role", "add_account": "Add an account", "password_again": "Password again",
        "password_hint": "Leave both passwords empty to have one generated; it is shown only once.",
        "generated_password": "Generated password (write it down: it is not shown again) for", "make_operator": "Make operator",
        "make_editor": "Make editor", "not_yourself": "You cannot remove your own account or change its role.",
        "accounts_from_file": "The accounts come from the configuration file (catalogue_source: file): shown here only.",
        "web_kiosk": "Web kiosk (hashQuiosc)", "base_url": "Base URL",
        "base_url_hint": "Empty: Kiosk's own web kiosk,", "web_sections": "Web kiosk sections",
        "section_name": "Section name", "section_path": "Path", "aliases": "Other names",
        "aliases_hint": "Other names the apps send for the section, separated by commas (any case).",
        "default_section": "Default section", "new_section": "New section",
        "default_first": "No default section: the first one opens.",
    ]
}
