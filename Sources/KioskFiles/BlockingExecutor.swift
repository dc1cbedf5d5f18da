import CSystemCalls
import NIOCore
import NIOPosix

/// The executor for blocking work: system calls that may wait on a disk (open, read, write, fsync,
/// rename, `flock` attempts) and compression. (Password hashing has one of its own, so that a sign-in
/// never queues behind disk work.) A fixed pool of threads (SwiftNIO's
/// `NIOThreadPool`), so blocking never stalls Swift's cooperative pool or an event loop, and never grows
/// without bound. Injected into the parts that need it; `shared` is the process's.
///
/// Work run here must never wait for other work run here (that could take every thread): wait for
/// locks with `FileLock.acquire(_:executor:)` and for other jobs with `await`, outside the job.
public struct BlockingExecutor: Sendable {
    private let pool: NIOThreadPool
    /// How many jobs run at once.
    public let threads: Int
    /// The nice value of the pool's threads (0: the process's own). A higher one lets the threads serving
    /// requests take a processor first whenever both want one: for work that may wait, such as a storm of
    /// store notifications.
    public let niceness: Int32

    /// A new pool of `threads` threads, started now and kept for the life of the process; `niceness` above 0
    /// lowers their priority (each thread lowers its own before its first job).
    public init(threads: Int, niceness: Int32 = 0) {
        self.threads = threads
        self.niceness = max(0, min(niceness, 19))
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
    }

    /// The process's executor: twice as many threads as processors (at least 8), since most of its jobs
    /// wait on a disk rather than use a processor.
    public static let shared = BlockingExecutor(threads: max(8, 2 * System.coreCount))

    /// Runs `work` on one of the pool's threads and returns its result.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        guard niceness > 0 else { return try await pool.runIfActive(work) }
        return try await pool.runIfActive { [niceness] in
            // Once per thread would do; a system call per job costs nothing beside work worth lowering.
            _ = kiosk_lower_thread_priority(niceness)
            return try work()
        }
    }
}
