import GRDB
import KioskModels

extension SQLiteKioskStore {
    /// One row per (subject, session); a later end of every session moves its time and keeping forward.
    public func endSession(subject: String, session: String, keptUntil: Int64, at time: Int64) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM ended_sessions WHERE kept_until < ?", arguments: [time])
            try db.execute(sql: """
                INSERT INTO ended_sessions (subject, session, ended_at, kept_until) VALUES (?, ?, ?, ?)
                ON CONFLICT (subject, session) DO UPDATE
                SET ended_at = max(ended_at, excluded.ended_at), kept_until = max(kept_until, excluded.kept_until)
                """, arguments: [subject, session, time, keptUntil])
        }
    }

    public func sessionHasEnded(subject: String, session: String, began: Int64) async throws -> Bool {
        try await longRead { db in
            try Bool.fetchOne(db, sql: """
                SELECT 1 FROM ended_sessions
                WHERE subject = ? AND (session = ? OR (session = ? AND ended_at >= ?)) LIMIT 1
                """, arguments: [subject, session, SessionEnd.everySession, began]) ?? false
        }
    }
}
