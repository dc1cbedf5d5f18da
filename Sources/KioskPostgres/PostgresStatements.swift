import PostgresNIO

/// A read every wire call makes, as a named prepared statement: PostgreSQL parses and plans it once per
/// pooled connection instead of on every call (planning the listing cost more than running it).
protocol PreparedRead: PostgresPreparedStatement {
    /// The values of `$1`, `$2`, … in order.
    var arguments: [any PostgresThrowingDynamicTypeEncodable] { get }
}

extension PreparedRead {
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments { try bindings.append(argument) }
        return bindings
    }
}

extension PostgresConnection {
    /// Every row of a prepared read.
    func rows<Statement: PreparedRead>(_ statement: Statement, logger: Logger) async throws -> [Statement.Row] {
        try await execute(statement, logger: logger).collectAll()
    }
}

/// The per-call reads, by what they read.
enum Statements {
    /// Visible issues of edition `$1`, with their covers; the three listings add a bound and an order.
    static let issueListing = """
        SELECT i.date, \(PostgresKioskStore.coverColumn) FROM issues i WHERE i.edition_id = $1 AND i.withdrawn_at IS NULL
        """

    struct CatalogueVersion: PreparedRead {
        static let sql = "SELECT version FROM catalogue_version WHERE id = 1"
        typealias Row = Int64
        var arguments: [any PostgresThrowingDynamicTypeEncodable] { [] }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int64.self) }
    }

    struct App: PreparedRead {
        static let sql = "SELECT key, name, demo_quota FROM apps WHERE key = $1"
        typealias Row = (String, String, Int)
        var key: String
        var arguments: [any PostgresThrowingDynamicTypeEncodable] { [key] }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct EditionListings: PreparedRead {
        static let sql = """
            SELECT \(PostgresKioskStore.offeredColumns), i.date, \(PostgresKioskStore.coverColumn)
            FROM tariff_lines t
            JOIN editions e ON e.id = t.edition_id
            JOIN publications p ON p.id = e.publication_id
            JOIN issues i ON i.edition_id = t.edition_id AND i.date = (
                SELECT MAX(date) FROM issues WHERE edition_id = t.edition_id AND withdrawn_at IS NULL)
            WHERE t.app_key = $1
            ORDER BY t.sort_order, t.edition_id
            """
        typealias Row = (String, Int, Int, String, Int, String, String, String, String, String?)
        var appKey: String
        var arguments: [any PostgresThrowingDynamicTypeEncodable] { [appKey] }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct OfferedEdition: PreparedRead {
        static let sql = """
            SELECT \(PostgresKioskStore.offeredColumns) FROM tariff_lines t
            JOIN editions e ON e.id = t.edition_id
            JOIN publications p ON p.id = e.publication_id
            WHERE t.app_key = $1 AND t.edition_id = $2
            """
        typealias Row = PostgresKioskStore.OfferedRow
        var appKey: String
        var editionID: Int
        var arguments: [any PostgresThrowingDynamicTypeEncodable] { [appKey, editionID] }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// The newest issues (no date given).
    struct NewestIssues: PreparedRead {
        static let sql = """
            \(issueListing) ORDER BY i.date DESC LIMIT $2
            """
        typealias Row = (String, String?)
        var editionID: Int
        var limit: Int
        var arguments: [any PostgresThrowingDynamicTypeEncodable] { [editionID, limit] }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct IssuesUpTo: PreparedRead {
        static let sql = """
            \(issueListing) AND i.date <= $2 ORDER BY i.date DESC LIMIT $3
            """
        typealias Row = (String, String?)
        var editionID: Int
        var date: String
        var limit: Int
        var arguments: [any PostgresThrowingDynamicTypeEncodable] { [editionID, date, limit] }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct IssuesFrom: PreparedRead {
        static let sql = """
            \(issueListing) AND i.date >= $2 ORDER BY i.date ASC LIMIT $3
            """
        typealias Row = (String, String?)
        var editionID: Int
        var date: String
        var limit: Int
        var arguments: [any PostgresThrowingDynamicTypeEncodable] { [editionID, date, limit] }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct VisibleIssue: PreparedRead {
        static let sql = """
            SELECT revision, bundle_path, bundle_size, bundle_sha256 FROM issues
            WHERE edition_id = $1 AND date = $2 AND withdrawn_at IS NULL
            """
        typealias Row = (Int, String?, Int64?, String?)
        var editionID: Int
        var date: String
        var arguments: [any PostgresThrowingDynamicTypeEncodable] { [editionID, date] }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct Pages: PreparedRead {
        static let sql = """
            SELECT pg.id, pg.number, pg.section_id, s.name, pg.pdf_path, pg.jpg_path, pg.jpga_path
            FROM pages pg JOIN sections s ON s.id = pg.section_id
            WHERE pg.edition_id = $1 AND pg.date = $2 ORDER BY pg.number
            """
        typealias Row = (Int, Int, Int, String, String, String, String)
        var editionID: Int
        var date: String
        var arguments: [any PostgresThrowingDynamicTypeEncodable] { [editionID, date] }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct Identity: PreparedRead {
        static let sql = "SELECT key, app_key, device_key, user_id, device_info, os, imported FROM identities WHERE key = $1"
        typealias Row = (String, String, String, Int, String, String, Bool)
        var key: String
        var arguments: [any PostgresThrowingDynamicTypeEncodable] { [key] }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct Subscriptions: PreparedRead {
        static let sql = "SELECT user_id, edition_id, until FROM subscriptions WHERE user_id = $1 ORDER BY edition_id"
        typealias Row = (Int, Int, String)
        var userID: Int
        var arguments: [any PostgresThrowingDynamicTypeEncodable] { [userID] }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct StoreProducts: PreparedRead {
        static let sql = """
            SELECT app_key, id, apple_id, google_id, kind, editions, credits, scope FROM store_products
            WHERE app_key = $1 ORDER BY position
            """
        typealias Row = (String, String, String?, String?, String, String, Int, String)
        var appKey: String
        var arguments: [any PostgresThrowingDynamicTypeEncodable] { [appKey] }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// The purchases a reader holds in an app (`$2` other than 0), and those that open on device `$3`.
    struct HeldPurchases: PreparedRead {
        static let sql = """
            SELECT \(PostgresKioskStore.purchaseColumns) FROM store_purchases p
            WHERE p.app_key = $1::text AND (($2::bigint <> 0 AND p.user_id = $2::bigint) OR p.id IN (
                SELECT purchase_id FROM store_purchase_devices WHERE app_key = $1::text AND device_key = $3::text))
            ORDER BY p.id
            """
        typealias Row = PostgresKioskStore.PurchaseColumns
        var appKey: String
        var userID: Int
        var deviceKey: String
        var arguments: [any PostgresThrowingDynamicTypeEncodable] { [appKey, userID, deviceKey] }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// One purchase, by its name, with its row's id.
    struct Purchase: PreparedRead {
        static let sql = """
            SELECT \(PostgresKioskStore.purchaseColumns), p.id FROM store_purchases p
            WHERE p.app_key = $1 AND p.store = $2 AND p.original_id = $3
            """
        typealias Row = PostgresKioskStore.PurchaseColumnsWithID
        var appKey: String
        var store: String
        var originalID: String
        var arguments: [any PostgresThrowingDynamicTypeEncodable] { [appKey, store, originalID] }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }
}
