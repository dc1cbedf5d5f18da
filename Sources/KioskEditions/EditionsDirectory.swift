import CSystemCalls
import KioskIntegers
import Synchronization

#if canImport(Glibc)
import Glibc
#endif
import KioskModels
import Logging
import KioskFiles

/// The three files of a page, as the bundle and the published layout name them.
public enum PageFileKind: String, Sendable, CaseIterable {
    case pdf, jpg, jpgA

    /// Folder inside a revision and inside the bundle.
    public var folder: String { rawValue }
    public var fileExtension: String { self == .pdf ? "pdf" : "jpg" }
    /// `pdf/007.pdf`, `jpgA/012.jpg`: the name inside a revision folder and inside the bundle.
    public func name(page number: Int) -> String {
        let digits = String(number)
        return "\(folder)/\(String(repeating: "0", count: max(0, 3 - digits.count)))\(digits).\(fileExtension)"
    }
}

/// The editions directory on disk: where published issues live, and the one place that decides which
/// paths may be served.
///
/// Layout (all relative to `root`):
/// ```
/// <edition>/<date>/r<revision>/pdf/NNN.pdf          page PDFs
/// <edition>/<date>/r<revision>/jpg/NNN.jpg          small page images
/// <edition>/<date>/r<revision>/jpgA/NNN.jpg         high-resolution page images
/// <edition>/<date>/r<revision>/<edition>-<date>.zip the issue's bundle
/// .staging/                                         publishes and uploads in progress
/// .locks/issue-<0…1023>.lock                        the issues' locks (publish, clean-up), shared by hash
/// ```
/// A revision folder appears by one `rename`, so an issue is on disk completely or not at all.
/// Names starting with a dot are never served.
public struct EditionsDirectory: Sendable {
    /// Absolute, symlink-free path of the editions directory.
    public let root: String
    /// Where the editions layer runs its blocking work (publishing, bundles, delivery, clean-up).
    public let executor: BlockingExecutor

    /// Opens (creating if needed) the editions directory at `path`.
    public init(path: String, executor: BlockingExecutor = .shared) throws {
        self.executor = executor
        var info = stat()
        if stat(path, &info) != 0 || !FS.isDirectory(info) { try FS.makeDirectories(path) }   // a link to a folder is fine
        root = try FS.realPath(path)
        try FS.makeDirectories(stagingRoot)
        try FS.makeDirectories(locksRoot)
    }

    public var stagingRoot: String { root + "/.staging" }
    var locksRoot: String { root + "/.locks" }

    // MARK: Layout

    /// `<edition>/<date>`.
    public static func issueFolder(editionID: Int, date: IssueDate) -> String { "\(editionID)/\(date)" }

    /// `<edition>/<date>/r<revision>`.
    public static func revisionFolder(editionID: Int, date: IssueDate, revision: Int) -> String {
        "\(issueFolder(editionID: editionID, date: date))/r\(revision)"
    }

    /// `<edition>-<date>.zip`.
    public static func bundleName(editionID: Int, date: IssueDate) -> String { "\(editionID)-\(date).zip" }

    /// `<edition>/<date>/r<revision>/<edition>-<date>.zip`.
    public static func bundlePath(editionID: Int, date: IssueDate, revision: Int) -> String {
        "\(revisionFolder(editionID: editionID, date: date, revision: revision))/\(bundleName(editionID: editionID, date: date))"
    }

    /// `<edition>/<date>/r<revision>/pdf/NNN.pdf` and the like.
    public static func pageFile(editionID: Int, date: IssueDate, revision: Int, kind: PageFileKind, page: Int) -> String {
        "\(revisionFolder(editionID: editionID, date: date, revision: revision))/\(kind.name(page: page))"
    }

    /// The absolute path of a relative path already known to be safe (built by this type).
    public func absolute(_ relative: String) -> String { root + "/" + relative }

    /// How many lock files the issues share.
    static let lockStripes: UInt64 = 1024

    /// The lock file of an issue: one of `lockStripes`, chosen by a hash of the issue that every process
    /// computes alike (FNV-1a, not Swift's per-process `Hasher`). Issues sharing a file only wait for each
    /// other; a lock per issue would let any publisher request (even a refused one) leave a file behind
    /// for every edition and date it names.
    func lockPath(editionID: Int, date: IssueDate) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(editionID)-\(date)".utf8 { hash = (hash ^ UInt64(truncatingIfNeeded: byte)) &* 0x100_0000_01b3 }
        return "\(locksRoot)/issue-\(hash % Self.lockStripes).lock"
    }

    /// Takes the issue's lock (publish, republish, clean-up of its revisions), waiting for it.
    func lockIssue(editionID: Int, date: IssueDate) async throws -> FileLock {
        try await FileLock.acquire(lockPath(editionID: editionID, date: date), executor: executor)
    }

    // MARK: Serving

    /// Why a path may not be served.
    public enum ResolutionError: Error, Sendable, Equatable {
        /// Not a name this directory hands out (`..`, absolute, empty component, dot file, odd character).
        case invalidPath
        /// No such regular file, or a symbolic link somewhere on the way.
        case notFound
    }

    /// Checks a relative path (already percent-decoded once) without touching the disk: non-empty
    /// components of `[A-Za-z0-9._-]`, none starting with a dot (so no `.`, `..`, staging or temporary
    /// files), no leading `/`, no backslash or NUL, at most 16 components and 1024 bytes.
    public static func isServablePath(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= 1024 else { return false }
        var componentStart = true
        var components = 1
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "/"):
                if componentStart { return false }   // leading slash or empty component
                componentStart = true
                components += 1
            case UInt8(ascii: "."):
                if componentStart { return false }   // ".", "..", dot files
                componentStart = false
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                componentStart = false
            default:
                return false
            }
        }
        return !componentStart && components <= 16
    }

    /// A file opened for serving, with what HTTP needs to describe it.
    public struct ServedFile: Sendable {
        public let file: OpenFile
        public let size: Int64
        /// Last modification, nanoseconds since the epoch.
        public let modified: Int64
        public let inode: UInt64
        /// A strong validator: changes whenever the file does.
        public var etag: String {
            "\"\(String(inode, radix: 16))-\(String(size, radix: 16))-\(String(modified, radix: 16))\""
        }
    }

    /// A file time in nanoseconds since the epoch. A file can carry any time: seconds beyond what
    /// nanoseconds in an Int64 hold (years 1678 to 2262) are clamped to that range.
    static func nanoseconds(_ time: timespec) -> Int64 {
        let limit = Int64.max / 1_000_000_000 - 1
        let seconds = min(max(Int64(widening: time.tv_sec), -limit), limit)
        let fraction = min(max(Int64(widening: time.tv_nsec), 0), 999_999_999)
        return seconds * 1_000_000_000 + fraction
    }

    /// Opens `relative` for reading if, and only if, it names a regular file inside the editions
    /// directory: the path must pass `isServablePath`, every component is opened with `O_NOFOLLOW`
    /// (no symbolic link anywhere, so nothing can point outside), and the result is checked with `fstat`
    /// and against `realpath` of the opened descriptor. The descriptor stays valid even if the file is
    /// replaced or deleted afterwards, so a download in progress finishes.
    public func open(servable relative: String) throws(ResolutionError) -> ServedFile {
        guard Self.isServablePath(relative) else { throw .invalidPath }
        do {
            let base = try FS.openDirectory(root)
            let file = try FS.openBeneath(base, relative)
            let info = try file.status()
            guard FS.isRegular(info) else { throw ResolutionError.notFound }
            // Belt and braces: where the kernel says the descriptor really is.
            if let real = try? FS.realPath("/proc/self/fd/\(file.fd)"), !real.hasPrefix(root + "/") {
                throw ResolutionError.invalidPath
            }
            return ServedFile(file: file, size: Int64(widening: info.st_size), modified: Self.nanoseconds(info.st_mtim),
                              inode: UInt64(widening: info.st_ino))
        } catch let error as ResolutionError {
            throw error
        } catch {
            throw .notFound
        }
    }

    /// The MIME type of a served file, by its extension (the files were checked by content when published).
    public static func contentType(of path: String) -> String {
        let lower = path.lowercased()
        if lower.hasSuffix(".pdf") { return "application/pdf" }
        if lower.hasSuffix(".jpg") || lower.hasSuffix(".jpeg") { return "image/jpeg" }
        if lower.hasSuffix(".zip") { return "application/zip" }
        if lower.hasSuffix(".xml") { return "application/xml" }
        return "application/octet-stream"
    }

    // MARK: Uploads

    /// A private folder under `.staging/` for one upload, locked while it exists so that clean-up leaves
    /// it alone, and removed by `remove()` (or by the next start-up clean-up after a crash).
    public final class UploadFolder: Sendable {
        public let path: String
        /// Where the upload's bytes go.
        public var archivePath: String { path + "/upload" }
        /// Where the archive is unpacked.
        public var treePath: String { path + "/tree" }
        private let lock: FileLock
        /// The upload file, open for writing until `remove()`.
        private let archive: Mutex<OpenFile?>

        init(directory: EditionsDirectory, name: String) throws {
            let (path, lock) = try directory.makeLockedStagingFolder(name, mode: 0o700)
            self.path = path
            guard mkdir(path + "/tree", 0o700) == 0 else {
                try? FS.removeTree(path)
                lock.unlock()
                throw SystemError("mkdir", path + "/tree")
            }
            self.lock = lock
            archive = Mutex(try FS.open(path + "/upload", O_WRONLY | O_CREAT | O_EXCL, mode: 0o600))
        }

        /// Appends bytes to the upload file. Blocking.
        public func append(_ bytes: UnsafeRawBufferPointer) throws {
            try archive.withLock { file in
                guard let file else { throw SystemError("write", archivePath, code: EBADF) }
                try file.write(bytes)
            }
        }

        /// Removes the folder and everything in it. Blocking. The upload file is closed first, so its space
        /// is free when this returns (a file removed while still open keeps its blocks until it is closed).
        public func remove() {
            archive.withLock { $0 = nil }
            try? FS.removeTree(path)
            lock.unlock()
        }
    }

    /// A new upload folder.
    public func makeUploadFolder() throws -> UploadFolder {
        try UploadFolder(directory: self, name: "upload-\(FS.randomSuffix())")
    }

    /// Folders being made under `.staging/` carry this prefix until they are locked.
    static let unlockedStagingPrefix = ".new-"
    /// How old an unlocked new staging folder must be before clean-up takes it for a crash's leftover.
    static let abandonedStagingSeconds = 600

    /// Makes `.staging/<name>` already locked: it is created under a name clean-up skips, locked, then
    /// renamed, so no clean-up (of this or another process or machine) ever sees it unlocked.
    func makeLockedStagingFolder(_ name: String, mode: mode_t) throws -> (path: String, lock: FileLock) {
        let hidden = stagingRoot + "/" + Self.unlockedStagingPrefix + name
        let path = stagingRoot + "/" + name
        guard mkdir(hidden, mode) == 0 else { throw SystemError("mkdir", hidden) }
        guard let lock = try? FileLock.tryLock(try FS.openDirectory(hidden)) else {
            try? FS.removeTree(hidden)
            throw SystemError("flock", hidden, code: EWOULDBLOCK)
        }
        guard rename(hidden, path) == 0 else {
            let error = SystemError("rename", hidden)
            try? FS.removeTree(hidden)
            lock.unlock()
            throw error
        }
        return (path, lock)
    }

    // MARK: Start-up clean-up

    /// What `cleanUp` removed.
    public struct CleanupReport: Sendable, Equatable {
        public var stagingFolders: [String] = []
        public var temporaryFiles: [String] = []
        public var revisionFolders: [String] = []
        public var isEmpty: Bool { stagingFolders.isEmpty && temporaryFiles.isEmpty && revisionFolders.isEmpty }
    }

    /// Removes what an interrupted publish or bundle build left: staging folders nobody holds, temporary
    /// bundle files, and revision folders the database no longer references. Folders in use by another
    /// process (a publish in progress) are locked and skipped. Only names of this layout are touched.
    @discardableResult
    public func cleanUp(registry: any IssueRegistry, logger: Logger? = nil) async throws -> CleanupReport {
        let stored = try await registry.storedRevisions()
        let directory = self
        var report = try await executor.run { try directory.sweep(stored: stored) }
        // Candidates are rare (crashes, replaced revisions): lock each issue, re-read the database, remove.
        let candidates = report.revisionFolders
        report.revisionFolders = []
        var locks: [(String, FileLock)] = []
        for candidate in candidates {
            let parts = candidate.split(separator: "/")
            guard parts.count == 3, let editionID = Int(parts[0]), let date = IssueDate(parts[1]) else { continue }
            if let lock = try FileLock.tryAcquire(lockPath(editionID: editionID, date: date)) {
                locks.append((candidate, lock))
            }
        }
        if !locks.isEmpty {
            let fresh = Set(try await registry.storedRevisions().map {
                Self.revisionFolder(editionID: $0.editionID, date: $0.date, revision: $0.revision)
            })
            for (candidate, lock) in locks where !fresh.contains(candidate) {
                try await executor.run { try FS.removeTree(directory.absolute(candidate)) }
                _ = rmdir(absolute(FS.parentPath(candidate)))   // the date folder, when now empty
                report.revisionFolders.append(candidate)
                lock.unlock()
            }
        }
        if !report.isEmpty {
            logger?.notice("editions clean-up", metadata: [
                "staging": .stringConvertible(report.stagingFolders.count),
                "temporary": .stringConvertible(report.temporaryFiles.count),
                "revisions": .string(report.revisionFolders.joined(separator: " ")),
            ])
        }
        return report
    }

    /// The blocking part of `cleanUp`: removes unheld staging folders and temporary bundle files, and
    /// lists unreferenced revision folders as candidates.
    private func sweep(stored: [(editionID: Int, date: IssueDate, revision: Int)]) throws -> CleanupReport {
        var report = CleanupReport()
        for name in (try? FS.list(stagingRoot)) ?? [] {
            let path = stagingRoot + "/" + name
            if name.hasPrefix(Self.unlockedStagingPrefix) {
                // Being made by someone, unless a crash left it long ago.
                guard let info = FS.lstat(path),
                      Int64(widening: info.st_mtim.tv_sec) < SystemClock().now - Int64(widening: Self.abandonedStagingSeconds) else { continue }
            }
            guard let holder = try? FS.open(path, O_RDONLY | O_NOFOLLOW) else {
                FS.unlink(path)   // a dangling link or unreadable entry: nothing of ours
                continue
            }
            guard let lock = try FileLock.tryLock(holder) else { continue }   // a publish in progress
            try FS.removeTree(path)
            lock.unlock()
            report.stagingFolders.append(name)
        }
        let referenced = Set(stored.map { Self.revisionFolder(editionID: $0.editionID, date: $0.date, revision: $0.revision) })
        for edition in try FS.list(root) where Int(edition) != nil {
            for date in (try? FS.list(absolute(edition))) ?? [] where IssueDate(date) != nil {
                let issue = "\(edition)/\(date)"
                for revision in (try? FS.list(absolute(issue))) ?? [] {
                    guard revision.hasPrefix("r"), Int(revision.dropFirst()) != nil,
                          let info = FS.lstat(absolute("\(issue)/\(revision)")), FS.isDirectory(info) else { continue }
                    let folder = "\(issue)/\(revision)"
                    if !referenced.contains(folder) {
                        report.revisionFolders.append(folder)
                        continue
                    }
                    let temporaries = ((try? FS.list(absolute(folder))) ?? []).filter { $0.hasPrefix(".") && $0.contains(".tmp-") }
                    guard !temporaries.isEmpty,
                          let lock = try FileLock.tryAcquire(absolute("\(folder)/\(BundleService.lockName)")) else { continue }
                    for name in temporaries {
                        FS.unlink(absolute("\(folder)/\(name)"))
                        report.temporaryFiles.append("\(folder)/\(name)")
                    }
                    lock.unlock()
                }
            }
        }
        return report
    }
}
