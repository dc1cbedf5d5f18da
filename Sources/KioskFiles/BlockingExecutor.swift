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

    /// A new pool of `threads` threads, started now and kept for the life of the process.
    public init(threads: Int) {
        self.threads = threads
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
    }

    /// The process's executor: twice as many threads as processors (at least 8), since most of its jobs
    /// wait on a disk rather than use a processor.
    public static let shared = BlockingExecutor(threads: max(8, 2 * System.coreCount))

    /// Runs `work` on one of the pool's threads and returns its result.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive(work)
    }
}
