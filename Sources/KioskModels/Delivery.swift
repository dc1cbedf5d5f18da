/// Turns a file under the editions directory into a time-limited signed URL a reader can fetch.
public protocol LinkSigning: Sendable {
    /// An absolute URL for `relativePath` (relative to the editions directory), valid for the configured lifetime.
    func link(to relativePath: String, now: Int64) -> String
}

/// Gives an issue's ZIP bundle, building it (once, whoever asks) when it is missing.
public protocol IssueBundles: Sendable {
    func bundle(for contents: IssueContents, offered: OfferedEdition) async throws -> BundleInfo
}

/// An app's web kiosk, for `hashQuiosc`: its base URL and the paths of its sections (`seccioQ`).
public struct WebKiosk: Sendable, Hashable {
    public var baseURL: String
    /// Section name -> path appended to `baseURL`; the hash is appended after it (e.g. `/compte?hash=`).
    public var sections: [String: String]
    public init(baseURL: String, sections: [String: String]) { self.baseURL = baseURL; self.sections = sections }
}
