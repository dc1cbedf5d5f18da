#if canImport(Glibc)
import KioskIntegers
import CSystemCalls
import Glibc
#endif
import KioskModels
import Logging
import KioskFiles

/// Publishes issues from a folder (see `PublishManifest`) and withdraws them.
///
/// Everything is checked before anything is written; a refusal (`PublishRejected`) lists every problem
/// with its file and page, and leaves no trace. An accepted publish copies the files into a staging
/// folder (streamed, fsynced), builds the bundle there, renames the folder into place as
/// `<edition>/<date>/r<revision>`, and then records the issue in one transaction: readers see the whole
/// new issue or the whole old one. The replaced revision's folder is removed last; downloads already
/// reading its files keep their open descriptors and finish.
public struct IssuePublisher: Sendable {
    public let directory: EditionsDirectory
    public let registry: any IssueRegistry
    public let limits: PublishLimits
    public let bundleOptions: BundleOptions
    /// The publication's name for the bundle's `edicio.xml` (`titol`), by publication id.
    public let publicationName: @Sendable (Int) async throws -> String?
    public let logger: Logger
    /// When publications and withdrawals happen.
    public let clock: any KioskClock

    public init(directory: EditionsDirectory, registry: any IssueRegistry, limits: PublishLimits = PublishLimits(),
                bundleOptions: BundleOptions = BundleOptions(),
                publicationName: @escaping @Sendable (Int) async throws -> String?,
                logger: Logger = Logger(label: "kiosk.publish"), clock: any KioskClock = SystemClock()) {
        self.directory = directory; self.registry = registry; self.limits = limits
        self.bundleOptions = bundleOptions; self.publicationName = publicationName; self.logger = logger
        self.clock = clock
    }

    /// A checked file of the publish folder, on its way to `<kind>/NNN.<ext>`.
    struct CheckedFile: Sendable {
        /// The publish folder and the file's path inside it.
        var folder: String
        var source: String
        var target: String
        var page: Int
        var size: Int64
        var kind: PageFileKind
    }

    /// Publishes the issue in `folder` as (`editionID`, `date`). `progress` is called from a worker
    /// thread, at most ten times a second and at each phase change.
    public func publish(editionID: Int, date: IssueDate, from folder: String,
                        progress: (@Sendable (PublishProgress) -> Void)? = nil) async throws -> PublishResult {
        let started = FS.monotonic()
        guard let edition = try await registry.edition(id: editionID) else {
            throw PublishRejected("edition \(editionID) is not in the catalogue; add it to the configuration first")
        }
        let titol = try await publicationName(edition.publicationID) ?? edition.name
        let limits = self.limits
        let reporter = ProgressReporter(started: started, callback: progress)

        // 1. Check everything; nothing is written yet.
        let directory = self.directory
        let executor = directory.executor
        let (manifest, files, texts) = try await executor.run {
            try Self.check(folder: folder, editionID: editionID, date: date, limits: limits, reporter: reporter)
        }
        let totalBytes = files.reduce(0) { $0 + $1.size }

        // 2. Under the issue's lock: stage, bundle, rename into place, commit.
        let lock = try await directory.lockIssue(editionID: editionID, date: date)
        defer { lock.unlock() }
        var revision = try await registry.nextRevision(editionID: editionID, date: date)
        let onDisk = try await executor.run { Self.highestRevisionOnDisk(directory: directory, editionID: editionID, date: date) }
        revision = max(revision, onDisk + 1)
        let header = BundleManifest.Header(editionID: editionID, publicationName: titol, editionName: edition.name,
                                           date: date, revision: revision)
        let bundlePages = manifest.pages.map { BundleManifest.Page(number: $0.number, section: $0.section) }
        let options = bundleOptions
        let revisionPath = EditionsDirectory.revisionFolder(editionID: editionID, date: date, revision: revision)
        let built = try await Self.stage(files: files, totalBytes: totalBytes, directory: directory, header: header,
                                         pages: bundlePages, revisionPath: revisionPath, limits: limits, options: options,
                                         reporter: reporter)
        let bundle = BundleInfo(path: EditionsDirectory.bundlePath(editionID: editionID, date: date, revision: revision),
                                size: built.size, sha256: built.sha256)
        reporter.report(.committing, files: files.count, of: files.count, bytes: totalBytes, of: totalBytes, force: true)
        let pages = manifest.pages.map { page in
            PublishedPage(number: page.number, section: page.section, files: PageFiles(
                pdf: EditionsDirectory.pageFile(editionID: editionID, date: date, revision: revision, kind: .pdf, page: page.number),
                jpg: EditionsDirectory.pageFile(editionID: editionID, date: date, revision: revision, kind: .jpg, page: page.number),
                jpgA: EditionsDirectory.pageFile(editionID: editionID, date: date, revision: revision, kind: .jpgA, page: page.number)),
                text: texts[page.number])
        }
        let replaced: Int?
        do {
            replaced = try await registry.publishIssue(editionID: editionID, date: date, revision: revision, pages: pages,
                                                       bundle: bundle, at: clock.now)
        } catch {
            // Not recorded: the renamed folder must not stay.
            _ = try? await executor.run { try FS.removeTree(directory.absolute(revisionPath)) }
            throw error
        }
        // 3. The old revision goes; open downloads keep their descriptors.
        if let replaced, replaced != revision {
            let old = EditionsDirectory.revisionFolder(editionID: editionID, date: date, revision: replaced)
            do {
                try await executor.run { try FS.removeTree(directory.absolute(old)) }
            } catch {
                logger.warning("could not remove a replaced revision; start-up clean-up will", metadata: [
                    "folder": .string(old), "error": .string("\(error)")])
            }
        }
        let seconds = FS.monotonic() - started
        reporter.report(.done, files: files.count, of: files.count, bytes: totalBytes, of: totalBytes, force: true)
        logger.info("issue published", metadata: [
            "edition": .stringConvertible(editionID), "date": .stringConvertible(date),
            "revision": .stringConvertible(revision), "replaced": .string(replaced.map(String.init) ?? "-"),
            "pages": .stringConvertible(pages.count), "bytes": .stringConvertible(totalBytes),
            "bundle_bytes": .stringConvertible(built.size), "seconds": .string(format2(seconds)),
        ])
        return PublishResult(editionID: editionID, date: date, revision: revision, replacedRevision: replaced,
                             pages: pages.count, bytes: totalBytes, bundle: bundle, seconds: seconds)
    }

    /// Hides a published issue from readers; its files stay until it is republished. False when there
    /// was no visible issue. Takes the issue's lock, so it never interleaves with a publish of the same
    /// issue by this or another process (on this or another machine sharing the editions directory).
    public func withdraw(editionID: Int, date: IssueDate) async throws -> Bool {
        let lock = try await directory.lockIssue(editionID: editionID, date: date)
        defer { lock.unlock() }
        let withdrawn = try await registry.withdrawIssue(editionID: editionID, date: date, at: clock.now)
        if withdrawn {
            logger.info("issue withdrawn", metadata: ["edition": .stringConvertible(editionID), "date": .stringConvertible(date)])
        }
        return withdrawn
    }

    /// Brings a withdrawn issue back to readers as it was (its revision's files, its page texts kept at
    /// the withdrawal); returns its revision. Under the issue's lock, like `withdraw`. Refused, changing
    /// nothing, when the issue was never published, is visible, or its revision's folder is gone.
    public func restore(editionID: Int, date: IssueDate) async throws -> Int {
        let lock = try await directory.lockIssue(editionID: editionID, date: date)
        defer { lock.unlock() }
        guard let standing = try await registry.issueStanding(editionID: editionID, date: date) else {
            throw IssueRestoreRefused.neverPublished(editionID: editionID, date: date)
        }
        guard standing.withdrawn else { throw IssueRestoreRefused.visible(editionID: editionID, date: date) }
        let folder = directory.absolute(EditionsDirectory.revisionFolder(editionID: editionID, date: date, revision: standing.revision))
        guard try await directory.executor.run({ FS.exists(folder) }) else {
            throw IssueRestoreRefused.filesGone(editionID: editionID, date: date, folder: folder)
        }
        guard try await registry.restoreIssue(editionID: editionID, date: date, revision: standing.revision) else {
            throw IssueRestoreRefused.visible(editionID: editionID, date: date)
        }
        logger.info("issue restored", metadata: ["edition": .stringConvertible(editionID), "date": .stringConvertible(date),
                                                 "revision": .stringConvertible(standing.revision)])
        return standing.revision
    }

    // MARK: Checking

    /// Reads and checks the manifest and every file it names. Throws `PublishRejected` with all problems.
    /// Returns the manifest, the page files to copy, and the pages' texts by page number (read here and
    /// kept only in the database, never copied).
    static func check(folder: String, editionID: Int, date: IssueDate, limits: PublishLimits,
                      reporter: ProgressReporter) throws -> (PublishManifest, [CheckedFile], [Int: String]) {
        let base: OpenFile
        do {
            base = try FS.openDirectory(folder)
        } catch {
            throw PublishRejected(file: folder, "cannot be opened as a folder: \(error)")
        }
        let manifestFile: OpenFile
        do {
            manifestFile = try FS.openBeneath(base, PublishManifest.fileName)
        } catch let error as SystemError {
            throw PublishRejected(file: PublishManifest.fileName, openProblem(error.code, what: "the manifest"))
        }
        let manifestInfo = try manifestFile.status()
        guard FS.isRegular(manifestInfo) else { throw PublishRejected(file: PublishManifest.fileName, "is not a regular file") }
        guard manifestInfo.st_size <= PublishManifest.maxBytes else {
            throw PublishRejected(file: PublishManifest.fileName, "is larger than \(PublishManifest.maxBytes) bytes")
        }
        let manifest = try PublishManifest.parse(try manifestFile.bytes(at: 0, count: Int(widening: manifestInfo.st_size)),
                                                 maxPages: limits.maxPages)
        var problems: [PublishProblem] = []
        if let declared = manifest.editionID, declared != editionID {
            problems.append(.init(file: PublishManifest.fileName, page: nil,
                                  message: "says edition \(declared), but edition \(editionID) is being published"))
        }
        if let declared = manifest.date, declared != date {
            problems.append(.init(file: PublishManifest.fileName, page: nil,
                                  message: "says date \(declared), but \(date) is being published"))
        }
        var files: [CheckedFile] = []
        var total: Int64 = 0
        let count = manifest.pages.count * 3
        for page in manifest.pages {
            for kind in PageFileKind.allCases {
                let name = page.file(kind)
                func problem(_ message: String) { problems.append(.init(file: name, page: page.number, message: message)) }
                let file: OpenFile
                do {
                    file = try FS.openBeneath(base, name)
                } catch let error as SystemError {
                    problem(openProblem(error.code, what: "the \(kind.rawValue) file"))
                    continue
                }
                let info = try file.status()
                guard FS.isRegular(info) else { problem("is not a regular file"); continue }
                let size = Int64(widening: info.st_size)
                if size > limits.maxFileBytes {
                    problem("is \(size) bytes; the limit per file is \(limits.maxFileBytes) bytes")
                    continue
                }
                total += size
                switch kind {
                case .pdf:
                    if let issue = try ContentCheck.checkPDF(file, size: size) { problem(issue) }
                case .jpg, .jpgA:
                    if case .failure(let issue) = try ContentCheck.checkJPEG(file, size: size, maxSide: limits.maxImageSide) {
                        problem(issue.message)
                    }
                }
                files.append(CheckedFile(folder: folder, source: name, target: kind.name(page: page.number), page: page.number,
                                         size: size, kind: kind))
                reporter.report(.checking, files: files.count, of: count, bytes: 0, of: 0)
            }
        }
        var texts: [Int: String] = [:]
        var textBytes = 0
        for page in manifest.pages {
            guard let name = page.text else { continue }
            do {
                let text = try readText(base, name)
                textBytes += text.utf8.count
                texts[page.number] = text
            } catch {
                problems.append(.init(file: name, page: page.number, message: error.message))
            }
        }
        if textBytes > PageText.maxIssueBytes {
            problems.append(.init(file: nil, page: nil, message: "the pages' texts total \(textBytes) bytes; the limit per issue is \(PageText.maxIssueBytes) bytes"))
        }
        if total > limits.maxIssueBytes {
            problems.append(.init(file: nil, page: nil,
                                  message: "the issue's files total \(total) bytes; the limit per issue is \(limits.maxIssueBytes) bytes"))
        }
        guard problems.isEmpty else { throw PublishRejected(Array(problems.prefix(200))) }
        return (manifest, files, texts)
    }

    /// Why a page's text file was refused.
    struct TextProblem: Error { var message: String }

    /// A page's text file: a regular file of at most `PageText.maxBytes` bytes of UTF-8, cleaned of
    /// control characters. Blocking.
    static func readText(_ base: OpenFile, _ name: String) throws(TextProblem) -> String {
        do {
            let file: OpenFile
            do {
                file = try FS.openBeneath(base, name)
            } catch let error as SystemError {
                throw TextProblem(message: openProblem(error.code, what: "the text file"))
            }
            let info = try file.status()
            guard FS.isRegular(info) else { throw TextProblem(message: "is not a regular file") }
            guard info.st_size <= PageText.maxBytes else {
                throw TextProblem(message: "is \(info.st_size) bytes; the limit per page's text is \(PageText.maxBytes) bytes")
            }
            let bytes = try file.bytes(at: 0, count: Int(widening: info.st_size))
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw TextProblem(message: "is not UTF-8 text")
            }
            return PageText.cleaned(text)
        } catch let problem as TextProblem {
            throw problem
        } catch {
            throw TextProblem(message: "cannot be read: \(error)")
        }
    }

    static func openProblem(_ code: Int32, what: String) -> String {
        switch code {
        case ENOENT: "is missing: \(what) must be in the publish folder"
        case ELOOP: "is a symbolic link; publish regular files, not links"
        case ENOTDIR: "has a path component that is a file or a symbolic link, not a folder"
        case EACCES, EPERM: "cannot be read (permission denied)"
        default: "cannot be opened: \(String(cString: strerror(code)))"
        }
    }

    // MARK: Staging

    /// Copies the checked files into a new staging folder, re-checks the copies, builds the bundle,
    /// fsyncs it all and renames the folder to `revisionPath`. On any failure the staging folder is removed.
    static func stage(files: [CheckedFile], totalBytes: Int64, directory: EditionsDirectory,
                      header: BundleManifest.Header, pages: [BundleManifest.Page], revisionPath: String,
                      limits: PublishLimits, options: BundleOptions, reporter: ProgressReporter) async throws -> BuiltBundle {
        let executor = directory.executor
        let name = "\(header.editionID)-\(header.date)-r\(header.revision)-\(FS.randomSuffix())"
        // Locked from before it is visible until this function returns: start-up clean-up elsewhere skips it.
        let (staging, stagingLock) = try await executor.run { try directory.makeLockedStagingFolder(name, mode: 0o755) }
        do {
            let copied = try await executor.run {
                try copy(files, into: staging, totalBytes: totalBytes, limits: limits, sync: options.sync, reporter: reporter)
            }
            reporter.report(.bundling, files: files.count, of: files.count, bytes: copied, of: totalBytes, force: true)
            let built = try await BundleBuilder.build(
                manifest: BundleManifest.xml(header: header, pages: pages),
                entries: BundleManifest.entries(pages: pages, folder: staging),
                date: header.date, to: staging + "/" + EditionsDirectory.bundleName(editionID: header.editionID, date: header.date),
                options: options, executor: executor)
            try await executor.run {
                if options.sync {
                    for kind in PageFileKind.allCases { try FS.syncDirectory(staging + "/" + kind.folder) }
                    try FS.syncDirectory(staging)
                }
                let target = directory.absolute(revisionPath)
                try FS.makeDirectories(FS.parentPath(target))
                try FS.rename(staging, target)
                if options.sync {
                    try FS.syncDirectory(FS.parentPath(target))
                    try FS.syncDirectory(directory.stagingRoot)
                }
            }
            stagingLock.unlock()
            return built
        } catch {
            stagingLock.unlock()
            _ = try? await executor.run { try FS.removeTree(staging) }
            throw error
        }
    }

    /// Copies the checked files into the staging folder's `pdf/`, `jpg/` and `jpgA/` and checks the copies
    /// again, by content; returns the bytes copied. Blocking.
    private static func copy(_ files: [CheckedFile], into staging: String, totalBytes: Int64, limits: PublishLimits,
                             sync: Bool, reporter: ProgressReporter) throws -> Int64 {
        for kind in PageFileKind.allCases {
            guard mkdir(staging + "/" + kind.folder, 0o755) == 0 else { throw SystemError("mkdir", staging + "/" + kind.folder) }
        }
        let bufferSize = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: bufferSize, alignment: 16)
        defer { buffer.deallocate() }
        var copied: Int64 = 0
        var bases: [String: OpenFile] = [:]
        for (index, file) in files.enumerated() {
            let relative = file.source
            let base = try bases[file.folder] ?? FS.openDirectory(file.folder)
            bases[file.folder] = base
            let source = try FS.openBeneath(base, relative)
            guard Int64(widening: try source.status().st_size) == file.size else {
                throw PublishRejected(file: relative, page: file.page, "changed while it was being published; publish again")
            }
            let target = try FS.open("\(staging)/\(file.target)", O_RDWR | O_CREAT | O_EXCL, mode: 0o644)
            var offset: Int64 = 0
            while offset < file.size {
                let want = min(bufferSize, Int(widening: file.size - offset))
                let n = try source.read(into: buffer, count: want, at: offset)
                guard n == want else {
                    throw PublishRejected(file: relative, page: file.page, "changed while it was being published; publish again")
                }
                try target.write(UnsafeRawBufferPointer(start: buffer, count: n))
                offset += Int64(widening: n)
                copied += Int64(widening: n)
                reporter.report(.copying, files: index, of: files.count, bytes: copied, of: totalBytes)
            }
            // The copy is what will be served: check it again, by content.
            switch file.kind {
            case .pdf:
                if let issue = try ContentCheck.checkPDF(target, size: file.size) {
                    throw PublishRejected(file: relative, page: file.page, issue)
                }
            case .jpg, .jpgA:
                if case .failure(let issue) = try ContentCheck.checkJPEG(target, size: file.size,
                                                                         maxSide: limits.maxImageSide) {
                    throw PublishRejected(file: relative, page: file.page, issue.message)
                }
            }
            if sync { try target.sync() }
        }
        return copied
    }

    /// The highest `r<N>` folder of the issue on disk (0 when none): a folder left by a publish that was
    /// killed after its rename and before its commit must not be reused.
    static func highestRevisionOnDisk(directory: EditionsDirectory, editionID: Int, date: IssueDate) -> Int {
        let issue = directory.absolute(EditionsDirectory.issueFolder(editionID: editionID, date: date))
        return ((try? FS.list(issue)) ?? []).compactMap { $0.hasPrefix("r") ? Int($0.dropFirst()) : nil }.max() ?? 0
    }
}

extension PublishRejected {
    init(_ message: String) { self.init(file: nil, page: nil, message) }
}
