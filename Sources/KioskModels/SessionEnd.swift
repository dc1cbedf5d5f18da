/// The names under which web sessions are ended (`KioskStore.endSession`, `endAllSessions`).
public enum SessionEnd {
    /// The session name that stands for every session of a subject begun up to a time.
    public static let everySession = "*"

    /// An operator of the console, by username.
    public static func operatorSubject(_ username: String) -> String { "operator:" + username }
    /// A reader of the web kiosk, by user id.
    public static func readerSubject(_ userID: Int) -> String { "reader:\(userID)" }
}
