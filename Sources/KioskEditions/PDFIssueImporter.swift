#if canImport(Glibc)
import KioskIntegers
import CSystemCalls
import Glibc
#endif
import Foundation
import KioskFiles
import KioskModels

/// How a PDF-only publish makes its pages: image sizes, JPEG quality, the limits of every tool run and
/// how many run at once.
public struct PDFImportOptions: Sendable, Hashable {
    /// A size in pixels.
    public struct Pixels: Sendable, Hashable {
        public var width: Int
        public var height: Int
        public init(width: Int, height: Int) { self.width = width; self.height = height }
    }

    /// Each page's small image (`jpg/`), exactly this size.
    public var smallImage: Pixels
    /// Each page's high-resolution image (`jpgA/`), exactly this size.
    public var largeImage: Pixels
    public var jpegQuality: Int
    /// The limits of every tool run.
    public var limits: ChildLimits
    /// Tool runs at once (default: one per processor).
    public var parallelism: Int
    /// Where the tools run; nil: as the server's user (`Sandbox`).
    public var sandbox: Sandbox?

    public init(smallImage: Pixels = Pixels(width: 300, height: 400), largeImage: Pixels = Pixels(width: 1200, height: 1600),
                jpegQuality: Int = 85, limits: ChildLimits = ChildLimits(),
                parallelism: Int = max(1, Int32(exactly: _SC_NPROCESSORS_ONLN).map { sysconf($0) } ?? 1), sandbox: Sandbox? = nil) {
        self.smallImage = smallImage; self.largeImage = largeImage; self.jpegQuality = jpegQuality
        self.limits = limits; self.parallelism = max(1, parallelism); self.sandbox = sandbox
    }
}

/// Publishes from PDFs alone: a folder (or upload) holding the issue as one multi-page PDF, or one PDF
/// per page (ordered by name, numbers in names compared as numbers), and optionally `sections.json`
/// (`PDFSections`). It checks each PDF (`qpdf --check`, `pdfinfo`), splits the pages (`qpdf`), renders
/// each page's two images (`pdftoppm`) and extracts its text (`pdftotext`), every tool an isolated child
/// process (`IsolatedProcess`) with limits, in the options' sandbox when there is one, at most
/// `parallelism` at once; writes a classic publish folder (`issue.json`, `pdf/`, `jpg/`, `jpgA/`, `txt/`)
/// in a locked scratch folder under the editions directory's `.staging/`, and publishes that with
/// `IssuePublisher`, exactly as a classic folder. The scratch folder is removed afterwards, whatever
/// happened.
public struct PDFIssueImporter: Sendable {
    public let publisher: IssuePublisher
    public let options: PDFImportOptions

    public init(publisher: IssuePublisher, options: PDFImportOptions = PDFImportOptions()) {
        self.publisher = publisher; self.options = options
    }

    /// What the rendering of a PDF-only publish did.
    public struct Rendering: Sendable, Hashable {
        public var pages: Int
        /// The PDF files the issue came from.
        public var sourceFiles: Int
        /// Where the sections came from.
        public var sections: SectionSource
        /// Seconds from the start to the classic folder being ready.
        public var seconds: Double
    }

    public enum SectionSource: String, Sendable, Hashable { case manifest, outline, single }

    /// A publish and, for a PDF-only folder, its rendering.
    public struct Outcome: Sendable, Hashable {
        public var result: PublishResult
        public var rendering: Rendering?
    }

    // MARK: Detecting

    /// True when `folder` is a PDF-only publish folder: no `issue.json`, no `pdf/`, `jpg/` or `jpgA/`, and
    /// at least one `*.pdf` at the top.
    public static func isPDFOnlyFolder(_ folder: String) -> Bool {
        guard let names = try? FS.list(folder) else { return false }
        let classic = Set([PublishManifest.fileName] + PageFileKind.allCases.map(\.folder))
        return !names.contains(where: classic.contains) && names.contains(where: isPDFName)
    }

    static func isPDFName(_ name: String) -> Bool { name.lowercased().hasSuffix(".pdf") && !name.hasPrefix(".") }

    /// Numbers inside names compared as numbers: `p2.pdf` before `p10.pdf`.
    static func naturalOrder(_ a: String, _ b: String) -> Bool {
        a.compare(b, options: [.numeric, .caseInsensitive]) == .orderedAscending
            || (a.compare(b, options: [.numeric, .caseInsensitive]) == .orderedSame && a < b)
    }

    // MARK: Publishing

    /// Publishes `folder` as (`editionID`, `date`): a PDF-only folder through rendering, any other folder
    /// directly with `IssuePublisher`. `progress` sees a `rendering` phase (pages done of all pages) before
    /// the publisher's phases.
    public func publish(editionID: Int, date: IssueDate, from folder: String,
                        progress: (@Sendable (PublishProgress) -> Void)? = nil) async throws -> Outcome {
        guard Self.isPDFOnlyFolder(folder) else {
            return Outcome(result: try await publisher.publish(editionID: editionID, date: date, from: folder, progress: progress))
        }
        guard let edition = try await publisher.registry.edition(id: editionID) else {
            throw PublishRejected("edition \(editionID) is not in the catalogue; add it to the configuration first")
        }
        let started = FS.monotonic()
        let directory = publisher.directory
        let (scratch, lock) = try await directory.executor.run {
            try directory.makeLockedStagingFolder("pdf-\(editionID)-\(date)-\(FS.randomSuffix())", mode: 0o700)
        }
        do {
            let (issue, rendering) = try await Self.convert(folder: folder, scratch: scratch, editionName: edition.name,
                                                            options: options, limits: publisher.limits, executor: directory.executor,
                                                            started: started, progress: progress)
            let result = try await publisher.publish(editionID: editionID, date: date, from: issue, progress: progress)
            await remove(scratch, lock)
            return Outcome(result: result, rendering: rendering)
        } catch {
            await remove(scratch, lock)
            throw error
        }
    }

    private func remove(_ scratch: String, _ lock: FileLock) async {
        _ = try? await publisher.directory.executor.run { try FS.removeTree(scratch) }
        lock.unlock()
    }

    /// The PDFs of `folder`, in page order, and its `sections.json` if any; anything else but hidden files
    /// is refused. Blocking.
    static func sources(in folder: String) throws -> (pdfs: [String], sections: [UInt8]?) {
        let names = try FS.list(folder)
        var pdfs: [String] = []
        var sections: [UInt8]?
        let base = try FS.openDirectory(folder)
        for name in names where !name.hasPrefix(".") {   // hidden files (.DS_Store) are never read
            if isPDFName(name) {
                pdfs.append(name)
            } else if name == PDFSections.fileName {
                let file = try FS.openBeneath(base, name)
                let info = try file.status()
                guard FS.isRegular(info), info.st_size <= PDFSections.maxBytes else {
                    throw PublishRejected(file: name, "must be a regular file of at most \(PDFSections.maxBytes) bytes")
                }
                sections = try file.bytes(at: 0, count: Int(widening: info.st_size))
            } else {
                throw PublishRejected(file: name, "does not belong in a PDF-only publish folder: only the issue's PDFs "
                                      + "(one for the issue, or one per page) and \(PDFSections.fileName)")
            }
        }
        return (pdfs.sorted(by: naturalOrder), sections)
    }

    /// Copies a source PDF into the scratch folder after the publisher's content check (`%PDF-`,
    /// `startxref`, `%%EOF`) and size limit. Blocking.
    static func copySource(_ name: String, from folder: String, to target: String, limits: PublishLimits) throws {
        let base = try FS.openDirectory(folder)
        let source: OpenFile
        do { source = try FS.openBeneath(base, name) } catch let error as SystemError {
            throw PublishRejected(file: name, IssuePublisher.openProblem(error.code, what: "the PDF"))
        }
        let info = try source.status()
        guard FS.isRegular(info) else { throw PublishRejected(file: name, "is not a regular file") }
        let size = Int64(widening: info.st_size)
        guard size <= limits.maxFileBytes else {
            throw PublishRejected(file: name, "is \(size) bytes; the limit per file is \(limits.maxFileBytes) bytes")
        }
        if let problem = try ContentCheck.checkPDF(source, size: size) { throw PublishRejected(file: name, problem) }
        let output = try FS.open(target, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
        // Readable by a sandbox's user, whatever the umask (the scratch folder above stays closed to others).
        guard fchmod(output.fd, 0o644) == 0 else { throw SystemError("fchmod", target) }
        let capacity = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while offset < size {
            let n = try source.read(into: buffer, count: Int(widening: min(Int64(widening: capacity), size - offset)), at: offset)
            guard n > 0 else { throw PublishRejected(file: name, "changed while it was being published; publish again") }
            try output.write(UnsafeRawBufferPointer(start: buffer, count: n))
            offset += Int64(widening: n)
        }
    }

    /// Makes the classic publish folder `<scratch>/issue` from the PDF-only folder `folder`, without
    /// publishing it: what a PDF publish does first (for the benchmark, and anything that wants the pages'
    /// images and texts). `scratch` must not exist; it is made and left to the caller.
    public static func makeClassicFolder(from folder: String, in scratch: String, options: PDFImportOptions = PDFImportOptions(),
                                         limits: PublishLimits = PublishLimits(), editionName: String = "Edició",
                                         executor: BlockingExecutor = .shared) async throws -> Rendering {
        guard mkdir(scratch, 0o700) == 0 else { throw SystemError("mkdir", scratch) }
        // Absolute: the tools run in folders of their own.
        return try await convert(folder: folder, scratch: try FS.realPath(scratch), editionName: editionName, options: options, limits: limits,
                                 executor: executor, started: FS.monotonic(), progress: nil).1
    }

    /// Makes the classic publish folder `<scratch>/issue` from the PDFs of `folder`; returns its path.
    static func convert(folder: String, scratch: String, editionName: String, options: PDFImportOptions, limits: PublishLimits,
                        executor: BlockingExecutor, started: Double,
                        progress: (@Sendable (PublishProgress) -> Void)?) async throws -> (String, Rendering) {
        let issue = scratch + "/issue"
        let (pdfs, sectionsManifest) = try await executor.run { () throws -> ([String], [UInt8]?) in
            for sub in ["input", "jobs", "issue", "issue/pdf", "issue/jpg", "issue/jpgA", "issue/txt"] {
                guard mkdir(scratch + "/" + sub, 0o700) == 0 else { throw SystemError("mkdir", scratch + "/" + sub) }
            }
            let found = try Self.sources(in: folder)
            guard !found.pdfs.isEmpty else { throw PublishRejected("the folder holds no PDF: put the issue's PDFs at its top") }
            guard found.pdfs.count <= limits.maxPages else {
                throw PublishRejected("the folder holds \(found.pdfs.count) PDFs; at most \(limits.maxPages) pages are allowed")
            }
            for (index, name) in found.pdfs.enumerated() {
                try Self.copySource(name, from: folder, to: "\(scratch)/input/\(index + 1).pdf", limits: limits)
            }
            return found
        }
        let tools = PDFToolbox(jobs: scratch + "/jobs", limits: options.limits, sandbox: options.sandbox, executor: executor)
        let width = options.parallelism

        // 1. Each file's page count and sizes (pdfinfo), and its pages, one PDF each written anew by qpdf.
        var sizes = [[PDFToolbox.PageSize]](repeating: [], count: pdfs.count)
        var splits = [[String]](repeating: [], count: pdfs.count)
        enum Found: Sendable { case pages([String]), sizes([PDFToolbox.PageSize]) }
        try await Self.inParallel(pdfs.count * 2, width: width, { job -> Found in
            let index = job / 2, input = Self.inputPath(scratch, index)
            if job % 2 == 0 { return .pages(try await tools.split(input, file: pdfs[index], job: "split-\(index + 1)")) }
            return .sizes(try await tools.pageSizes(input, file: pdfs[index], job: "info-\(index + 1)", maxPages: limits.maxPages))
        }, collect: { job, found in
            switch found {
            case .pages(let paths): splits[job / 2] = paths
            case .sizes(let found): sizes[job / 2] = found
            }
        })
        let pageSizes = sizes
        let pageCount = pageSizes.reduce(0) { $0 + $1.count }
        guard pageCount >= 1 else { throw PublishRejected("the PDFs hold no pages") }
        guard pageCount <= limits.maxPages else {
            throw PublishRejected("the PDFs hold \(pageCount) pages; at most \(limits.maxPages) are allowed")
        }
        // Each file's first page in the issue, and one past the last page.
        let firstPage = pageSizes.reduce(into: [1]) { starts, pages in starts.append((starts.last ?? 1) + pages.count) }
        for (index, pages) in pageSizes.enumerated() {
            guard splits[index].count == pages.count else {
                throw PublishRejected(file: pdfs[index], "qpdf split it into \(splits[index].count) pages, but pdfinfo counts \(pages.count)")
            }
            for (offset, size) in pages.enumerated() where !(size.width >= 1 && size.height >= 1) {
                throw PublishRejected(file: pdfs[index], page: firstPage[index] + offset,
                                      "has a page of \(size.width) × \(size.height) points; a page must be at least 1 × 1")
            }
        }
        let pagePaths = splits
        try await executor.run {
            for (index, pages) in pagePaths.enumerated() {
                for (offset, path) in pages.enumerated() {
                    try FS.rename(path, issue + "/" + PageFileKind.pdf.name(page: firstPage[index] + offset))
                }
            }
        }
        // A bad sections.json is refused before the long part.
        let manifestSections = try sectionsManifest.map { try PDFSections.parseManifest($0, pageCount: pageCount) }

        // 2. On every processor: each file's structure check (qpdf --check decodes every stream; it runs
        // first, beside the rendering rather than before it: every tool is isolated, so nothing is gained by
        // waiting, and a failure still refuses the issue), both images of every page, and each file's texts
        // and (without sections.json) bookmarks.
        enum Job: Sendable { case check(file: Int), image(page: Int, kind: PageFileKind), texts(file: Int), outline(file: Int) }
        enum Done: Sendable { case image(page: Int), other, outline([PDFSections.Bookmark]) }
        var jobs = (0..<pdfs.count).map { Job.check(file: $0) }
        jobs += (1...pageCount).flatMap { page in [Job.image(page: page, kind: .jpgA), Job.image(page: page, kind: .jpg)] }
        jobs += (0..<pdfs.count).map { Job.texts(file: $0) }
        if manifestSections == nil { jobs += (0..<pdfs.count).map { Job.outline(file: $0) } }
        let queue = jobs
        var bookmarks: [PDFSections.Bookmark] = []
        var imagesDone = [Int](repeating: 0, count: pageCount + 1)
        var pagesDone = 0
        var lastReport = 0.0
        func report(force: Bool) {
            let now = FS.monotonic()
            guard let progress, force || now - lastReport >= 0.1 else { return }
            lastReport = now
            progress(PublishProgress(phase: .rendering, filesDone: pagesDone, filesTotal: pageCount, bytesDone: 0, bytesTotal: 0,
                                     elapsed: now - started))
        }
        report(force: true)
        try await Self.inParallel(queue.count, width: width, { index -> Done in
            switch queue[index] {
            case .check(let file):
                try await tools.check(Self.inputPath(scratch, file), file: pdfs[file], job: "check-\(file + 1)")
                return .other
            case .image(let page, let kind):
                let size = kind == .jpg ? options.smallImage : options.largeImage
                try await tools.render(issue + "/" + PageFileKind.pdf.name(page: page), width: size.width, height: size.height,
                                       quality: options.jpegQuality, file: pdfs[firstPage.lastIndex { $0 <= page } ?? 0],
                                       pageNumber: page, job: "render-\(page)-\(kind.rawValue)", to: issue + "/" + kind.name(page: page))
                return .image(page: page)
            case .texts(let file):
                let pages = pageSizes[file].count, first = firstPage[file]
                let texts = try await tools.texts(Self.inputPath(scratch, file), file: pdfs[file], job: "text-\(file + 1)",
                                                  pageCount: pages)
                try await executor.run {
                    for offset in 0..<pages {
                        try Self.write(Array(texts[offset].utf8), to: issue + "/" + Self.textName(page: first + offset))
                    }
                }
                return .other
            case .outline(let file):
                let first = firstPage[file], pages = pageSizes[file].count
                // qpdf's page numbers are kept only within the file's pages.
                return .outline(try await tools.outline(Self.inputPath(scratch, file), file: pdfs[file], job: "outline-\(file + 1)")
                    .filter { $0.page >= 1 && $0.page <= pages }
                    .map { PDFSections.Bookmark(title: $0.title, page: first + $0.page - 1) })
            }
        }, collect: { _, done in
            switch done {
            case .image(let page):
                imagesDone[page] += 1
                if imagesDone[page] == 2 { pagesDone += 1; report(force: pagesDone == pageCount) }
            case .other: break
            case .outline(let found): bookmarks += found
            }
        })

        // 3. The sections: the manifest's, else the outline's, else one.
        let sections: [Section]
        let source: SectionSource
        if let manifestSections {
            sections = manifestSections
            source = .manifest
        } else if let fromOutline = PDFSections.fromOutline(bookmarks, pageCount: pageCount) {
            sections = fromOutline
            source = .outline
        } else {
            sections = PDFSections.single(named: editionName, pageCount: pageCount)
            source = .single
        }

        // 4. The manifest.
        let manifest = Self.manifest(sections: sections)
        try await executor.run { try Self.write(manifest, to: issue + "/" + PublishManifest.fileName) }
        return (issue, Rendering(pages: pageCount, sourceFiles: pdfs.count, sections: source, seconds: FS.monotonic() - started))
    }

    /// Where the `index`th source PDF is copied.
    static func inputPath(_ scratch: String, _ index: Int) -> String { "\(scratch)/input/\(index + 1).pdf" }

    /// `txt/007.txt`.
    static func textName(page: Int) -> String {
        let digits = String(page)
        return "txt/\(String(repeating: "0", count: max(0, 3 - digits.count)))\(digits).txt"
    }

    /// `issue.json` for pages 1...n with these sections and the classic file names.
    static func manifest(sections: [Section]) -> [UInt8] {
        var listed: [Section] = []
        for section in sections where !listed.contains(where: { $0.id == section.id }) { listed.append(section) }
        var pages: [[String: Any]] = []
        for (index, section) in sections.enumerated() {
            let number = index + 1
            var page: [String: Any] = ["number": number, "section": section.id]
            for kind in PageFileKind.allCases { page[kind.rawValue] = kind.name(page: number) }
            page["text"] = textName(page: number)
            pages.append(page)
        }
        let object: [String: Any] = ["sections": listed.map { ["id": $0.id, "name": $0.name] as [String: Any] }, "pages": pages]
        return Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }

    /// Writes a new file. Blocking.
    static func write(_ bytes: [UInt8], to path: String) throws {
        let file = try FS.open(path, O_WRONLY | O_CREAT | O_EXCL, mode: 0o644)
        try bytes.withUnsafeBytes { try file.write($0) }
    }

    /// Runs `body` for 0..<count, at most `width` at once; `collect` sees each result as it comes (on
    /// this task, one at a time). The first error cancels the rest and is thrown once all have ended.
    static func inParallel<T: Sendable>(_ count: Int, width: Int, _ body: @escaping @Sendable (Int) async throws -> T,
                                        collect: (Int, T) -> Void) async throws {
        try await withThrowingTaskGroup(of: (Int, T).self) { group in
            var next = 0
            while next < min(width, count) {
                let index = next
                group.addTask { (index, try await body(index)) }
                next += 1
            }
            while let (index, value) = try await group.next() {
                collect(index, value)
                if next < count {
                    let index = next
                    group.addTask { (index, try await body(index)) }
                    next += 1
                }
            }
        }
    }
}
