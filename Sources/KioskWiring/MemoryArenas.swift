import CSystemCalls
import Foundation

/// glibc's allocator keeps up to eight arenas per processor, and each thread that allocates under
/// contention takes one and keeps the memory it freed there: a server whose work hops between many
/// threads (NIO's, the blocking pool's, the concurrency pool's) grows its resident size for minutes under
/// steady load while its live heap stays flat (Benchmarks/README.md, "Soak"). One arena per processor
/// keeps the contention low and the growth away. `MALLOC_ARENA_MAX` in the environment still decides.
enum MemoryArenas {
    /// The arenas set, or nil when the environment chose or this is not glibc.
    @discardableResult
    static func limitToProcessors(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int? {
        #if canImport(Glibc)
        guard environment["MALLOC_ARENA_MAX"] == nil else { return nil }
        let arenas = max(2, ProcessInfo.processInfo.activeProcessorCount)
        return kiosk_limit_malloc_arenas(Int32(clamping: arenas)) == 1 ? arenas : nil
        #else
        return nil
        #endif
    }
}
