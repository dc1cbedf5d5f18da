/// A reader's search text (`cercar`'s `text`) parsed into terms that every store turns into its own
/// engine's syntax. The reader never writes engine syntax: only words reach the engine.
///
/// - plain words are AND-ed: `pressupost municipal`;
/// - `"a phrase"` matches the words next to each other, in order;
/// - `word*` matches words starting with `word` (at least `minimumPrefixLength` characters; a shorter
///   stem is taken as a whole word); `"a phr*"` makes the phrase's last word a prefix;
/// - everything else is text: operators (`AND`, `OR`, `NOT`, `NEAR`) are words like any other;
///   parentheses, `:`, `-`, `^`, `+`, stray quotes and other punctuation separate words. Words joined by
///   punctuation without a space (`l'alcalde`, `col·legi`, `Sant-Joan`) form a phrase.
///
/// Words are lowercased here; accents are folded by the engines (`Presència` finds `presencia`).
public struct SearchQuery: Sendable, Hashable {
    /// Words that must appear next to each other, in order; a single word is a phrase of one.
    public struct Term: Sendable, Hashable {
        /// Lowercase; each made of letters, marks and digits only.
        public var words: [String]
        /// The last word is a prefix.
        public var isPrefix: Bool
        public init(words: [String], isPrefix: Bool = false) { self.words = words; self.isPrefix = isPrefix }
    }

    /// Longest text accepted, in characters.
    public static let maxCharacters = 500
    /// Most terms (words and phrases) in one query.
    public static let maxTerms = 16
    /// Most words over all terms.
    public static let maxWords = 32
    /// Shortest stem a `*` makes a prefix of.
    public static let minimumPrefixLength = 2

    /// All must match (AND); never empty.
    public let terms: [Term]

    public init(terms: [Term]) { self.terms = terms }

    /// Parses a reader's text; throws when it is too long, has too many terms, or has no word at all.
    public init(parsing text: String) throws(SearchQueryError) {
        guard text.count <= Self.maxCharacters else { throw .tooLong(maximum: Self.maxCharacters) }
        var terms: [Term] = []
        for span in Self.spans(of: text) {
            if span.quoted {
                var words: [String] = []
                var prefix = false
                for chunk in Self.chunks(span.text) {
                    let term = Self.term(chunk)
                    words += term.words
                    prefix = term.isPrefix
                }
                prefix = prefix || span.starred
                if !words.isEmpty { terms.append(Self.checkedPrefix(Term(words: words, isPrefix: prefix))) }
            } else {
                for chunk in Self.chunks(span.text) {
                    let term = Self.term(chunk)
                    if !term.words.isEmpty { terms.append(Self.checkedPrefix(term)) }
                }
            }
        }
        guard !terms.isEmpty else { throw .noWords }
        guard terms.count <= Self.maxTerms else { throw .tooManyTerms(maximum: Self.maxTerms) }
        guard terms.reduce(0, { $0 + $1.words.count }) <= Self.maxWords else { throw .tooManyWords(maximum: Self.maxWords) }
        self.terms = terms
    }

    /// Whether a character belongs to a word: letters, combining marks and decimal digits.
    public static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        if properties.isAlphabetic || properties.numericType == .decimal { return true }
        switch properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    /// The text cut at double quotes: quoted spans (between a pair) and the rest. A quote without a
    /// partner is a separator. `starred` notes a `*` right after a closing quote.
    private static func spans(of text: String) -> [(text: Substring, quoted: Bool, starred: Bool)] {
        let quotes = text.indices.filter { text[$0] == "\"" }
        let paired = quotes.count - quotes.count % 2
        var spans: [(text: Substring, quoted: Bool, starred: Bool)] = []
        var start = text.startIndex
        var pair = 0
        while pair < paired {
            let open = quotes[pair], close = quotes[pair + 1]
            spans.append((text[start..<open], false, false))
            let after = text.index(after: close)
            let starred = after < text.endIndex && text[after] == "*"
            spans.append((text[text.index(after: open)..<close], true, starred))
            start = starred ? text.index(after: after) : after
            pair += 2
        }
        // An unpaired last quote separates like a space.
        var rest = text[start...]
        if paired < quotes.count { rest = Substring(rest.replacingOccurrences(of: "\"", with: " ")) }
        spans.append((rest, false, false))
        return spans
    }

    /// Cuts at white space and control characters.
    private static func chunks(_ text: Substring) -> [Substring] {
        text.split(whereSeparator: { character in
            character.unicodeScalars.allSatisfy { $0.properties.isWhitespace || $0.properties.generalCategory == .control }
        })
    }

    /// One chunk (no spaces): its words, split at any other character; a trailing `*` after a word makes a prefix.
    private static func term(_ chunk: Substring) -> Term {
        var words: [String] = []
        var current = String.UnicodeScalarView()
        for scalar in chunk.unicodeScalars {
            if isWordScalar(scalar) {
                current.append(scalar)
            } else if !current.isEmpty {
                words.append(String(current).lowercased())
                current = String.UnicodeScalarView()
            }
        }
        let endsInWord = !current.isEmpty
        if endsInWord { words.append(String(current).lowercased()) }
        let prefix = !endsInWord && chunk.hasSuffix("*") && chunk.dropLast().unicodeScalars.last.map(isWordScalar) == true
        return Term(words: words, isPrefix: prefix)
    }

    private static func checkedPrefix(_ term: Term) -> Term {
        guard term.isPrefix, let last = term.words.last, last.count < minimumPrefixLength else { return term }
        return Term(words: term.words, isPrefix: false)
    }
}

extension Substring {
    fileprivate func replacingOccurrences(of target: Character, with replacement: Character) -> String {
        String(map { $0 == target ? replacement : $0 })
    }
}

/// Why a search text was refused (a parameter fault naming `text`).
public enum SearchQueryError: Error, Sendable, Hashable, CustomStringConvertible {
    case tooLong(maximum: Int)
    case tooManyTerms(maximum: Int)
    case tooManyWords(maximum: Int)
    /// Nothing but punctuation, operators' symbols or white space.
    case noWords

    public var description: String {
        switch self {
        case .tooLong(let maximum): "is longer than \(maximum) characters"
        case .tooManyTerms(let maximum): "has more than \(maximum) words and phrases"
        case .tooManyWords(let maximum): "has more than \(maximum) words"
        case .noWords: "has no word to search for"
        }
    }
}

/// A search over published pages: which editions, which days, how many hits.
public struct PageSearch: Sendable, Hashable {
    public var query: SearchQuery
    /// Only pages of these editions; never empty.
    public var editionIDs: [Int]
    /// First and last issue date, each optional and inclusive.
    public var from: IssueDate?
    public var through: IssueDate?
    /// Most hits, 1...100.
    public var limit: Int
    public init(query: SearchQuery, editionIDs: [Int], from: IssueDate? = nil, through: IssueDate? = nil, limit: Int) {
        self.query = query; self.editionIDs = editionIDs; self.from = from; self.through = through; self.limit = limit
    }

    /// `cercar`'s default and allowed `num`.
    public static let defaultLimit = 20
    public static let limitRange = 1...100
}

/// A page that matched: newest issue first, then by edition id and page number.
public struct PageSearchHit: Sendable, Hashable {
    public var editionID: Int
    public var date: IssueDate
    public var pageNumber: Int
    /// A short excerpt of the page around the match, as HTML: the page's text escaped (`&amp;`, `&lt;`,
    /// `&gt;`), white space collapsed, each matched word inside `<b>` … `</b>`, cuts marked `…`.
    public var fragment: String
    public init(editionID: Int, date: IssueDate, pageNumber: Int, fragment: String) {
        self.editionID = editionID; self.date = date; self.pageNumber = pageNumber; self.fragment = fragment
    }
}

/// Page text as the stores keep it, and the excerpts they make of it.
public enum PageText {
    /// Largest text of one page, in bytes of UTF-8.
    public static let maxBytes = 1 << 20
    /// Largest text of one issue, all pages together.
    public static let maxIssueBytes = 64 << 20
    /// What the engines put around a match in an excerpt; `cleaned` text never holds them.
    public static let matchStart: Unicode.Scalar = "\u{2}"
    public static let matchEnd: Unicode.Scalar = "\u{3}"

    /// The text with control characters (other than tab and line breaks) turned into spaces, so that
    /// excerpts can mark matches unambiguously and every excerpt is valid XML.
    public static func cleaned(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let value = scalar.value
            let control = (value < 0x20 && value != 0x09 && value != 0x0A && value != 0x0D)
                || (0x7F...0x9F).contains(value) || value == 0xFFFE || value == 0xFFFF
            scalars.append(control ? " " : scalar)
        }
        return String(scalars)
    }

    /// An engine's excerpt, matches marked with `matchStart`/`matchEnd`, as the HTML of `PageSearchHit.fragment`.
    ///
    /// Escapes scalar by scalar: a `Character` may join `<` to a mark before or after it into one
    /// grapheme cluster that compares unequal to `<`, so comparing characters would let markup through.
    public static func fragment(fromMarked marked: String) -> String {
        var html = String.UnicodeScalarView()
        var pendingSpace = false
        var open = false
        func append(_ text: String) { html.append(contentsOf: text.unicodeScalars) }
        for scalar in marked.unicodeScalars {
            if scalar.properties.isWhitespace { pendingSpace = !html.isEmpty; continue }
            if pendingSpace { append(" "); pendingSpace = false }
            switch scalar {
            case matchStart: if !open { append("<b>"); open = true }
            case matchEnd: if open { append("</b>"); open = false }
            case "&": append("&amp;")
            case "<": append("&lt;")
            case ">": append("&gt;")
            default: html.append(scalar)
            }
        }
        if open { append("</b>") }
        return String(html)
    }
}
