import CSystemCalls
import Foundation
import GRDB
import KioskIntegers

/// Counts the transactions that change the catalogue version, in a small file beside the database
/// (`<database>-changes`) that every process opening the database maps: `started` moves when such a
/// transaction makes its change (holding SQLite's write lock, before it commits), `finished` once it has
/// committed or rolled back. While the two are equal no such transaction is under way, and while they
/// keep the same value none has happened: a version read meanwhile is still the version
/// (`CatalogueVersionReader`), known with two atomic loads instead of a SQLite read.
///
/// A writer holds a shared lock on the file from its `started` to its `finished`. One killed in between
/// leaves the counts apart, which only stops versions being known at once, until `balance()` takes the
/// lock exclusively (so no writer is in between) and sets `finished` to `started`.
final class CatalogueChanges: @unchecked Sendable {
    private let descriptor: Int32
    private let path: String
    private let words: UnsafeMutablePointer<UInt64>
    private static let size = 4096
    private static let format: UInt64 = 0x4B494F534B430001   // "KIOSKC", version 1
    /// Byte of the file the writers lock.
    private static let lockByte: off_t = 64
    /// Byte of the file a process migrating the database holds exclusively.
    private static let migrationByte: off_t = 65

    /// Maps `<databasePath>-changes`, creating it if needed.
    init(databasePath: String) throws {
        let path = databasePath + "-changes"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Failure(path: path, operation: "open", code: errno) }
        // Like SQLite's `-wal` and `-shm`: owned as the database is, so that a CLI run as root does not
        // lock the server's user out of it.
        var database = stat()
        if geteuid() == 0, stat(databasePath, &database) == 0 {
            _ = fchown(descriptor, database.st_uid, database.st_gid)
            _ = fchmod(descriptor, database.st_mode & 0o666)
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0,
              status.st_size >= Self.size || ftruncate(descriptor, off_t(widening: Self.size)) == 0,
              let mapped = mmap(nil, Self.size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED
        else {
            let code = errno
            close(descriptor)
            throw Failure(path: path, operation: "map", code: code)
        }
        let words = mapped.assumingMemoryBound(to: UInt64.self)
        // A new file is all zeros: both counts 0, balanced. The format word only marks the layout.
        _ = kiosk_shared_compare_exchange(words, 0, Self.format)
        guard kiosk_shared_load(words) == Self.format else {
            munmap(mapped, Self.size)
            close(descriptor)
            throw Failure(path: path, operation: "read (not a Kiosk change counter)", code: 0)
        }
        self.descriptor = descriptor
        self.path = path
        self.words = words
    }

    deinit {
        munmap(words, Self.size)
        close(descriptor)
    }

    private var started: UnsafeMutablePointer<UInt64> { words + 1 }
    private var finished: UnsafeMutablePointer<UInt64> { words + 2 }

    /// The count of changes, while none is under way; nil while one is (or a writer was killed in one).
    var balancedMark: UInt64? {
        let done = kiosk_shared_load(finished)
        let begun = kiosk_shared_load(started)
        return begun == done ? begun : nil
    }

    /// A transaction is making a change (called holding SQLite's write lock).
    func writerStarted() {
        _ = kiosk_ofd_lock(descriptor, Int16(F_RDLCK), Self.lockByte, true)
        kiosk_shared_increment(started)
    }

    /// That transaction committed or rolled back.
    func writerFinished() {
        kiosk_shared_increment(finished)
        _ = kiosk_ofd_lock(descriptor, Int16(F_UNLCK), Self.lockByte, false)
    }

    /// Runs `migrate` while no other process does: processes starting together on a new file would
    /// otherwise each find a migration missing and all but one fail applying it. Waits for the lock.
    func whileMigrating<T>(_ migrate: () throws -> T) throws -> T {
        while kiosk_ofd_lock(descriptor, Int16(F_WRLCK), Self.migrationByte, true) != 0 {
            guard errno == EINTR else { throw Failure(path: path, operation: "lock for migrations", code: errno) }
        }
        defer { _ = kiosk_ofd_lock(descriptor, Int16(F_UNLCK), Self.migrationByte, false) }
        return try migrate()
    }

    /// Counts a change made without these counts (a SQLite shell, an older binary), found by a read.
    func countChange() {
        writerStarted()
        writerFinished()
    }

    /// Brings the counts together after a writer was killed between them; false when a writer is
    /// under way (it will, itself).
    @discardableResult
    func balance() -> Bool {
        guard kiosk_ofd_lock(descriptor, Int16(F_WRLCK), Self.lockByte, false) == 0 else { return false }
        defer { _ = kiosk_ofd_lock(descriptor, Int16(F_UNLCK), Self.lockByte, false) }
        while true {
            let done = kiosk_shared_load(finished), begun = kiosk_shared_load(started)
            if done == begun || kiosk_shared_compare_exchange(finished, done, begun) { return true }
        }
    }

    /// The counter file could not be used.
    struct Failure: Error, CustomStringConvertible {
        var path: String
        var operation: String
        var code: Int32
        var description: String {
            "catalogue change counter \(path): \(operation) failed" + (code == 0 ? "" : ": \(String(cString: strerror(code)))")
        }
    }
}

/// Reports to `CatalogueChanges` each transaction of a connection that changes the catalogue version
/// (the catalogue tables' triggers update `catalogue_version`, so every catalogue change is one).
final class CatalogueChangeObserver: TransactionObserver {
    private let changes: CatalogueChanges
    private var changing = false

    init(_ changes: CatalogueChanges) { self.changes = changes }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        eventKind.tableName == "catalogue_version"
    }

    func databaseDidChange(with event: DatabaseEvent) {
        guard !changing else { return }
        changing = true
        changes.writerStarted()
    }

    func databaseDidCommit(_ db: Database) { ended() }

    func databaseDidRollback(_ db: Database) { ended() }

    private func ended() {
        guard changing else { return }
        changing = false
        changes.writerFinished()
    }
}
