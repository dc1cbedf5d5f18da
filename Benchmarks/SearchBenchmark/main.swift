// Search latency over a year of issues (issue 18): 8 editions × 365 days × 48 pages of generated
// Catalan-like text (~300 words a page), loaded straight into a store through `publishIssue` (the
// store's own publish transaction, without page files), then a mix of queries through
// `KioskStore.searchPages`, on SQLite and on PostgreSQL. Prints p50/p99/max per query kind and over
// the whole mix. Target: p99 ≤ 20 ms. See Benchmarks/README.md, "Search".
//
//   swift run --package-path Benchmarks -c release SearchBenchmark --sqlite /tmp/search.sqlite
//   swift run --package-path Benchmarks -c release SearchBenchmark --postgres postgres://postgres@127.0.0.1:55432/search_bench
//
// Options: --days N (365), --editions N (8), --pages N (48), --words N (300), --runs N (100 per query),
// --keep (reuse a store already loaded with the same shape).
import Foundation
import KioskModels
import KioskPostgres
import KioskSQLite
import Logging
import PostgresNIO

struct Options {
    var sqlite: String?
    var postgres: String?
    var days = 365, editions = 8, pages = 48, words = 300, runs = 100
    var keep = false

    init(_ arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--sqlite": sqlite = iterator.next()
            case "--postgres": postgres = iterator.next()
            case "--days": days = Int(iterator.next()!)!
            case "--editions": editions = Int(iterator.next()!)!
            case "--pages": pages = Int(iterator.next()!)!
            case "--words": words = Int(iterator.next()!)!
            case "--runs": runs = Int(iterator.next()!)!
            case "--keep": keep = true
            default: fatalError("unknown option \(argument)")
            }
        }
    }
}

/// Deterministic text: a Zipf-like draw from common Catalan words, a long tail of made-up words, a
/// few planted phrases and one rare word (on about one page in 5 000).
struct TextGenerator {
    static let common = """
        de la el i a que en per amb els les del un una no es al com més ha va són dels o però hi seu seva també
        any anys dia govern ciutat país catalunya barcelona girona generalitat ajuntament president presidenta
        consell llei projecte milions euros pressupost municipal ple alcalde alcaldessa veïns escola salut hospital
        treball empresa economia mercat preu preus habitatge lloguer temps pluja sol mar muntanya platja turisme
        festa cultura música teatre llibre escriptor premi futbol partit equip lliga gol jugadors entrenador
        esport carrer plaça barri obres trànsit tren autobús aeroport port carretera policia jutge judici
        sentència diputació parlament eleccions vots partits oposició acord reunió setmana mes dilluns dimarts
        dimecres dijous divendres dissabte diumenge matí tarda nit aigua energia sequera incendi bosc pagesos
        vi oli fruita mercats comerç botigues estudiants universitat recerca ciència tecnologia internet xarxes
        """.split(whereSeparator: \.isWhitespace).map(String.init)
    static let syllables = ["ba", "ca", "da", "fa", "ga", "la", "ma", "na", "pa", "ra", "sa", "ta", "va", "xa", "be", "ce",
                            "de", "le", "me", "ne", "re", "se", "te", "bi", "ci", "di", "li", "mi", "ni", "ri", "si", "ti",
                            "bo", "co", "do", "lo", "mo", "no", "ro", "so", "to", "bu", "cu", "du", "lu", "mu", "nu", "ru",
                            "à", "è", "ò", "ó", "í", "ú", "ç", "ny", "ll", "ix", "tx", "tg", "l·l"]
    static let rare = "hidroavió"
    var state: UInt64
    let tail: [String]

    init(seed: UInt64) {
        state = seed
        var made: [String] = []
        var noise: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<20_000 {
            var word = ""
            noise ^= noise << 13; noise ^= noise >> 7; noise ^= noise << 17
            for k in 0..<(2 + Int(noise % 3)) { word += Self.syllables[Int((noise >> (8 * UInt64(k + 1))) % UInt64(Self.syllables.count))] }
            made.append(word)
        }
        tail = made
    }

    mutating func next() -> UInt64 {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return state
    }

    mutating func page(words: Int) -> String {
        var text: [String] = []
        text.reserveCapacity(words + 8)
        while text.count < words {
            let r = next()
            switch r % 1000 {
            case 0..<700:  // common words, Zipf-like: low ranks far more often
                let u = Double((r >> 10) % 1_000_000) / 1_000_000
                text.append(Self.common[min(Self.common.count - 1, Int(pow(u, 2.2) * Double(Self.common.count)))])
            case 700..<997:
                let u = Double((r >> 10) % 1_000_000) / 1_000_000
                text.append(tail[min(tail.count - 1, Int(pow(u, 3) * Double(tail.count)))])
            case 997: text += ["ple", "municipal"]
            case 998: text.append("Presència")
            default: text.append(r >> 20 % 16 == 0 ? "," : ".")
            }
        }
        if next() % 5_000 == 0 { text.insert(Self.rare, at: Int(next() % UInt64(text.count))) }
        return text.joined(separator: " ")
    }
}

func catalogue(_ options: Options) -> Catalogue {
    let editions = (1...options.editions).map { Edition(id: $0, publicationID: 1, name: "Edició \($0)", createdOn: IssueDate("2010-01-01")!) }
    return Catalogue(publications: [Publication(id: 1, name: "El Diari")], editions: editions,
                     apps: [App(key: "bench", name: "Bench", demoQuota: 0)],
                     tariffLines: editions.map { TariffLine(appKey: "bench", editionID: $0.id, order: $0.id, access: .free) })
}

let firstDay = IssueDate("2025-01-01")!

func load(_ store: any KioskDatabase, _ options: Options) async throws {
    try await store.syncCatalogue(catalogue(options), dryRun: false)
    let started = Date()
    var generator = TextGenerator(seed: 42)
    var words = 0
    for day in 0..<options.days {
        let date = firstDay.adding(days: day)
        for edition in 1...options.editions {
            let pages = (1...options.pages).map { number in
                let text = generator.page(words: options.words)
                words += options.words
                let path = "\(edition)/\(date)/r1/%@/\(String(format: "%03d", number))"
                return PublishedPage(number: number, section: Section(id: 1, name: "Portada"),
                                     files: PageFiles(pdf: path.replacingOccurrences(of: "%@", with: "pdf") + ".pdf",
                                                      jpg: path.replacingOccurrences(of: "%@", with: "jpg") + ".jpg",
                                                      jpgA: path.replacingOccurrences(of: "%@", with: "jpgA") + ".jpg"),
                                     text: text)
            }
            _ = try await store.publishIssue(editionID: edition, date: date, revision: 1, pages: pages, bundle: nil,
                                             at: Int64(date.daysSinceEpoch) * 86_400)
        }
        if day % 30 == 29 {
            let seconds = Date().timeIntervalSince(started)
            FileHandle.standardError.write(Data("  loaded \(day + 1) days (\(words / 1_000_000) M words) in \(Int(seconds)) s\n".utf8))
        }
    }
}

struct QueryKind {
    var name: String
    var text: String
    var editions: [Int]?
    var from: String?
    var through: String?
    var limit = 20
}

let kinds: [QueryKind] = [
    QueryKind(name: "very common word (de)", text: "de"),
    QueryKind(name: "common word (pressupost)", text: "pressupost"),
    QueryKind(name: "accented query (PRESÈNCIA)", text: "PRESÈNCIA"),
    QueryKind(name: "rare word (hidroavio)", text: "hidroavio"),
    QueryKind(name: "phrase (\"ple municipal\")", text: "\"ple municipal\""),
    // Two common words that are next to each other only by chance: the hard case for an index
    // without positions (PostgreSQL's GIN), which must check many pages that hold both.
    QueryKind(name: "rare phrase (\"girona sequera\")", text: "\"girona sequera\""),
    QueryKind(name: "prefix (pressu*)", text: "pressu*"),
    QueryKind(name: "prefix, tail (bado*)", text: "bado*"),
    QueryKind(name: "two words (girona sequera)", text: "girona sequera"),
    QueryKind(name: "common word, one edition", text: "pressupost", editions: [3]),
    QueryKind(name: "common word, one month", text: "pressupost", from: "2025-03-01", through: "2025-03-31"),
    QueryKind(name: "rare word, one month", text: "hidroavio", from: "2025-06-01", through: "2025-06-30"),
    QueryKind(name: "phrase, one edition, one month", text: "\"ple municipal\"", editions: [5], from: "2025-10-01", through: "2025-10-31"),
    QueryKind(name: "no match (xyzzy)", text: "xyzzy"),
    QueryKind(name: "common word, num 100", text: "girona", limit: 100),
]

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
}

func measure(_ store: any KioskDatabase, _ options: Options, label: String) async throws {
    let all = Array(1...options.editions)
    var everything: [Double] = []
    print("\(label): \(options.editions) editions × \(options.days) days × \(options.pages) pages, \(options.words) words a page")
    print("query".padding(toLength: 36, withPad: " ", startingAt: 0) + "  hits     p50 ms   p99 ms   max ms")
    // Warm-up: each query once.
    for kind in kinds { _ = try await run(store, kind, all) }
    for kind in kinds {
        var times: [Double] = []
        var hits = 0
        for _ in 0..<options.runs {
            let start = ContinuousClock.now
            hits = try await run(store, kind, all)
            let elapsed = start.duration(to: .now)
            times.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
        }
        times.sort()
        everything += times
        print(kind.name.padding(toLength: 36, withPad: " ", startingAt: 0)
              + String(format: "  %4d  %8.2f %8.2f %8.2f", hits, percentile(times, 0.5), percentile(times, 0.99), times.last!))
    }
    everything.sort()
    print(String(format: "%@  %d queries: p50 %.2f ms, p99 %.2f ms, max %.2f ms", "all kinds".padding(toLength: 36, withPad: " ", startingAt: 0),
                 everything.count, percentile(everything, 0.5), percentile(everything, 0.99), everything.last!))
}

func run(_ store: any KioskDatabase, _ kind: QueryKind, _ all: [Int]) async throws -> Int {
    try await store.searchPages(PageSearch(query: try SearchQuery(parsing: kind.text), editionIDs: kind.editions ?? all,
                                           from: kind.from.flatMap { IssueDate($0) }, through: kind.through.flatMap { IssueDate($0) },
                                           limit: kind.limit)).count
}

let options = Options(CommandLine.arguments)
if let path = options.sqlite {
    if !options.keep { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    let store = try SQLiteKioskStore(path: path)
    if !options.keep {
        let started = Date()
        try await load(store, options)
        print(String(format: "SQLite: loaded in %.0f s; file %.0f MB", Date().timeIntervalSince(started),
                     Double((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) / 1e6))
    }
    try await measure(store, options, label: "SQLite (FTS5)")
    await store.close()
}
if let url = options.postgres {
    let target = URL(string: url)!
    let database = String(target.path.dropFirst())
    func configuration(_ name: String) -> PostgresClient.Configuration {
        PostgresClient.Configuration(host: target.host ?? "127.0.0.1", port: target.port ?? 5432, username: target.user ?? "postgres",
                                     password: target.password, database: name, tls: .disable)
    }
    let logger = Logger(label: "search-benchmark")
    if !options.keep {
        // A fresh database of that name, made through the server's `postgres` database.
        let admin = PostgresClient(configuration: configuration("postgres"))
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await admin.run() }
            try await admin.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \"\(database)\""), logger: logger)
            try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(database)\""), logger: logger)
            group.cancelAll()
        }
    }
    // Loading measures nothing: a publish may wait longer than a wire call's limit on a busy machine.
    let store = try await PostgresKioskStore.connect(configuration(database), connectionWait: .seconds(60), logger: logger)
    if !options.keep {
        let started = Date()
        try await load(store, options)
        // Planner statistics now, as `db copy` does, not at autovacuum's next pass.
        let client = PostgresClient(configuration: configuration(database))
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await client.run() }
            try await client.query("ANALYZE page_texts", logger: logger)
            group.cancelAll()
        }
        print(String(format: "PostgreSQL: loaded and analyzed in %.0f s", Date().timeIntervalSince(started)))
    }
    try await measure(store, options, label: "PostgreSQL (tsvector, GIN)")
    await store.close()
}
