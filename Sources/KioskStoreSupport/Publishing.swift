import KioskModels

extension Sequence<PublishedPage> {
    /// The pages' sections, each once, by id: what a publication adds or renames.
    package var sectionsByID: [Section] { Set(map(\.section)).sorted { $0.id < $1.id } }

    /// The pages by number: the order a publication writes them in.
    package var byNumber: [PublishedPage] { sorted { $0.number < $1.number } }

    /// The texts the publisher gave, with their pages' numbers: what search indexes.
    package var searchTexts: [(number: Int, text: String)] { compactMap { page in page.text.map { (page.number, $0) } } }
}

/// An issue's revisions: each publication takes the one after the issue's current (1 for the first).
package enum IssueRevision {
    package static func next(after current: Int?) -> Int { (current ?? 0) + 1 }
}
