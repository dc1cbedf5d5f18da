#if canImport(Glibc)
import KioskIntegers
import CSystemCalls
import Glibc
#endif
import Crypto
import KioskModels
import Logging
import KioskFiles

/// What the bundle service reports as it works; metrics plug in here.
public protocol BundleObserver: Sendable {
    /// This process built the bundle at `path` (rather than finding one another builder left) in `duration`.
    func bundleBuilt(path: String, bytes: Int64, duration: Duration)
}

/// Gives each issue's bundle, building it when missing by exactly one builder: within the process,
/// concurrent requesters of the same issue await the same build; across processes, builders take an
/// `flock` on the revision folder's `.bundle.lock` and the second one finds the first one's file.
public actor BundleService: IssueBundles {
    static let lockName = ".bundle.lock"

    private struct Key: Hashable { let editionID: Int; let date: IssueDate; let revision: Int }

    public let directory: EditionsDirectory
    private let registry: any IssueRegistry
    private let options: BundleOptions
    private let logger: Logger
    private let observer: (any BundleObserver)?
    private let clock: any KioskClock
    private var inFlight: [Key: Task<(BundleInfo, fresh: Bool), any Error>] = [:]
    /// Builds actually run by this process (for tests and metrics).
    public private(set) var buildCount = 0

    public init(directory: EditionsDirectory, registry: any IssueRegistry, options: BundleOptions = BundleOptions(),
                logger: Logger = Logger(label: "kiosk.bundles"), observer: (any BundleObserver)? = nil,
                clock: any KioskClock = SystemClock()) {
        self.directory = directory; self.registry = registry; self.options = options; self.logger = logger
        self.observer = observer; self.clock = clock
    }

    /// The issue's bundle: the recorded one when its file is there with the recorded size, otherwise
    /// built now (once, whoever asks) and recorded with `IssueRegistry.setBundle`.
    /// Nonisolated: the usual case, a recorded bundle that is there, costs no hop to the actor.
    public nonisolated func bundle(for contents: IssueContents, offered: OfferedEdition) async throws -> BundleInfo {
        let path = EditionsDirectory.bundlePath(editionID: contents.editionID, date: contents.date, revision: contents.revision)
        if let recorded = contents.bundle, recorded.path == path,
           let info = FS.lstat(directory.absolute(path)), FS.isRegular(info), Int64(widening: info.st_size) == recorded.size {
            return recorded
        }
        return try await build(contents, offered: offered, path: path)
    }

    /// The bundle built now, or by the build already running for the same revision.
    private func build(_ contents: IssueContents, offered: OfferedEdition, path: String) async throws -> BundleInfo {
        let key = Key(editionID: contents.editionID, date: contents.date, revision: contents.revision)
        if let running = inFlight[key] { return try await running.value.0 }
        let header = BundleManifest.Header(editionID: contents.editionID, publicationName: offered.publicationName,
                                           editionName: offered.edition.name, date: contents.date,
                                           revision: contents.revision)
        let pages = contents.pages.map { BundleManifest.Page(number: $0.number, section: $0.section) }
        logger.info("bundle missing: building it", metadata: ["path": .string(path)])
        let task = Task { [directory, options, registry, logger, observer, clock] () throws -> (BundleInfo, fresh: Bool) in
            let start = FS.monotonic()
            let (built, fresh) = try await Self.buildLocked(directory: directory, header: header, pages: pages, options: options)
            let info = BundleInfo(path: path, size: built.size, sha256: built.sha256)
            try await registry.setBundle(editionID: header.editionID, date: header.date, revision: header.revision, bundle: info,
                                         at: clock.now)
            if fresh {
                let seconds = FS.monotonic() - start
                let nanoseconds = Int64(exactly: (seconds * 1e9).rounded(.towardZero)) ?? 0
                observer?.bundleBuilt(path: path, bytes: built.size, duration: .nanoseconds(nanoseconds))
                logger.info("bundle built on demand", metadata: [
                    "path": .string(path), "bytes": .stringConvertible(built.size),
                    "seconds": .string(String(format2(seconds))),
                ])
            }
            return (info, fresh)
        }
        inFlight[key] = task
        defer { inFlight[key] = nil }
        let (info, fresh) = try await task.value
        if fresh { buildCount += 1 }
        return info
    }

    /// Under the revision's lock: the file another builder left, or a new build. `fresh` tells which.
    private static func buildLocked(directory: EditionsDirectory, header: BundleManifest.Header, pages: [BundleManifest.Page],
                                    options: BundleOptions) async throws -> (BuiltBundle, fresh: Bool) {
        let executor = directory.executor
        let folder = directory.absolute(EditionsDirectory.revisionFolder(
            editionID: header.editionID, date: header.date, revision: header.revision))
        // Never recreate a revision folder that was removed (withdrawn and cleaned, or replaced).
        guard try await executor.run({ FS.lstat(folder).map(FS.isDirectory) ?? false }) else {
            throw SystemError("open", folder, code: ENOENT)
        }
        let lock = try await FileLock.acquire("\(folder)/\(lockName)", executor: executor)
        defer { lock.unlock() }
        let path = "\(folder)/\(EditionsDirectory.bundleName(editionID: header.editionID, date: header.date))"
        if let existing = try await executor.run({ try FS.lstat(path).map(FS.isRegular) == true ? hash(path) : nil }) {
            return (existing, false)
        }
        let built = try await BundleBuilder.build(manifest: BundleManifest.xml(header: header, pages: pages),
                                                  entries: BundleManifest.entries(pages: pages, folder: folder),
                                                  date: header.date, to: path, options: options, executor: executor)
        return (built, true)
    }

    /// Size and SHA-256 of a complete bundle another builder wrote.
    static func hash(_ path: String) throws -> BuiltBundle {
        let file = try FS.open(path, O_RDONLY | O_NOFOLLOW)
        var hasher = SHA256()
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while true {
            let n = try file.read(into: buffer, count: chunk, at: offset)
            if n == 0 { break }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(start: buffer, count: n))
            offset += Int64(widening: n)
        }
        let sha = hasher.finalize().map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        return BuiltBundle(size: offset, sha256: sha, storedEntries: 0, deflatedEntries: 0)
    }
}

func format2(_ value: Double) -> String {
    let hundredths = Int(exactly: (value * 100).rounded()) ?? 0   // 0 when out of range (NaN, infinity)
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}
