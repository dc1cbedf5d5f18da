import Foundation
import KioskModels

/// One thing wrong with a publish: which file, which page, what.
public struct PublishProblem: Sendable, Hashable, CustomStringConvertible {
    /// The file, relative to the publish folder (or `issue.json`); nil for the issue as a whole.
    public var file: String?
    public var page: Int?
    public var message: String

    public init(file: String?, page: Int?, message: String) { self.file = file; self.page = page; self.message = message }

    public var description: String {
        var text = ""
        if let file { text += file }
        if let page { text += text.isEmpty ? "page \(page)" : " (page \(page))" }
        return text.isEmpty ? message : "\(text): \(message)"
    }
}

/// A restore of a withdrawn issue refused; nothing was changed.
public enum IssueRestoreRefused: Error, Sendable, Hashable, CustomStringConvertible {
    case neverPublished(editionID: Int, date: IssueDate)
    case visible(editionID: Int, date: IssueDate)
    case filesGone(editionID: Int, date: IssueDate, folder: String)

    public var description: String {
        switch self {
        case .neverPublished(let edition, let date): "edition \(edition) has no issue on \(date): nothing to restore"
        case .visible(let edition, let date): "the issue of edition \(edition) on \(date) is not withdrawn: readers already see it"
        case .filesGone(let edition, let date, let folder):
            "the files of edition \(edition) on \(date) are gone (\(folder)): publish the issue again instead"
        }
    }
}

/// A publish refused before anything became visible; nothing was changed.
public struct PublishRejected: Error, Sendable, CustomStringConvertible {
    public var problems: [PublishProblem]
    /// The upload was refused for its size (HTTP 413 rather than 400/422).
    public var exceedsLimit = false
    public init(_ problems: [PublishProblem]) { self.problems = problems }
    public init(file: String? = nil, page: Int? = nil, _ message: String, exceedsLimit: Bool = false) {
        self.problems = [PublishProblem(file: file, page: page, message: message)]
        self.exceedsLimit = exceedsLimit
    }
    public var description: String {
        "publish refused (\(problems.count) problem\(problems.count == 1 ? "" : "s")):\n"
            + problems.map { "  - \($0)" }.joined(separator: "\n")
    }
}

/// The publish folder's manifest, `issue.json`: the issue's sections and, for each page, its number,
/// section, three files and optionally its text for search (paths relative to the folder). See
/// docs/publishing.md, "The publish folder".
///
/// ```json
/// {
///   "edition": 1,
///   "date": "2025-06-30",
///   "sections": [{"id": 1, "name": "Portada"}, {"id": 8, "name": "Esports"}],
///   "pages": [
///     {"number": 1, "section": 1, "pdf": "pdf/001.pdf", "jpg": "jpg/001.jpg", "jpgA": "jpgA/001.jpg"},
///     {"number": 2, "section": 8, "pdf": "pdf/002.pdf", "jpg": "jpg/002.jpg", "jpgA": "jpgA/002.jpg",
///      "text": "txt/002.txt"}
///   ]
/// }
/// ```
/// `edition` and `date` are optional; when present they must match the issue being published. A page's
/// `text` is optional: a UTF-8 plain-text file of the page, indexed for search (`epquiosc.cercar`).
public struct PublishManifest: Sendable, Hashable {
    public static let fileName = "issue.json"
    /// Largest manifest accepted.
    public static let maxBytes = 1 << 20

    public struct Page: Sendable, Hashable {
        public var number: Int
        public var section: Section
        /// Paths relative to the publish folder, by kind.
        public var pdf: String
        public var jpg: String
        public var jpgA: String
        /// The page's text file (UTF-8), relative to the publish folder; nil when there is none.
        public var text: String?

        public func file(_ kind: PageFileKind) -> String {
            switch kind {
            case .pdf: pdf
            case .jpg: jpg
            case .jpgA: jpgA
            }
        }
    }

    public var editionID: Int?
    public var date: IssueDate?
    public var sections: [Section]
    /// In page-number order, numbered 1...n.
    public var pages: [Page]

    /// Parses and checks a manifest. Every problem names `issue.json`, the page when there is one, and
    /// what is wrong; all problems found are reported together.
    public static func parse(_ data: [UInt8], maxPages: Int = PublishLimits().maxPages) throws(PublishRejected) -> PublishManifest {
        let file = fileName
        func reject(_ message: String, page: Int? = nil) -> PublishRejected {
            PublishRejected(file: file, page: page, message)
        }
        guard data.count <= maxBytes else { throw reject("is larger than \(maxBytes) bytes") }
        let raw: RawManifest
        do {
            raw = try JSONDecoder().decode(RawManifest.self, from: Data(data))
        } catch let error as DecodingError {
            throw Self.describe(error, file: file)
        } catch let error as PublishRejected {
            throw error
        } catch {
            throw reject("is not valid JSON: \(error)")
        }

        var problems: [PublishProblem] = []
        func problem(_ message: String, page: Int? = nil) {
            problems.append(PublishProblem(file: file, page: page, message: message))
        }
        var sections: [Int: Section] = [:]
        for (index, section) in raw.sections.enumerated() {
            if section.id <= 0 || section.id > Int32.max {
                problem("sections[\(index)]: id must be a positive integer, got \(section.id)")
            } else if sections[section.id] != nil {
                problem("sections[\(index)]: id \(section.id) is listed twice")
            }
            let name = section.name.trimmingCharacters(in: .whitespaces)
            if name.isEmpty || name.count > 200 || name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                problem("sections[\(index)]: name must be 1-200 characters without control characters")
            }
            sections[section.id] = Section(id: section.id, name: name)
        }
        if raw.pages.isEmpty { problem("has no pages") }
        if raw.pages.count > maxPages { problem("has \(raw.pages.count) pages; at most \(maxPages) are allowed") }

        var byNumber: [Int: Page] = [:]
        var usedFiles: [String: Int] = [:]
        for (index, page) in raw.pages.enumerated() {
            let number = page.number
            let label = number > 0 ? number : nil
            if number <= 0 { problem("pages[\(index)]: number must be 1 or more, got \(number)") }
            if byNumber[number] != nil { problem("page number \(number) is listed twice", page: label) }
            guard let section = sections[page.section] else {
                problem("section \(page.section) is not listed under \"sections\"", page: label)
                continue
            }
            for (key, name) in [("pdf", page.pdf), ("jpg", page.jpg), ("jpgA", page.jpgA)] + (page.text.map { [("text", $0)] } ?? []) {
                if let error = checkName(name) {
                    problem("\"\(key)\": \(error)", page: label)
                } else if let other = usedFiles[name] {
                    problem("\"\(key)\": \(name) is already used by page \(other)", page: label)
                } else {
                    usedFiles[name] = number
                }
            }
            byNumber[number] = Page(number: number, section: section, pdf: page.pdf, jpg: page.jpg, jpgA: page.jpgA,
                                    text: page.text)
        }
        let numbers = byNumber.keys.sorted()
        if let first = numbers.first, first > 0 {
            var expected = 1
            for number in numbers {
                if number != expected {
                    let missing = expected == number - 1 ? "\(expected)" : "\(expected)-\(number - 1)"
                    problem("page numbers must run 1, 2, 3... without gaps: page\(expected == number - 1 ? "" : "s") \(missing) missing")
                    break
                }
                expected += 1
            }
        }
        var date: IssueDate?
        if let text = raw.date {
            date = IssueDate(text)
            if date == nil { problem("\"date\": expected YYYY-MM-DD, got \"\(text)\"") }
        }
        guard problems.isEmpty else { throw PublishRejected(problems) }
        return PublishManifest(editionID: raw.edition, date: date, sections: raw.sections.compactMap { sections[$0.id] },
                               pages: numbers.compactMap { byNumber[$0] })
    }

    /// Why `name` cannot be a file name in a publish folder, or nil when it can: a relative path of
    /// components made of letters, digits, `.`, `_` and `-`, none starting with a dot (so no `..`), no
    /// leading `/`, no backslash, at most 8 components and 255 bytes.
    public static func checkName(_ name: String) -> String? {
        if name.isEmpty { return "the file name is empty" }
        if name.hasPrefix("/") { return "\(name.debugDescription) is an absolute path; give a path inside the folder" }
        if name.utf8.count > 255 { return "the file name is longer than 255 bytes" }
        let components = name.split(separator: "/", omittingEmptySubsequences: false)
        if components.contains("..") { return "\(name.debugDescription) leaves the folder (..)" }
        if components.count > 8 { return "\(name.debugDescription) is nested too deep" }
        for component in components {
            if component.isEmpty { return "\(name.debugDescription) has an empty path component" }
            if component.hasPrefix(".") { return "\(name.debugDescription): names may not start with a dot" }
            let allowed = component.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
            if !allowed { return "\(name.debugDescription): use only letters, digits, '.', '_' and '-' in file names" }
        }
        return nil
    }

    private static func describe(_ error: DecodingError, file: String) -> PublishRejected {
        func place(_ path: [any CodingKey]) -> (String, Int?) {
            var text = ""
            var page: Int?
            for (index, key) in path.enumerated() {
                if let position = key.intValue {
                    text += "[\(position)]"
                    if index > 0, path[index - 1].stringValue == "pages" { page = position + 1 }
                } else {
                    text += (text.isEmpty ? "" : ".") + key.stringValue
                }
            }
            return (text, page)
        }
        let (path, context): (String, String)
        var page: Int?
        switch error {
        case .typeMismatch(let type, let c):
            (path, page) = place(c.codingPath)
            context = "expected \(Self.typeName(type))"
        case .valueNotFound(let type, let c):
            (path, page) = place(c.codingPath)
            context = "expected \(Self.typeName(type)), found null"
        case .keyNotFound(let key, let c):
            (path, page) = place(c.codingPath + [key])
            context = "is required"
        case .dataCorrupted(let c):
            (path, page) = place(c.codingPath)
            context = c.codingPath.isEmpty ? "is not valid JSON" : c.debugDescription
        @unknown default:
            return PublishRejected(file: file, "\(error)")
        }
        // `page` is the position in the list (1-based) until the number itself is known.
        let where_ = path.isEmpty ? "" : "\(path): "
        let note = page.map { " (the \(ordinal($0)) page listed)" } ?? ""
        return PublishRejected(file: file, "\(where_)\(context)\(note)")
    }

    private static func ordinal(_ n: Int) -> String {
        let suffix = (11...13).contains(n % 100) ? "th" : [1: "st", 2: "nd", 3: "rd"][n % 10] ?? "th"
        return "\(n)\(suffix)"
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is Int.Type: "an integer"
        case is String.Type: "a string"
        case is [RawPage].Type, is [RawSection].Type: "a list"
        default: "\(type)"
        }
    }
}

/// The manifest as written, decoded strictly: unknown keys are an error (a misspelt key would otherwise
/// be silently ignored).
private struct RawManifest: Decodable {
    var edition: Int?
    var date: String?
    var sections: [RawSection]
    var pages: [RawPage]

    enum CodingKeys: String, CodingKey, CaseIterable { case edition, date, sections, pages, format }

    init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), place: "")
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if let format = try c.decodeIfPresent(Int.self, forKey: .format), format != 1 {
            throw PublishRejected(file: PublishManifest.fileName, "\"format\" \(format) is not supported (only 1)")
        }
        edition = try c.decodeIfPresent(Int.self, forKey: .edition)
        date = try c.decodeIfPresent(String.self, forKey: .date)
        sections = try c.decode([RawSection].self, forKey: .sections)
        pages = try c.decode([RawPage].self, forKey: .pages)
    }
}

struct RawSection: Decodable {
    var id: Int
    var name: String
    enum CodingKeys: String, CodingKey, CaseIterable { case id, name }
    init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), place: "a section")
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        name = try c.decode(String.self, forKey: .name)
    }
}

struct RawPage: Decodable {
    var number: Int
    var section: Int
    var pdf: String
    var jpg: String
    var jpgA: String
    var text: String?
    enum CodingKeys: String, CodingKey, CaseIterable { case number, section, pdf, jpg, jpgA, text }
    init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), place: "a page")
        let c = try decoder.container(keyedBy: CodingKeys.self)
        number = try c.decode(Int.self, forKey: .number)
        section = try c.decode(Int.self, forKey: .section)
        pdf = try c.decode(String.self, forKey: .pdf)
        jpg = try c.decode(String.self, forKey: .jpg)
        jpgA = try c.decode(String.self, forKey: .jpgA)
        text = try c.decodeIfPresent(String.self, forKey: .text)
    }
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

private func rejectUnknownKeys(_ decoder: any Decoder, allowed: [String], place: String) throws {
    let keys = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
    if let unknown = keys.first(where: { !allowed.contains($0) }) {
        var path = ""
        for key in decoder.codingPath {
            if let index = key.intValue { path += "[\(index)]" } else { path += (path.isEmpty ? "" : ".") + key.stringValue }
        }
        let known = allowed.filter { $0 != "format" }.map { "\"\($0)\"" }.joined(separator: ", ")
        throw PublishRejected(file: PublishManifest.fileName,
                              "\(path.isEmpty ? "" : path + ": ")unknown key \"\(unknown)\" in \(place.isEmpty ? "the manifest" : place) (known: \(known))")
    }
}
