// Builds one issue bundle with KioskEditions' BundleBuilder: the code path of a publish or a
// first-demand build, timed from outside by Benchmarks/bundle_bench.sh (hyperfine).
//
//     BundleBenchmark SRC OUT [--no-sync] [--repeat N [--drop-caches]] [--workers N] [--min-saving F] [--level N]
//
// --min-saving: the fraction deflating must save for an entry to be deflated (default 0.05, as in
// production); 1 stores everything (the I/O floor of the builder).
//
// --warm-up: builds a bundle of a tiny manifest only, into a temporary file, and exits: run after the
// page cache is dropped so a "cold" run reads the issue's files cold but not this program's libraries
// (a server is resident; what is cold for it is the issue).
//
// SRC is a staged issue as zip_bench.py lays it out: edicio.xml, pdf/NNN.pdf, jpg/NNN.jpg, jpgA/NNN.jpg.
// With --repeat N the build runs N times in this process and prints the mean (no process start-up);
// add --drop-caches (root) to sync and drop the page cache before each build: the issue's files are
// read cold, while this process's own code stays resident, as in a running server.
//
// --zipfoundation: the same bundle written by ZIPFoundation instead (JPEGs stored, PDFs and edicio.xml
// deflated, no probe, no SHA-256, no fsync): the library the ZIP writer was measured against.
import Foundation
import KioskEditions
import KioskFiles
import KioskModels
import ZIPFoundation

var arguments = Array(CommandLine.arguments.dropFirst())
var sync = true
var repeats = 0
var workers: Int?
var minimumSaving = 0.05
var level: Int32?
if let index = arguments.firstIndex(of: "--level"), index + 1 < arguments.count {
    level = Int32(arguments[index + 1])
    arguments.removeSubrange(index...(index + 1))
}
if let index = arguments.firstIndex(of: "--min-saving"), index + 1 < arguments.count {
    minimumSaving = Double(arguments[index + 1]) ?? 0.05
    arguments.removeSubrange(index...(index + 1))
}
if let index = arguments.firstIndex(of: "--workers"), index + 1 < arguments.count {
    workers = Int(arguments[index + 1])
    arguments.removeSubrange(index...(index + 1))
}
if let index = arguments.firstIndex(of: "--no-sync") { sync = false; arguments.remove(at: index) }
var dropCaches = false
if let index = arguments.firstIndex(of: "--drop-caches") { dropCaches = true; arguments.remove(at: index) }
var useZIPFoundation = false
if let index = arguments.firstIndex(of: "--zipfoundation") { useZIPFoundation = true; arguments.remove(at: index) }
if let index = arguments.firstIndex(of: "--repeat"), index + 1 < arguments.count {
    repeats = Int(arguments[index + 1]) ?? 1
    arguments.removeSubrange(index...(index + 1))
}
if arguments == ["--warm-up"] {
    let path = NSTemporaryDirectory() + "/bundle-benchmark-warm-up-\(getpid()).zip"
    _ = try? await BundleBuilder.build(manifest: Array("<edicio/>".utf8), entries: [], date: IssueDate("2025-06-30")!, to: path,
                                 options: BundleOptions(sync: false))
    unlink(path)
    exit(0)
}
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: BundleBenchmark SRC OUT [--no-sync] [--repeat N [--drop-caches]] [--workers N] [--min-saving F] [--level N] [--zipfoundation]\n".utf8))
    exit(2)
}
let source = arguments[0], output = arguments[1]
let manifest = Array(FileManager.default.contents(atPath: source + "/edicio.xml") ?? Data())
var entries: [ZipEntry] = []
for kind in ["pdf", "jpg", "jpgA"] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: source + "/" + kind)) ?? []
    for name in names.sorted() {
        entries.append(ZipEntry(name: "\(kind)/\(name)", source: "\(source)/\(kind)/\(name)", alwaysStore: kind != "pdf"))
    }
}
var options = BundleOptions(minimumSaving: minimumSaving, sync: sync, workers: workers)
if let level { options.zip.compressionLevel = level }
let date = IssueDate("2025-06-30")!

/// The bundle through ZIPFoundation: `edicio.xml` and the PDFs deflated, the JPEGs stored.
@MainActor func buildWithZIPFoundation(to output: String) throws {
    let archive = try Archive(url: URL(fileURLWithPath: output), accessMode: .create)
    let base = URL(fileURLWithPath: source)
    try archive.addEntry(with: "edicio.xml", relativeTo: base, compressionMethod: .deflate)
    for entry in entries {
        try archive.addEntry(with: entry.name, relativeTo: base, compressionMethod: entry.alwaysStore ? .none : .deflate)
    }
}

do {
    if useZIPFoundation {
        for _ in 0..<max(repeats, 1) {
            unlink(output)
            let start = Date()
            try buildWithZIPFoundation(to: output)
            if repeats > 0 { print(String(format: "zipfoundation build: %.2f ms", Date().timeIntervalSince(start) * 1000)) }
        }
        exit(0)
    }
    if repeats > 0 {
        var total = 0.0
        for _ in 0..<repeats {
            unlink(output)
            if dropCaches {
                Glibc.sync()
                guard let control = fopen("/proc/sys/vm/drop_caches", "w"), fputs("3\n", control) >= 0, fclose(control) == 0 else {
                    FileHandle.standardError.write(Data("--drop-caches: cannot write /proc/sys/vm/drop_caches (needs root)\n".utf8))
                    exit(1)
                }
            }
            let start = Date()
            _ = try await BundleBuilder.build(manifest: manifest, entries: entries, date: date, to: output, options: options)
            total += Date().timeIntervalSince(start)
        }
        let mean = String(format: "%.2f", total / Double(repeats) * 1000)
        print("in-process mean over \(repeats) \(dropCaches ? "cold" : "warm") builds: \(mean) ms")
    } else {
        let built = try await BundleBuilder.build(manifest: manifest, entries: entries, date: date, to: output, options: options)
        if ProcessInfo.processInfo.environment["BUNDLE_BENCH_VERBOSE"] != nil {
            print("\(built.size) bytes, \(built.storedEntries) stored, \(built.deflatedEntries) deflated, sha256 \(built.sha256)")
        }
    }
} catch {
    FileHandle.standardError.write(Data("bundle build failed: \(error)\n".utf8))
    exit(1)
}
