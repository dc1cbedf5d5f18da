import KioskModels
import PostgresNIO

extension PostgresKioskStore {
    /// One row per (subject, session); a later end of every session moves its time and keeping forward.
    public func endSession(subject: String, session: String, keptUntil: Int64, at time: Int64) async throws {
        try await withTransaction { [self] c in
            _ = try await c.run("DELETE FROM ended_sessions WHERE kept_until < \(time)", logger: logger)
            _ = try await c.run("""
                INSERT INTO ended_sessions (subject, session, ended_at, kept_until) VALUES (\(subject), \(session), \(time), \(keptUntil))
                ON CONFLICT (subject, session) DO UPDATE
                SET ended_at = greatest(ended_sessions.ended_at, excluded.ended_at),
                    kept_until = greatest(ended_sessions.kept_until, excluded.kept_until)
                """, logger: logger)
        }
    }

    public func sessionHasEnded(subject: String, session: String, began: Int64) async throws -> Bool {
        let every = SessionEnd.everySession
        return try await withConnection { [self] c in
            try await c.value("""
                SELECT 1::bigint FROM ended_sessions
                WHERE subject = \(subject) AND (session = \(session) OR (session = \(every) AND ended_at >= \(began))) LIMIT 1
                """, Int.self, logger: logger) != nil
        }
    }
}
