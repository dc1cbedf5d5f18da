// Makes a PDF-only publish folder into a classic one, as a PDF publish does before publishing:
// structure checks, split, both images of every page, texts; every tool isolated, one per processor.
//
//     PDFImportBenchmark FOLDER SCRATCH [--parallelism N]
//
// SCRATCH must not exist; it is made, filled and left for inspection. Prints the seconds taken.
import Foundation
import KioskEditions
import KioskFiles

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: PDFImportBenchmark FOLDER SCRATCH [--parallelism N]\n".utf8))
    exit(2)
}
var options = PDFImportOptions()
if let index = arguments.firstIndex(of: "--parallelism"), index + 1 < arguments.count, let n = Int(arguments[index + 1]) {
    options.parallelism = n
}
let started = Date()
do {
    let rendering = try await PDFIssueImporter.makeClassicFolder(from: arguments[1], in: arguments[2], options: options)
    print(String(format: "%d pages in %.3f s", rendering.pages, Date().timeIntervalSince(started)))
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
