import KioskStoreSupport
import Logging
import PostgresNIO

extension AsyncSequence {
    /// Every element, in order.
    func collectAll() async throws -> [Element] {
        var elements: [Element] = []
        for try await element in self { elements.append(element) }
        return elements
    }
}

extension PostgresConnection {
    /// The rows of `query` decoded as `columns`.
    func rows<each Column: PostgresDecodable & Sendable>(
        _ query: PostgresQuery, _ columns: (repeat each Column).Type, logger: Logger
    ) async throws -> [(repeat each Column)] {
        try await self.query(query, logger: logger).decode(columns).collectAll()
    }

    /// The first column of every row.
    func values<Value: PostgresDecodable & Sendable>(_ query: PostgresQuery, _ type: Value.Type,
                                                     logger: Logger) async throws -> [Value] {
        try await self.query(query, logger: logger).decode(Value.self).collectAll()
    }

    /// The first column of the first row; nil when there is no row.
    func value<Value: PostgresDecodable & Sendable>(_ query: PostgresQuery, _ type: Value.Type,
                                                    logger: Logger) async throws -> Value? {
        try await values(query, type, logger: logger).first
    }

    /// Runs a statement to its end; returns how many rows it returned (`RETURNING` counts changed rows).
    @discardableResult
    func run(_ query: PostgresQuery, logger: Logger) async throws -> Int {
        try await self.query(query, logger: logger).collect().count
    }

    /// Runs `body` in a transaction that is always rolled back (a dry run).
    func rolledBack<Result>(logger: Logger, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await query("BEGIN", logger: logger)
        do {
            let result = try await body(self)
            try await query("ROLLBACK", logger: logger)
            return result
        } catch {
            _ = try? await query("ROLLBACK", logger: logger)
            throw error
        }
    }
}

/// A `PostgresQuery` built from SQL text and binds appended as the text grows (`$1`, `$2`, …), for
/// queries whose conditions depend on the call (the statistics filters).
struct DynamicQuery {
    private(set) var sql = ""
    private(set) var bindings = PostgresBindings()

    /// Appends `value` as the next parameter; returns its placeholder.
    mutating func bind<Value: PostgresDynamicTypeEncodable>(_ value: Value) -> String {
        bindings.append(value)
        return "$\(bindings.count)"
    }

    /// Appends a statistics filter's value as the next parameter; returns its placeholder.
    mutating func bind(_ value: StatisticsFilter.Value) -> String {
        switch value {
        case .integer(let number): bind(number)
        case .text(let text): bind(text)
        }
    }

    func query(_ text: String) -> PostgresQuery { PostgresQuery(unsafeSQL: text, binds: bindings) }
}
