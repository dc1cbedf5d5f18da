// libFuzzer target: the publish-upload readers. The first byte picks what the rest is fed to:
//   0-3  PublishManifest.parse (issue.json)
//   4    PublishManifest.checkName (archive entry / manifest file names)
//   5-7  ArchiveExtractor.extract (ZIP, tar, tar.gz) into a scratch folder, small limits
// Properties: only PublishRejected is thrown by parse; an accepted manifest's names all pass checkName;
// an accepted name never leaves the folder; extraction never writes outside its folder.
import Foundation
import KioskEditions

#if canImport(Glibc)
import Glibc
#endif

private let scratch: String = {
    let path = NSTemporaryDirectory() + "kiosk-fuzz-\(getpid())"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzManifest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let selector = data[0]
    let rest = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch selector % 8 {
    case 0...3:
        do {
            let manifest = try PublishManifest.parse(rest, maxPages: 50)
            for page in manifest.pages {
                for name in [page.pdf, page.jpg, page.jpgA] where PublishManifest.checkName(name) != nil {
                    fatalError("accepted a bad name \(name.debugDescription)")
                }
            }
            if manifest.pages.map(\.number) != Array(1...manifest.pages.count) {
                fatalError("accepted pages out of order")
            }
        } catch {
            if error.problems.isEmpty { fatalError("PublishRejected without a problem") }
        }
    case 4:
        let name = String(decoding: rest, as: UTF8.self)
        if PublishManifest.checkName(name) == nil {
            let parts = name.split(separator: "/", omittingEmptySubsequences: false)
            if name.hasPrefix("/") || parts.contains("..") || parts.contains(".") || parts.contains("")
                || name.utf8.contains(0) || name.contains("\\")
            {
                fatalError("accepted \(name.debugDescription)")
            }
        }
    default:
        let archive = scratch + "/upload"
        let into = scratch + "/out"
        try? FileManager.default.removeItem(atPath: into)
        try? FileManager.default.createDirectory(atPath: into, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: archive, contents: Data(rest))
        let limits = ArchiveExtractor.Limits(maxEntries: 64, maxFileBytes: 1 << 20, maxTotalBytes: 4 << 20)
        do {
            _ = try ArchiveExtractor.extract(archive: archive, into: into, limits: limits)
        } catch is PublishRejected {
        } catch {
            // Other errors are I/O errors of the scratch folder; fine, but they must not be silent crashes.
        }
        // Nothing may appear next to the output folder.
        let siblings = (try? FileManager.default.contentsOfDirectory(atPath: scratch)) ?? []
        if Set(siblings) != ["upload", "out"] { fatalError("extraction wrote outside its folder: \(siblings)") }
    }
    return 0
}
