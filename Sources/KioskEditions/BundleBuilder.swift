#if canImport(Glibc)
import Glibc
#endif
import KioskModels
import KioskFiles

/// How bundles are written: the ZIP writer's options, and whether the file is made durable.
public struct BundleOptions: Sendable, Hashable {
    /// Level 1: a page PDF's own streams are already compressed, so higher levels buy little (level 6
    /// saved 0.07% more on the reference data set for 6% more CPU).
    public var zip: ZipOptions
    /// fsync the bundle before it is renamed into place (and the folder after).
    public var sync = true

    public init(compressionLevel: Int32 = 1, minimumSaving: Double = 0.05, probeBytes: Int = 64 << 10,
                bufferLimit: Int = 4 << 20, forceZIP64: Bool = false, sync: Bool = true, workers: Int? = nil) {
        zip = ZipOptions(compressionLevel: compressionLevel, minimumSaving: minimumSaving, probeBytes: probeBytes,
                         bufferLimit: bufferLimit, forceZIP64: forceZIP64, workers: workers)
        self.sync = sync
    }
}

/// A bundle is a ZIP archive as written.
public typealias BuiltBundle = WrittenZip

/// Writes an issue's ZIP bundle: `edicio.xml` first, then the page files in order (`ZipWriter`).
///
/// The archive is written to a temporary file beside `path` (hashed on the way), fsynced, and renamed
/// over `path`: a reader sees the old file, the complete new one, or none, never a partial one. Entry
/// times are the issue's date, so the same issue always gives the same bytes.
public enum BundleBuilder {
    /// Builds the bundle at `path`, its blocking work on `executor`.
    public static func build(manifest: [UInt8], entries: [ZipEntry], date: IssueDate, to path: String,
                             options: BundleOptions = BundleOptions(),
                             executor: BlockingExecutor = .shared) async throws -> BuiltBundle {
        let folder = FS.parentPath(path)
        let name = String(path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...])
        let temporary = "\(folder)/.\(name).tmp-\(getpid())-\(FS.randomSuffix())"
        let file = try await executor.run { try FS.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o644) }
        do {
            let writer = try ZipWriter(file: file, options: options.zip, date: (date.year, date.month, date.day))
            try await executor.run { try writer.addMemory(name: "edicio.xml", manifest) }
            try await writer.add(entries, executor: executor)
            return try await executor.run {
                let written = try writer.finish()
                if options.sync { try file.sync() }
                try FS.rename(temporary, path)
                if options.sync { try FS.syncDirectory(folder) }
                return written
            }
        } catch {
            _ = try? await executor.run { FS.unlink(temporary) }
            throw error
        }
    }
}
