import Foundation
import KioskFiles
import Testing

@Suite struct BlockingExecutorTests {
    /// The nice value of the thread running this, from /proc (field 19 of the thread's stat line).
    static func threadNice() throws -> Int {
        let stat = try String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8)
        // Fields after the command name, which is in parentheses and may hold spaces.
        guard let close = stat.lastIndex(of: ")") else { throw CocoaError(.fileReadCorruptFile) }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 16, let nice = Int(fields[16]) else { throw CocoaError(.fileReadCorruptFile) }
        return nice
    }

    @Test func aNiceExecutorRunsItsJobsAtThatNiceAndTheProcessKeepsItsOwn() async throws {
        let own = try Self.threadNice()
        let low = BlockingExecutor(threads: 2, niceness: 10)
        for _ in 0..<6 {
            #expect(try await low.run { try Self.threadNice() } == max(own, 10))
        }
        let plain = BlockingExecutor(threads: 1)
        #expect(try await plain.run { try Self.threadNice() } == own)
        #expect(try Self.threadNice() == own, "the calling thread is not lowered")
        #expect(BlockingExecutor(threads: 1, niceness: 40).niceness == 19)
    }
}
