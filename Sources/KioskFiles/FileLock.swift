#if canImport(Glibc)
import Glibc
#endif

/// An advisory lock (`flock`) on a lock file: excludes other processes and other open descriptions
/// in this one. Released when the value is released or on `unlock()`.
public final class FileLock: Sendable {
    private let file: OpenFile

    private init(file: OpenFile) { self.file = file }

    /// Takes the lock on `path` (created if missing), waiting for it without holding a thread: it tries,
    /// then sleeps (1 ms, doubling up to 50 ms) and tries again. Whoever holds the lock may need the
    /// executor's threads to finish, so a waiter never blocks one.
    public static func acquire(_ path: String, executor: BlockingExecutor) async throws -> FileLock {
        let file = try await executor.run { try FS.open(path, O_RDWR | O_CREAT, mode: 0o644) }
        var pause = 1
        while true {
            if let lock = try tryLock(file) { return lock }
            try await Task.sleep(for: .milliseconds(pause))
            pause = min(pause * 2, 50)
        }
    }

    /// Takes the lock if nobody holds it; nil when it is held. Blocking (it may create the file).
    public static func tryAcquire(_ path: String) throws -> FileLock? {
        let file = try FS.open(path, O_RDWR | O_CREAT, mode: 0o644)
        return try tryLock(file)
    }

    /// Locks an already open file or directory without waiting; nil when it is held.
    package static func tryLock(_ file: OpenFile) throws -> FileLock? {
        while true {
            if flock(file.fd, LOCK_EX | LOCK_NB) == 0 { return FileLock(file: file) }
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK { return nil }
            throw SystemError("flock", file.path)
        }
    }

    public func unlock() { _ = flock(file.fd, LOCK_UN) }
}
