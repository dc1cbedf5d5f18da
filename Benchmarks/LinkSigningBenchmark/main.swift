// Signs file links as `getEdicio` does: one answer carries 145 links (48 pages x pdf, jpg and jpgA, and
// the bundle), each made by SignedLinks.link(to:now:). Prints links/s and answers/s for both link
// formats, then the verification of the same links (what serving a file costs before the disk). Rates
// are per second of wall time and per second of this thread's CPU time (the second is steadier on a
// shared machine).
//
//     swift run --package-path Benchmarks -c release LinkSigningBenchmark [--seconds N] [--only "kiosk sign"]
//
// (or the static build of Benchmarks/release.sh); --only runs the measures whose name contains the text.
import Foundation
import KioskEditions

let seconds: Double = {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: "--seconds"), index + 1 < arguments.count else { return 3 }
    return Double(arguments[index + 1]) ?? 3
}()

let only: String? = {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: "--only"), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}()

let issue = "1/2025-06-30/r2"
let relativePaths: [String] = (1...48).flatMap { page in
    let number = String(format: "%03d", page)
    return ["\(issue)/pdf/\(number).pdf", "\(issue)/jpg/\(number).jpg", "\(issue)/jpgA/\(number).jpg"]
} + ["\(issue)/1-2025-06-30.zip"]
precondition(relativePaths.count == 145)

let secret = "bench-link-secret-0123456789abcdefghijklmnopq"
let now: Int64 = 1_751_284_800
/// Sum of the lengths of everything produced, printed at the end so no work is optimised away.
var checksum = 0

/// This thread's CPU time in seconds.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Runs `answer` (one answer's worth of links, given its index) for `seconds` after a short warm-up;
/// returns answers per second of wall time and per second of CPU time.
@MainActor func measure(_ answer: (Int) -> Int) -> (wall: Double, cpu: Double) {
    let clock = ContinuousClock()
    let warmUp = clock.now
    var index = 0
    while clock.now - warmUp < .milliseconds(300) { checksum &+= answer(index); index += 1 }
    let start = clock.now
    let cpuStart = threadCPUSeconds()
    var answers = 0
    var elapsed = Duration.zero
    repeat {
        for _ in 0..<16 { checksum &+= answer(index); index += 1; answers += 1 }
        elapsed = clock.now - start
    } while elapsed < .seconds(seconds)
    let cpu = threadCPUSeconds() - cpuStart
    let (whole, fraction) = elapsed.components
    return (Double(answers) / (Double(whole) + Double(fraction) / 1e18), Double(answers) / cpu)
}

@MainActor func report(_ name: String, answersPerSecond rate: (wall: Double, cpu: Double)) {
    let links = rate.wall * Double(relativePaths.count)
    let linksPerCPU = rate.cpu * Double(relativePaths.count)
    let label = name.padding(toLength: 14, withPad: " ", startingAt: 0)
    print(label + String(format: " %10.0f links/s %8.0f answers/s | per CPU-second: %10.0f links %8.0f answers, %6.0f ns/link",
                         links, rate.wall, linksPerCPU, rate.cpu, 1e9 / linksPerCPU))
}

print("links of one getEdicio answer: \(relativePaths.count); \(seconds) s per measure")
for format in LinkFormat.allCases {
    let links = SignedLinks(format: format, secret: secret, prefix: "/files", baseURL: "https://kiosk.example.cat",
                            lifetimeSeconds: 3600)
    // Each answer is signed at another second, as calls arrive.
    if only.map({ "\(format) sign".contains($0) }) ?? true {
        report("\(format) sign", answersPerSecond: measure { answer in
            var length = 0
            for path in relativePaths { length &+= links.link(to: path, now: now + Int64(answer)).utf8.count }
            return length
        })
    }
    let requests = relativePaths.map { path -> (String, String?) in
        let link = links.path(to: path, now: now)
        guard let mark = link.firstIndex(of: "?") else { return (link, nil) }
        return (String(link[..<mark]), String(link[link.index(after: mark)...]))
    }
    if only.map({ "\(format) verify".contains($0) }) ?? true {
        report("\(format) verify", answersPerSecond: measure { _ in
            var valid = 0
            for (path, query) in requests {
                if case .valid = links.verify(rawPath: path, query: query, now: now) { valid += 1 }
            }
            precondition(valid == requests.count)
            return valid
        })
    }
}
print("checksum \(checksum)")
