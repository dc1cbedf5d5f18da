import ArgumentParser
import Foundation
import KioskEditions
import KioskFiles
import KioskIntegers
import KioskModels
import Logging
import KioskConfig
import KioskHTTP
import KioskWiring

/// `KioskServer publish --edition ID --date YYYY-MM-DD PATH`: publishes an issue from a folder, an archive
/// of one, or one PDF (what `PUT /publish` takes).
struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish an issue from a folder (issue.json and its page files, or PDFs alone), an archive of one, or one PDF.",
        discussion: """
            PATH is a publish folder, a ZIP, tar or gzip'd tar of one, or the issue as one PDF file (a name ending \
            in .pdf), exactly as PUT /publish takes them (see docs/publishing.md). Everything is checked first (PDF \
            and JPEG by content, page numbers, sizes, names); a refusal lists every problem and changes nothing. From \
            PDFs alone, the pages' images and texts are made first (each tool isolated, within the configuration's pdf \
            limits). An accepted issue appears to readers all at once, replacing an earlier publication of the same date.
            """)

    @OptionGroup var options: StoreOptions

    @Option(help: "Edition id (EDICIO_ID), as in the configuration.")
    var edition: Int

    @Option(help: "Issue date, YYYY-MM-DD.")
    var date: String

    @Argument(help: "The publish folder, an archive of one, or a PDF file.")
    var path: String

    @Flag(help: "Do not show progress on standard error.")
    var quiet = false

    func run() async throws {
        guard let day = IssueDate(date) else { throw ValidationError("--date must be a real day written YYYY-MM-DD, got \(date)") }
        let configuration = try options.loadConfiguration()
        let store = try await StoreOptions.openStore(configuration)
        _ = try await configuration.syncCatalogue(into: store)
        let directory = try EditionsDirectory(path: configuration.server.editions)
        let publisher = IssuePublisher(directory: directory, registry: store,
                                       publicationName: { try await store.publicationName(id: $0) },
                                       logger: Logger(label: "kiosk.publish", factory: { _ in SwiftLogNoOpLogHandler() }))
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ValidationError("\(path) does not exist (give a publish folder, an archive of one, or a PDF file)")
        }
        let isFolder = isDirectory.boolValue
        // The PDF tools' sandbox, looked for only when they may run.
        var sandbox: Sandbox?
        if !isFolder || PDFIssueImporter.isPDFOnlyFolder(path) {
            let found = try StartupChecks.pdfSandbox(configuration.pdf)
            if let warning = found.warning { printError("warning: \(warning)") }
            sandbox = found.sandbox
        }
        let importer = PDFIssueImporter(publisher: publisher, options: configuration.pdf.importOptions(sandbox: sandbox))
        let progress = ProgressLine(enabled: !quiet)
        do {
            let outcome = if isFolder {
                try await importer.publish(editionID: edition, date: day, from: path, progress: { progress.show($0) })
            } else {
                try await UploadPublisher(importer: importer).publish(
                    file: path, maxBytes: Int64(widening: configuration.limits.maxUploadBytes), editionID: edition, date: day,
                    progress: { progress.show($0) })
            }
            let result = outcome.result
            progress.finish()
            if let rendering = outcome.rendering {
                printOutput("rendered \(rendering.pages) pages from \(rendering.sourceFiles) PDF\(rendering.sourceFiles == 1 ? "" : "s") "
                    + "(sections from \(rendering.sections.rawValue)) in \(String(format: "%.2f", rendering.seconds)) s")
            }
            let replaced = result.replacedRevision.map { ", replacing revision \($0)" } ?? ""
            printOutput("published edition \(result.editionID) \(result.date) revision \(result.revision)\(replaced): "
                + "\(result.pages) pages, \(ProgressLine.megabytes(result.bytes)), bundle \(ProgressLine.megabytes(result.bundle.size)) "
                + "sha256 \(result.bundle.sha256), in \(String(format: "%.2f", result.seconds)) s")
        } catch let rejected as PublishRejected {
            progress.finish()
            printError(rejected.description)
            throw ExitCode.failure
        } catch let refused as UploadPublisher.Refused {
            progress.finish()
            printError(refused.description)
            throw ExitCode.failure
        } catch let error as SystemError where error.isOutOfSpace {
            progress.finish()
            printError("the editions disk is full (\(error)); nothing was published. Free space and publish again.")
            throw ExitCode.failure
        }
    }
}

/// The issue `withdraw` and `restore` act on, and the publisher they act through.
struct IssueOptions: ParsableArguments {
    @Option(help: "Edition id (EDICIO_ID).")
    var edition: Int

    @Option(help: "Issue date, YYYY-MM-DD.")
    var date: String

    func day() throws -> IssueDate {
        guard let day = IssueDate(date) else { throw ValidationError("--date must be a real day written YYYY-MM-DD, got \(date)") }
        return day
    }

    /// The publisher of the configuration's store and editions directory.
    func publisher(_ options: StoreOptions) async throws -> IssuePublisher {
        let configuration = try options.loadConfiguration()
        let store = try await StoreOptions.openStore(configuration)
        let directory = try EditionsDirectory(path: configuration.server.editions)
        return IssuePublisher(directory: directory, registry: store,
                              publicationName: { try await store.publicationName(id: $0) },
                              logger: Logger(label: "kiosk.publish", factory: { _ in SwiftLogNoOpLogHandler() }))
    }
}

/// `KioskServer withdraw --edition ID --date YYYY-MM-DD`: hides a published issue from readers.
struct WithdrawCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "withdraw",
        abstract: "Hide a published issue from readers (`restore` brings it back).")

    @OptionGroup var options: StoreOptions
    @OptionGroup var issue: IssueOptions

    func run() async throws {
        let (edition, day) = (issue.edition, try issue.day())
        let publisher = try await issue.publisher(options)
        if try await publisher.withdraw(editionID: edition, date: day) {
            printOutput("withdrew edition \(edition) \(day)")
        } else {
            printError("edition \(edition) has no visible issue on \(day); nothing changed")
            throw ExitCode.failure
        }
    }
}

/// `KioskServer restore --edition ID --date YYYY-MM-DD`: brings a withdrawn issue back to readers.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Bring a withdrawn issue back to readers as it was (its files and searchable text).")

    @OptionGroup var options: StoreOptions
    @OptionGroup var issue: IssueOptions

    func run() async throws {
        let (edition, day) = (issue.edition, try issue.day())
        let publisher = try await issue.publisher(options)
        do {
            let revision = try await publisher.restore(editionID: edition, date: day)
            printOutput("restored edition \(edition) \(day) (revision \(revision))")
        } catch let refused as IssueRestoreRefused {
            printError(refused.description + "; nothing changed")
            throw ExitCode.failure
        }
    }
}

/// The publish progress on standard error: one line rewritten in place on a terminal; otherwise (a log)
/// a line when a phase begins and then at most one every `logInterval` seconds, ending with the `done`
/// line's totals.
final class ProgressLine: @unchecked Sendable {
    private let enabled: Bool
    private let terminal = isatty(2) != 0
    private let logInterval = 1.0
    private var lastPhase: PublishProgress.Phase?
    private var lastLogged = -Double.infinity
    private var shown = false

    init(enabled: Bool) { self.enabled = enabled }

    static func megabytes(_ bytes: Int64) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }

    /// Called from the publisher's worker thread (or the importer's task while rendering), one call at a time.
    func show(_ progress: PublishProgress) {
        guard enabled else { return }
        let unit = progress.phase == .rendering ? "pages" : "files"
        var text = "\(progress.phase.rawValue) \(progress.filesDone)/\(progress.filesTotal) \(unit)"
        if progress.bytesTotal > 0 {
            text += ", \(Self.megabytes(progress.bytesDone))/\(Self.megabytes(progress.bytesTotal))"
            text += String(format: ", %.1f MB/s", progress.bytesPerSecond / 1e6)
        }
        text += String(format: ", %.1f s", progress.elapsed)
        if terminal {
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + text).utf8))
            shown = true
        } else if progress.phase != lastPhase || progress.elapsed - lastLogged >= logInterval {
            FileHandle.standardError.write(Data((text + "\n").utf8))
            lastLogged = progress.elapsed
        }
        lastPhase = progress.phase
    }

    func finish() {
        if shown { FileHandle.standardError.write(Data("\n".utf8)); shown = false }
    }
}
