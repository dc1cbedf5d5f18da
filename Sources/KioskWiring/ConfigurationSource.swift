import KioskConfig

/// Where the configuration comes from: a file, and the command line's overrides of its database and
/// editions directory. Read at start and again on every reload.
public struct ConfigurationSource: Sendable {
    public var file: String
    public var database: String?
    public var editions: String?

    public init(file: String, database: String? = nil, editions: String? = nil) {
        self.file = file
        self.database = database
        self.editions = editions
    }

    /// Reads and validates the file, then applies the overrides.
    package func load() throws -> KioskConfiguration {
        var configuration = try KioskConfiguration.load(from: file)
        if let database { configuration.server.database = database }
        if let editions { configuration.server.editions = editions }
        return configuration
    }
}
