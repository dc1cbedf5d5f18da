import Foundation
import KioskFiles
import KioskIntegers
import KioskModels

/// Publishing one file: an archive (ZIP, tar, gzip'd tar) of a publish folder, or the issue as one PDF.
/// `PUT /publish` streams the request body into an upload and `KioskServer publish FILE` copies the named
/// file into one; both then publish it here: unpacked (within the publish limits) or taken as the issue's
/// only PDF, published through `PDFIssueImporter`, and the upload removed whatever the outcome.
public struct UploadPublisher: Sendable {
    public let importer: PDFIssueImporter
    public var directory: EditionsDirectory { importer.publisher.directory }

    /// What an upload holds.
    public enum Kind: Sendable, Hashable {
        /// A ZIP, tar or gzip'd tar of a publish folder (the format is found from the bytes).
        case archive
        /// The whole issue as one PDF, published as a PDF-only folder.
        case pdf

        /// `.pdf` for a name ending in `.pdf` (any case), else `.archive`.
        public init(fileName: String) {
            self = fileName.lowercased().hasSuffix(".pdf") ? .pdf : .archive
        }
    }

    /// An upload that could not be used, or an issue the checks refused. `unusableUpload` tells which:
    /// the archive itself (HTTP 400) or what it holds (422); `rejected.exceedsLimit` a size limit (413).
    public struct Refused: Error, Sendable, CustomStringConvertible {
        public var rejected: PublishRejected
        public var unusableUpload: Bool
        public var description: String { rejected.description }
    }

    /// The name a single uploaded PDF gets in its folder.
    static let uploadedPDFName = "issue.pdf"

    public init(importer: PDFIssueImporter) {
        self.importer = importer
    }

    /// A new upload folder to fill (`EditionsDirectory.UploadFolder.append`), then `publish`.
    public func makeUpload() async throws -> EditionsDirectory.UploadFolder {
        let directory = self.directory
        return try await directory.executor.run { try directory.makeUploadFolder() }
    }

    /// Removes an upload that will not be published (e.g. a body over the limit).
    public func discard(_ upload: EditionsDirectory.UploadFolder) async {
        _ = try? await directory.executor.run { upload.remove() }
    }

    /// Publishes what `upload` holds as (`editionID`, `date`) and removes the upload. Throws `Refused` for
    /// an unusable upload or a refused issue, `SystemError` for the disk (nothing is published either way).
    public func publish(_ upload: EditionsDirectory.UploadFolder, kind: Kind, editionID: Int, date: IssueDate,
                        progress: (@Sendable (PublishProgress) -> Void)? = nil) async throws -> PDFIssueImporter.Outcome {
        let directory = self.directory
        let limits = ArchiveExtractor.Limits(publish: importer.publisher.limits)
        do {
            let folder: String
            do {
                folder = try await directory.executor.run {
                    if kind == .pdf {
                        try FS.rename(upload.archivePath, upload.treePath + "/" + Self.uploadedPDFName)
                        return upload.treePath
                    }
                    return try ArchiveExtractor.extract(archive: upload.archivePath, into: upload.treePath, limits: limits)
                }
            } catch let rejected as PublishRejected {
                throw Refused(rejected: rejected, unusableUpload: true)
            }
            let outcome: PDFIssueImporter.Outcome
            do {
                outcome = try await importer.publish(editionID: editionID, date: date, from: folder, progress: progress)
            } catch let rejected as PublishRejected {
                throw Refused(rejected: rejected, unusableUpload: false)
            }
            await discard(upload)
            return outcome
        } catch {
            await discard(upload)
            throw error
        }
    }

    /// Publishes the file at `path` (its kind from its name unless given): copied into a new upload in
    /// 1 MiB pieces, refused past `maxBytes` before anything is unpacked.
    public func publish(file path: String, kind: Kind? = nil, maxBytes: Int64, editionID: Int, date: IssueDate,
                        progress: (@Sendable (PublishProgress) -> Void)? = nil) async throws -> PDFIssueImporter.Outcome {
        let upload = try await makeUpload()
        do {
            let copied = try await directory.executor.run { try Self.copy(path, into: upload, maxBytes: maxBytes) }
            guard copied <= maxBytes else {
                throw Refused(rejected: PublishRejected(file: path, "the file is larger than the upload limit of \(maxBytes) bytes",
                                                        exceedsLimit: true),
                              unusableUpload: true)
            }
        } catch {
            await discard(upload)
            throw error
        }
        return try await publish(upload, kind: kind ?? Kind(fileName: path), editionID: editionID, date: date, progress: progress)
    }

    /// Copies up to `maxBytes` + 1 bytes of `path` into the upload; returns the bytes read. Blocking.
    private static func copy(_ path: String, into upload: EditionsDirectory.UploadFolder, maxBytes: Int64) throws -> Int64 {
        let file = try FS.open(path, O_RDONLY)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var total: Int64 = 0
        while total <= maxBytes {
            let count = try buffer.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return try file.read(into: base, count: raw.count, at: total)
            }
            if count == 0 { break }
            total += Int64(widening: count)
            try buffer.withUnsafeBytes { try upload.append(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
        }
        return total
    }
}
