#if canImport(Glibc)
import Glibc
#endif
import Foundation
import KioskFiles

/// Runs the PDF tools of Debian's poppler-utils and qpdf for a PDF-only publish, each as an isolated
/// child process (`IsolatedProcess`) in a job folder of its own under the publish's scratch folder, in
/// the `sandbox` when there is one (seeing only its job folder and the PDF it reads), and turns a failure
/// into a `PublishRejected` naming the file, the page and the tool.
struct PDFToolbox: Sendable {
    /// Where job folders are made.
    let jobs: String
    let limits: ChildLimits
    /// Where the tools run; nil: as the server's user, seeing what it sees.
    let sandbox: Sandbox?
    let executor: BlockingExecutor

    /// What a tool left in its job folder.
    struct Job: Sendable {
        let folder: String
        /// The tool's standard output.
        var standardOutput: String { folder + "/" + IsolatedProcess.standardOutputName }
        func path(_ name: String) -> String { folder + "/" + name }
    }

    /// Runs `tool` in a new job folder named `job`, reading `input` (an absolute path); `file` and `page`
    /// name what a refusal is about. `accept`: the exit statuses that mean success. Then `finish` runs on
    /// the same thread with the job (moving its outputs away); the folder is removed afterwards unless `keep`.
    func run<T: Sendable>(_ tool: String, _ arguments: [String], input: String, job name: String, file: String, page: Int? = nil,
                          accept: Set<Int32> = [0], keep: Bool = false,
                          finish: @escaping @Sendable (Job) throws -> T) async throws -> T {
        let job = Job(folder: jobs + "/" + name)
        let limits = self.limits, sandbox = self.sandbox
        return try await executor.run {
            guard mkdir(job.folder, 0o700) == 0 else { throw SystemError("mkdir", job.folder) }
            let outcome = try IsolatedProcess.run(tool, arguments, in: job.folder, inputs: [input], limits: limits, sandbox: sandbox)
            if case .exited(let status) = outcome.ending, accept.contains(status) {
                let result = try finish(job)
                if !keep { try FS.removeTree(job.folder) }
                return result
            }
            throw PublishRejected(file: file, page: page, Self.describe(tool: tool, outcome, limits: limits))
        }
    }

    /// Why a tool run failed, for a refusal.
    static func describe(tool: String, _ outcome: ChildOutcome, limits: ChildLimits) -> String {
        let detail = outcome.errorText.isEmpty ? "" : ": \(outcome.errorText)"
        switch outcome.ending {
        case .timedOut:
            let whole = abs(limits.wallSeconds) < 1e15 ? Int(exactly: limits.wallSeconds.rounded(.towardZero)) : nil
            let seconds = whole.map { "\($0)" } ?? "\(limits.wallSeconds)"
            return "\(tool) took longer than \(seconds) s on it and was stopped; the PDF is too complex or hostile"
        case .signaled(SIGXCPU), .signaled(SIGKILL):
            return "\(tool) used more than \(limits.cpuSeconds) s of processor time on it and was stopped"
        case .signaled(SIGXFSZ), .outputTooLarge:
            return "\(tool) wrote more than \(limits.outputBytes) bytes for it and was stopped"
        case .signaled(let signal):
            return "\(tool) crashed on it (signal \(signal))\(detail)"
        case .exited(let status):
            return "\(tool) could not read it (exit status \(status))\(detail)"
        case .leftOddFile(let name):
            return "\(tool) left \(name) in its job folder, which is neither a regular file nor a folder; the PDF is hostile"
        }
    }

    // MARK: The tools

    /// `qpdf --check`: the structure parses and every stream decodes (warnings, exit 3, are accepted:
    /// qpdf repaired what it found).
    func check(_ input: String, file: String, job: String) async throws {
        try await run("qpdf", ["--check", input], input: input, job: job, file: file, accept: [0, 3]) { _ in }
    }

    /// A page's size in points, as `pdfinfo` reports it.
    struct PageSize: Sendable, Hashable {
        var width: Double
        var height: Double
    }

    /// `pdfinfo`: the page count and each page's size (at most `maxPages` are listed).
    func pageSizes(_ input: String, file: String, job: String, maxPages: Int) async throws -> [PageSize] {
        let last = maxPages < Int.max ? maxPages + 1 : maxPages
        return try await run("pdfinfo", ["-f", "1", "-l", String(last), input], input: input, job: job, file: file) { job in
            let data = try Data(contentsOf: URL(fileURLWithPath: job.standardOutput))
            return try Self.pageSizes(pdfinfo: String(decoding: data, as: UTF8.self), file: file, maxPages: maxPages)
        }
    }

    /// Reads `pdfinfo -f 1 -l N`'s output. The lines before `Pages:` echo the PDF's own metadata (a
    /// title may hold a newline and "Page 1 size: …" or "Pages: 9"), so only the last line starting with
    /// `Pages:` gives the count, and only the lines after it starting with `Page <n> size:`, `n` the
    /// next page expected, give the sizes ("Page    1 size: 595.276 x 841.89 pts (A4)").
    /// Throws `PublishRejected` naming `file`.
    static func pageSizes(pdfinfo text: String, file: String, maxPages: Int) throws -> [PageSize] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let pagesLine = lines.lastIndex(where: { $0.utf8.starts(with: "Pages:".utf8) }),
              let count = Int(lines[pagesLine].dropFirst(6).trimmingCharacters(in: .whitespaces)), count >= 1 else {
            throw PublishRejected(file: file, "pdfinfo found no pages in it")
        }
        guard count <= maxPages else {
            throw PublishRejected(file: file, "has \(count) pages; at most \(maxPages) are allowed in an issue")
        }
        var sizes: [PageSize] = []
        for line in lines[(pagesLine + 1)...] where line.utf8.starts(with: "Page ".utf8) {
            let words = line.split(separator: " ")
            guard words.count >= 3, words[2] == "size:" else { continue }      // "Page    1 rot:   0"
            guard words.count >= 7, Int(words[1], radix: 10) == sizes.count + 1, words[4] == "x", words[6] == "pts",
                  let width = Double(words[3]), let height = Double(words[5]), width.isFinite, height.isFinite else {
                throw PublishRejected(file: file, "pdfinfo gave a page size that cannot be read: \(String(line.prefix(200)).debugDescription)")
            }
            sizes.append(PageSize(width: width, height: height))
        }
        guard sizes.count == count else {
            throw PublishRejected(file: file, "pdfinfo could not read the size of every page (\(sizes.count) of \(count))")
        }
        return sizes
    }

    /// `qpdf --split-pages`: one PDF per page, written by qpdf (document-level actions, scripts and
    /// attachments stay behind); their paths in page order, in a kept job folder.
    func split(_ input: String, file: String, job: String) async throws -> [String] {
        try await run("qpdf", ["--split-pages", input, "page.pdf"], input: input, job: job, file: file, accept: [0, 3], keep: true) { job in
            try FS.list(job.folder).filter { $0.hasPrefix("page-") && $0.hasSuffix(".pdf") }
                .sorted { PDFIssueImporter.naturalOrder($0, $1) }.map(job.path)
        }
    }

    /// `pdftotext`: each page's text (UTF-8, reading order), from one run over the whole file.
    func texts(_ input: String, file: String, job: String, pageCount: Int) async throws -> [String] {
        try await run("pdftotext", ["-enc", "UTF-8", input, "text.txt"], input: input, job: job, file: file) { job in
            let data = try Data(contentsOf: URL(fileURLWithPath: job.path("text.txt")))
            // pdftotext ends every page with a form feed.
            var pages = data.split(separator: 0x0C, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            if pages.count > pageCount { pages.removeLast(pages.count - pageCount) }
            while pages.count < pageCount { pages.append("") }
            return pages
        }
    }

    /// The top-level outline entries (bookmarks) and the pages they point to, through `qpdf --json`.
    func outline(_ input: String, file: String, job: String) async throws -> [PDFSections.Bookmark] {
        try await run("qpdf", ["--json=2", "--json-key=outlines", input], input: input, job: job, file: file, accept: [0, 3]) { job in
            let data = try Data(contentsOf: URL(fileURLWithPath: job.standardOutput))
            guard let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let outlines = json["outlines"] as? [[String: Any]] else { return [] }
            return outlines.compactMap { entry in
                guard let title = entry["title"] as? String, let page = entry["destpageposfrom1"] as? Int else { return nil }
                return PDFSections.Bookmark(title: title, page: page)
            }
        }
    }

    /// `pdftoppm`: the page as a JPEG of exactly `width` × `height` pixels (the resolution follows from
    /// the page's size, so a huge page costs no more than a small one), moved to `target`.
    func render(_ page: String, width: Int, height: Int, quality: Int, file: String, pageNumber: Int,
                job: String, to target: String) async throws {
        try await run("pdftoppm", ["-jpeg", "-jpegopt", "quality=\(quality)", "-scale-to-x", String(width),
                                   "-scale-to-y", String(height), "-singlefile", page, "image"],
                      input: page, job: job, file: file, page: pageNumber) { job in
            try FS.rename(job.path("image.jpg"), target)
        }
    }
}
