import Foundation
@testable import KioskEditions
@testable import KioskFiles
import KioskModels
import KioskSQLite
import KioskTestSupport

/// A temporary folder removed when released.
final class TemporaryFolder: @unchecked Sendable {
    let path: String

    init(_ label: String = "kiosk-editions") {
        var template = Array("/tmp/\(label)-XXXXXX".utf8CString)
        let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(result != nil, "mkdtemp failed")
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func sub(_ name: String) -> String {
        let full = path + "/" + name
        try? FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
        return full
    }
}

/// The shared generator (KioskTestSupport), under the names these tests use.
typealias Fixtures = IssueFolders
typealias Noise = KioskTestSupport.Noise

/// A store, an editions directory and a publisher on a temporary folder.
struct TestEnvironment {
    let temp: TemporaryFolder
    let store: SQLiteKioskStore
    let directory: EditionsDirectory
    let publisher: IssuePublisher
    static let day = IssueDate("2025-06-30")!

    init(limits: PublishLimits = PublishLimits(), bundleOptions: BundleOptions = BundleOptions(sync: false)) async throws {
        temp = TemporaryFolder()
        store = try SQLiteKioskStore(path: temp.path + "/kiosk.sqlite")
        try await store.syncCatalogue(Catalogue(
            publications: [Publication(id: 1, name: "El Punt Avui")],
            editions: [Edition(id: 1, publicationID: 1, name: "Nacional", createdOn: IssueDate("2010-03-01")!),
                       Edition(id: 2, publicationID: 1, name: "Comarques Gironines", createdOn: IssueDate("2010-03-01")!)],
            apps: [], tariffLines: []), dryRun: false)
        directory = try EditionsDirectory(path: temp.path + "/Editions")
        let store = self.store
        publisher = IssuePublisher(directory: directory, registry: store, limits: limits, bundleOptions: bundleOptions,
                                   publicationName: { try await store.publicationName(id: $0) })
    }

    var offered: OfferedEdition {
        OfferedEdition(line: TariffLine(appKey: "app", editionID: 1, order: 1, access: .free),
                       edition: Edition(id: 1, publicationID: 1, name: "Nacional", createdOn: IssueDate("2010-03-01")!),
                       publicationName: "El Punt Avui")
    }

    /// Every path below the editions directory (files and folders), relative, excluding `.locks`.
    func tree() -> Set<String> {
        var result = Set<String>()
        let root = directory.root
        if let walker = FileManager.default.enumerator(atPath: root) {
            for case let path as String in walker where !path.hasPrefix(".locks") { result.insert(path) }
        }
        return result
    }
}

struct ProcessResult { var status: Int32; var output: String; var error: String }

/// Runs a program to completion and collects its output. On a thread of its own (`ChildProcess.run`): an
/// `unzip -t` of 4 GiB must not hold one of the two threads every test's tasks share.
@discardableResult
func run(_ arguments: [String], input: String? = nil) async throws -> ProcessResult {
    let result = try await ChildProcess.run("/usr/bin/env", arguments, stdin: input)
    return ProcessResult(status: result.status, output: result.output, error: result.errors)
}

/// Python's `zipfile` opens the archive, `testzip()` checks every CRC, and every member but
/// `edicio.xml` must equal the file of the same name under `folder`. Prints `name:method` per member.
let pythonZipCheck = """
import os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
bad = z.testzip()
if bad is not None:
    sys.exit("bad CRC: " + bad)
folder = sys.argv[2]
for info in z.infolist():
    if info.filename != "edicio.xml":
        with open(os.path.join(folder, info.filename), "rb") as f:
            if z.read(info.filename) != f.read():
                sys.exit("differs: " + info.filename)
    print(info.filename + ":" + str(info.compress_type))
"""

/// Entry name -> compression method, as Python reads the archive (after checking it against `folder`).
func pythonCheck(zip: String, against folder: String) async throws -> [String: Int] {
    let result = try await run(["python3", "-c", pythonZipCheck, zip, folder])
    guard result.status == 0 else { throw CheckFailure("python zipfile: \(result.error)") }
    var methods: [String: Int] = [:]
    for line in result.output.split(separator: "\n") {
        let parts = line.split(separator: ":")
        methods[String(parts[0])] = Int(parts[1])
    }
    return methods
}

struct CheckFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func readFile(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }
