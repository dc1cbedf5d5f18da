import KioskFiles
import KioskModels

/// How far a publish has got, for the CLI's progress line and the HTTP endpoint's log. In the `rendering`
/// phase (a PDF-only publish, `PDFIssueImporter`) the files counted are pages rendered.
public struct PublishProgress: Sendable, Hashable {
    public enum Phase: String, Sendable, Hashable { case rendering, checking, copying, bundling, committing, done }
    public var phase: Phase
    public var filesDone: Int
    public var filesTotal: Int
    public var bytesDone: Int64
    public var bytesTotal: Int64
    /// Seconds since the publish began.
    public var elapsed: Double
    /// Bytes per second over the whole publish so far.
    public var bytesPerSecond: Double { elapsed > 0 ? Double(bytesDone) / elapsed : 0 }
}

/// A completed publish.
public struct PublishResult: Sendable, Hashable {
    public var editionID: Int
    public var date: IssueDate
    public var revision: Int
    /// The revision it replaced (its folder is gone), if any.
    public var replacedRevision: Int?
    public var pages: Int
    /// Bytes of page files.
    public var bytes: Int64
    public var bundle: BundleInfo
    public var seconds: Double
}

/// Throttles progress callbacks to ten a second (and phase changes).
final class ProgressReporter: @unchecked Sendable {
    private let started: Double
    private let callback: (@Sendable (PublishProgress) -> Void)?
    private var last: Double = 0
    private var lastPhase: PublishProgress.Phase?

    init(started: Double, callback: (@Sendable (PublishProgress) -> Void)?) {
        self.started = started; self.callback = callback
    }

    /// Called from one thread at a time (the publish's jobs run one after another).
    func report(_ phase: PublishProgress.Phase, files: Int, of filesTotal: Int, bytes: Int64, of bytesTotal: Int64,
                force: Bool = false) {
        guard let callback else { return }
        let now = FS.monotonic()
        guard force || phase != lastPhase || now - last >= 0.1 else { return }
        last = now
        lastPhase = phase
        callback(PublishProgress(phase: phase, filesDone: files, filesTotal: filesTotal, bytesDone: bytes,
                                 bytesTotal: bytesTotal, elapsed: now - started))
    }
}
