// APNs sends per second and per CPU-second of the sending process, against the NIO APNs stand-in run as a
// second process of this same binary (`PushBenchmark serve`), so each side's CPU is measured on its own.
//
//   swift build --package-path Benchmarks -c release --product PushBenchmark
//   Benchmarks/.build/release/PushBenchmark [--devices 100000] [--connections 2] [--concurrency 1000] [--runs 3]
import Crypto
import Foundation
import KioskPush
import KioskPushStandIn
import NIOSSL
#if canImport(Glibc)
import Glibc
#endif

/// User plus system CPU seconds of this process so far.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

func option(_ name: String, _ fallback: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let value = Int(arguments[index + 1]) else {
        return fallback
    }
    return value
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

let topic = "com.example.kiosk"
let teamID = "TEAM123456"
let keyID = "KEY1234567"

/// The stand-in: reads the public key from DIR/key.pem, writes DIR/ca.pem, prints its port, serves until
/// stdin closes, then prints its counts and CPU seconds as one JSON line.
func serve(directory: URL) async throws {
    let pem = try String(contentsOf: directory.appendingPathComponent("key.pem"), encoding: .utf8)
    var configuration = APNsStandIn.Configuration(
        teamID: teamID, keyID: keyID, publicKey: try P256.Signing.PublicKey(pemRepresentation: pem), topics: [topic])
    configuration.record = false
    let standIn = try await APNsStandIn.start(configuration)
    try standIn.authority.caPEM.write(to: directory.appendingPathComponent("ca.pem"), atomically: true, encoding: .utf8)
    FileHandle.standardOutput.write(Data("\(standIn.port)\n".utf8))
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().async {
            _ = FileHandle.standardInput.readDataToEndOfFile()
            continuation.resume()
        }
    }
    let snapshot = standIn.snapshot()
    try await standIn.stop()
    let counts: [String: Any] = [
        "requests": snapshot.requests, "delivered": snapshot.delivered.count,
        "twice": snapshot.answered.values.filter { $0 > 1 }.count, "providerTokens": snapshot.providerTokens,
        "connections": snapshot.connections, "refusals": snapshot.refusals, "cpu": cpuSeconds(),
    ]
    FileHandle.standardOutput.write(try JSONSerialization.data(withJSONObject: counts, options: [.sortedKeys]) + Data("\n".utf8))
}

func token(_ n: Int) -> String {
    let hex = String(n, radix: 16)
    return String(repeating: "0", count: max(0, 64 - hex.count)) + hex
}

func measure() async throws {
    let devicesCount = option("--devices", 100_000)
    let connections = option("--connections", 2)
    let concurrency = option("--concurrency", 1000)
    let runs = option("--runs", 3)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("push-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let key = P256.Signing.PrivateKey()
    try key.publicKey.pemRepresentation.write(to: directory.appendingPathComponent("key.pem"), atomically: true, encoding: .utf8)

    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = ["serve", directory.path]
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    func readLine() -> String {
        var bytes: [UInt8] = []
        while let chunk = try? output.fileHandleForReading.read(upToCount: 1), let byte = chunk.first, byte != 10 {
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
    guard let port = Int(readLine()) else { fail("the stand-in did not start") }

    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(directory.appendingPathComponent("ca.pem").path))
    let tokens = try APNsTokens(key: APNsSigningKey(p8: key.pemRepresentation, keyID: keyID, teamID: teamID))
    let sender = try APNsSender(tokens: tokens, configuration: APNsConfiguration(
        environment: .sandbox, baseURL: "https://127.0.0.1:\(port)", connections: connections,
        maximumConcurrentSends: concurrency, tls: tls))
    let message = PushMessage.newIssue(
        edition: "1", date: "2025-06-02",
        alert: .init(title: "Nacional", body: "The issue of 2 June is out", imageURL: "https://kiosk.example/cover/1.jpg"))

    _ = try await sender.send(message, to: (0..<2_000).map { PushDevice(token: token($0 + 10_000_000), app: topic) })
    print("devices \(devicesCount), connections \(connections), concurrency \(concurrency), release build")
    print("run | wall s | sends/s | sender CPU s | sends per sender CPU-s | p50 ms | p99 ms | not sent")
    var rates: [Double] = []
    for run in 1...runs {
        let devices = (0..<devicesCount).map { PushDevice(token: token(run * 1_000_000 + $0), app: topic) }
        let cpuBefore = cpuSeconds()
        let start = ContinuousClock.now
        let results = try await sender.send(message, to: devices)
        let wall = ContinuousClock.now - start
        let cpu = cpuSeconds() - cpuBefore
        let seconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        let latencies = results.map { Double($0.latency.components.attoseconds) / 1e15 + Double($0.latency.components.seconds) * 1000 }.sorted()
        let notSent = results.filter { $0.outcome != .sent }.count
        let rate = Double(devicesCount) / seconds
        rates.append(rate)
        print(String(format: "%d | %.2f | %.0f | %.2f | %.0f | %.1f | %.1f | %d", run, seconds, rate, cpu, Double(devicesCount) / cpu,
                     latencies[latencies.count / 2], latencies[min(latencies.count - 1, latencies.count * 99 / 100)], notSent))
    }
    try await sender.shutdown()
    try input.fileHandleForWriting.close()
    let counts = readLine()
    process.waitUntilExit()
    print("stand-in: \(counts)")
    let best = rates.max() ?? 0
    print(String(format: "1 000 000 devices at the best rate: %.0f s", 1_000_000 / max(best, 1)))
}

if CommandLine.arguments.count >= 3 && CommandLine.arguments[1] == "serve" {
    try await serve(directory: URL(fileURLWithPath: CommandLine.arguments[2]))
} else {
    try await measure()
}
