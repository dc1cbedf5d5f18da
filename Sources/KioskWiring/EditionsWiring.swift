import Foundation
import KioskEditions
import KioskFiles
import KioskIntegers
import KioskModels
import KioskSQLite
import Logging
import KioskConfig
import KioskHTTP

/// The editions layer as the server uses it: one editions directory and one bundle service per process
/// (its in-flight builds outlive configuration reloads), and per configuration the link format,
/// file delivery and publishing endpoint.
struct EditionsServices: Sendable {
    let directory: EditionsDirectory
    let bundles: BundleService
    let store: any KioskDatabase
    let logger: Logger

    init(configuration: KioskConfiguration, store: any KioskDatabase, logger: Logger, bundleObserver: (any BundleObserver)? = nil) throws {
        self.directory = try EditionsDirectory(path: configuration.server.editions)
        self.bundles = BundleService(directory: directory, registry: store, logger: logger, observer: bundleObserver)
        self.store = store
        self.logger = logger
    }

    func links(_ configuration: KioskConfiguration, secrets: Secrets) -> SignedLinks {
        SignedLinks(format: LinkFormat(rawValue: configuration.links.format) ?? .kiosk, secret: secrets.linkSecret,
                    prefix: configuration.links.prefix, baseURL: configuration.publicURL,
                    lifetimeSeconds: Int64(widening: configuration.links.lifetimeSeconds),
                    expiryBucketSeconds: Int64(widening: configuration.links.expiryBucketSeconds))
    }

    func publisher() -> IssuePublisher {
        let store = self.store
        return IssuePublisher(directory: directory, registry: store,
                              publicationName: { try await store.publicationName(id: $0) }, logger: logger)
    }

    /// Publishes the sample issues of `configuration.server.samples` into an empty database
    /// (the embedded default a fresh clone starts with).
    func publishSamplesIfEmpty(_ configuration: KioskConfiguration) async throws {
        guard let samples = configuration.server.samples, try await store.storedRevisions().isEmpty else { return }
        let publisher = publisher()
        for (editionID, date, folder) in SampleIssues.find(in: samples) {
            let result = try await publisher.publish(editionID: editionID, date: date, from: folder)
            logger.info("published sample issue", metadata: [
                "edition": .stringConvertible(editionID), "date": .string(date.description),
                "pages": .stringConvertible(result.pages)])
        }
    }

    /// Removes what a crash may have left: staging folders, temporary bundles, unreferenced revisions.
    func cleanUp() async throws {
        _ = try await directory.cleanUp(registry: store, logger: logger)
    }
}

extension KioskConfiguration.PDF {
    /// The importer's options from the `pdf` section (already validated), the tools in `sandbox`.
    package func importOptions(sandbox: Sandbox?) -> PDFImportOptions {
        func pixels(_ text: String, _ fallback: PDFImportOptions.Pixels) -> PDFImportOptions.Pixels {
            Self.pixels(text).map { PDFImportOptions.Pixels(width: $0.width, height: $0.height) } ?? fallback
        }
        let defaults = PDFImportOptions()
        return PDFImportOptions(smallImage: pixels(smallImage, defaults.smallImage), largeImage: pixels(largeImage, defaults.largeImage),
                                jpegQuality: jpegQuality,
                                limits: ChildLimits(cpuSeconds: cpuSeconds, memoryBytes: memoryBytes, outputBytes: maxOutputBytes,
                                                    wallSeconds: wallSeconds),
                                sandbox: sandbox)
    }
}

/// Sample publish folders laid out as `<edition>/<YYYY-MM-DD>/issue.json`.
enum SampleIssues {
    static func find(in root: String) -> [(editionID: Int, date: IssueDate, folder: String)] {
        let files = FileManager.default
        var found: [(Int, IssueDate, String)] = []
        for edition in (try? files.contentsOfDirectory(atPath: root)) ?? [] {
            guard let editionID = Int(edition) else { continue }
            for day in (try? files.contentsOfDirectory(atPath: root + "/" + edition)) ?? [] {
                let folder = root + "/" + edition + "/" + day
                if let date = IssueDate(day), files.fileExists(atPath: folder + "/issue.json") {
                    found.append((editionID, date, folder))
                }
            }
        }
        return found.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
    }
}
