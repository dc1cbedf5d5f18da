import Foundation
import KioskIntegers
import KioskModels

/// Which section each page of a PDF-only publish belongs to: from the folder's `sections.json`, else
/// from the PDF's outline (bookmarks), else one section for the whole issue.
///
/// `sections.json` lists sections with their page ranges; every page must be in exactly one:
/// ```json
/// [{"id": 1, "name": "Portada", "pages": "1"},
///  {"id": 2, "name": "Política", "pages": "2-5, 8"},
///  {"id": 8, "name": "Esports", "pages": "6-7"}]
/// ```
/// Sections taken from an outline or given no manifest get an id derived from their name
/// (`derivedID`), the same for the same name in every issue.
public enum PDFSections {
    public static let fileName = "sections.json"
    /// Largest `sections.json` accepted.
    static let maxBytes = 64 << 10

    /// A top-level outline entry: its title and the page (1-based, in the whole issue) it points to.
    public struct Bookmark: Sendable, Hashable {
        public var title: String
        public var page: Int
        public init(title: String, page: Int) { self.title = title; self.page = page }
    }

    /// Parses `sections.json` for an issue of `pageCount` pages; returns each page's section, in page
    /// order. Throws `PublishRejected` naming the file and the problem.
    public static func parseManifest(_ bytes: [UInt8], pageCount: Int) throws -> [Section] {
        func reject(_ message: String, page: Int? = nil) -> PublishRejected {
            PublishRejected(file: fileName, page: page, message)
        }
        guard bytes.count <= maxBytes else { throw reject("is larger than \(maxBytes) bytes") }
        guard pageCount >= 1 else { throw reject("cannot apply: the issue has no pages") }
        guard let list = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [Any] else {
            throw reject("must be a JSON list of sections: [{\"id\": 1, \"name\": \"Portada\", \"pages\": \"1-4\"}, ...]")
        }
        var byPage = [Section?](repeating: nil, count: pageCount)
        var ids = Set<Int>()
        for (index, element) in list.enumerated() {
            guard let entry = element as? [String: Any] else { throw reject("[\(index)]: must be an object with id, name and pages") }
            if let unknown = entry.keys.sorted().first(where: { !["id", "name", "pages"].contains($0) }) {
                throw reject("[\(index)]: unknown key \"\(unknown)\" (known: \"id\", \"name\", \"pages\")")
            }
            guard let id = entry["id"] as? Int, (1...Int(widening: Int32.max)).contains(id) else {
                throw reject("[\(index)]: \"id\" must be a positive integer")
            }
            guard ids.insert(id).inserted else { throw reject("[\(index)]: id \(id) is listed twice") }
            guard let rawName = entry["name"] as? String, let name = cleanName(rawName), rawName.count <= 200,
                  name == rawName.trimmingCharacters(in: .whitespaces) else {
                throw reject("[\(index)]: \"name\" must be 1-200 characters without control characters")
            }
            guard let ranges = entry["pages"] as? String else {
                throw reject("[\(index)]: \"pages\" must be a string of pages and ranges, e.g. \"1-4, 7\"")
            }
            for page in try pages(in: ranges, pageCount: pageCount, place: "[\(index)]") {
                if let other = byPage[page - 1] {
                    throw reject("[\(index)]: page \(page) is already in section \(other.id)", page: page)
                }
                byPage[page - 1] = Section(id: id, name: name)
            }
        }
        let sections = byPage.compactMap { $0 }
        if let missing = byPage.firstIndex(where: { $0 == nil }) {
            throw reject("page \(missing + 1) is in no section; every page of the issue (1-\(pageCount)) must be in one",
                         page: missing + 1)
        }
        return sections
    }

    /// The pages `text` names ("1-4, 7"), each within 1...pageCount.
    static func pages(in text: String, pageCount: Int, place: String) throws -> [Int] {
        var result: [Int] = []
        for part in text.split(separator: ",") {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false)
                .map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard (1...2).contains(bounds.count), let first = bounds.first ?? nil, let last = bounds.last ?? nil, first <= last else {
                throw PublishRejected(file: fileName, "\(place): \"pages\": \(String(part).debugDescription) is not a page or a range like 5-8")
            }
            guard first >= 1, last <= pageCount else {
                throw PublishRejected(file: fileName, "\(place): \"pages\": \(first)-\(last) is outside the issue's pages 1-\(pageCount)")
            }
            result += Array(first...last)
        }
        guard !result.isEmpty else { throw PublishRejected(file: fileName, "\(place): \"pages\" is empty") }
        return result
    }

    /// Each page's section from the top-level outline entries: a section starts at each bookmark's page
    /// (the first title wins when several point to one page) and runs to the next; pages before the
    /// first bookmark belong to the first section. Nil when the outline gives no usable section.
    public static func fromOutline(_ bookmarks: [Bookmark], pageCount: Int) -> [Section]? {
        guard pageCount >= 1 else { return nil }
        var starts: [(page: Int, section: Section)] = []
        for bookmark in bookmarks.sorted(by: { $0.page < $1.page }) where bookmark.page >= 1 && bookmark.page <= pageCount {
            guard let name = cleanName(bookmark.title), starts.last?.page != bookmark.page else { continue }
            starts.append((bookmark.page, Section(id: derivedID(name), name: name)))
        }
        guard let first = starts.first else { return nil }
        var result: [Section] = []
        var current = first.section
        var next = 0
        for page in 1...pageCount {
            while next < starts.count, starts[next].page <= page { current = starts[next].section; next += 1 }
            result.append(current)
        }
        return result
    }

    /// One section named `name` for every page.
    public static func single(named name: String, pageCount: Int) -> [Section] {
        let name = cleanName(name) ?? "Edició"
        return Array(repeating: Section(id: derivedID(name), name: name), count: max(0, pageCount))
    }

    /// A section id from its name: FNV-1a of the name's UTF-8, in 1 000 000 ... 2 000 999 999 (clear of
    /// hand-numbered sections), the same for the same name in every issue.
    public static func derivedID(_ name: String) -> Int {
        var hash: UInt32 = 2_166_136_261
        for byte in name.utf8 { hash = (hash ^ UInt32(widening: byte)) &* 16_777_619 }
        return 1_000_000 + Int(widening: hash % 2_000_000_000)
    }

    /// A title as a section name: control characters removed, spaces trimmed, at most 200 characters;
    /// nil when nothing is left.
    static func cleanName(_ text: String) -> String? {
        let kept = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
            .trimmingCharacters(in: .whitespaces)
        return kept.isEmpty ? nil : String(kept.prefix(200))
    }
}
