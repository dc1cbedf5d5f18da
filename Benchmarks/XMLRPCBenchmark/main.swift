// XML-RPC codec benchmark: a typical edition response and a typical getEdicio call, measured with the
// XMLRPC module and (in the same run) with Python's xmlrpc.client through Benchmarks/xmlrpc_codec_peer.py.
//
//   swift run --package-path Benchmarks -c release XMLRPCBenchmark [--seconds 3] [--no-python] [--python python3]

import NIOCore
import XMLRPC

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Options

var seconds = 3.0
var runPython = true
var pythonExecutable = "python3"
nonisolated(unsafe) var only: String?
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--seconds":
        guard let value = arguments.next().flatMap(Double.init), value > 0 else {
            print("--seconds needs a positive number"); exit(2)
        }
        seconds = value
    case "--no-python":
        runPython = false
    case "--python":
        guard let value = arguments.next() else { print("--python needs a path"); exit(2) }
        pythonExecutable = value
    case "--only":
        guard let value = arguments.next() else { print("--only needs a measure name prefix"); exit(2) }
        only = value
    case "-h", "--help":
        print("usage: XMLRPCBenchmark [--seconds N] [--no-python] [--python EXECUTABLE] [--only MEASURE-PREFIX]")
        exit(0)
    default:
        print("unknown argument \(argument)"); exit(2)
    }
}

// MARK: - Payloads

/// A typical edition answer: a struct of strings with 48 page structs holding ~110-character URLs.
func typicalResponse() -> XMLRPCValue {
    let base = "http://127.0.0.1:8080/files/3k2Jx9QpLr7TbW0sVn4MhY8cZe1uDa6F/65a3f1b2/editions/2/2025-06-30"
    let sections = ["Portada", "Política", "Societat", "Economia", "Esports", "Cultura", "Opinió", "Comarques"]
    var pages: [XMLRPCValue] = []
    pages.reserveCapacity(48)
    for index in 1...48 {
        let number = index < 10 ? "00\(index)" : "0\(index)"
        let section = (index - 1) / 6
        pages.append(.structure([
            XMLRPCMember("id", .string(String(90_000 + index))),
            XMLRPCMember("seccio_id", .string(String(section + 1))),
            XMLRPCMember("seccio", .string(sections[section])),
            XMLRPCMember("numero", .string(String(index))),
            XMLRPCMember("jpg", .string("\(base)/jpg/\(number).jpg")),
            XMLRPCMember("jpgA", .string("\(base)/jpgA/\(number).jpg")),
            XMLRPCMember("pdf", .string("\(base)/pdf/\(number).pdf")),
        ]))
    }
    return .structure([
        XMLRPCMember("id", "4711"),
        XMLRPCMember("titol", "Diari de Proves"),
        XMLRPCMember("edicio", "2"),
        XMLRPCMember("data", "2025-06-30"),
        XMLRPCMember("zip", .string("\(base)/zip/edicio.zip")),
        XMLRPCMember("zip_size", "48213377"),
        XMLRPCMember("zip_sha256", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
        XMLRPCMember("pagines", .array(pages)),
    ])
}

/// A typical request: epquiosc.getEdicio with six string parameters.
func typicalCall() -> XMLRPCCall {
    XMLRPCCall(methodName: "epquiosc.getEdicio", params: [
        "subscriber@example.cat", "0123456789abcdef0123456789abcdef", "2", "2025-06-30", "android", "2.3.1",
    ])
}

let response = typicalResponse()
let call = typicalCall()
let responseBytes = Array(buffer: try XMLRPCEncoder.encodeResponse(response))
let callBytes = Array(buffer: try XMLRPCEncoder.encodeCall(call))
let decodedResponse = try XMLRPCDecoder.decodeResponse(responseBytes).get()
let decodedCall = try XMLRPCDecoder.decodeCall(callBytes)
precondition(decodedResponse == response && decodedCall == call, "round trip failed")

// MARK: - Measuring

struct Measurement {
    var name: String
    var callsPerSecond: Double
    var megabytesPerSecond: Double
}

nonisolated(unsafe) var sink = 0

func measure(_ name: String, seconds: Double, bytesPerIteration: Int, _ body: () -> Int) -> Measurement? {
    if let only, !name.hasPrefix(only) { return nil }
    let clock = ContinuousClock()
    func run(for duration: Double) -> (iterations: Int, elapsed: Double) {
        let start = clock.now
        var iterations = 0
        var elapsed = 0.0
        repeat {
            for _ in 0..<16 { sink &+= body() }
            iterations += 16
            let components = (clock.now - start).components
            elapsed = Double(components.seconds) + Double(components.attoseconds) * 1e-18
        } while elapsed < duration
        return (iterations, elapsed)
    }
    _ = run(for: min(0.3, seconds / 5))  // warm-up
    let (iterations, elapsed) = run(for: seconds)
    let perSecond = Double(iterations) / elapsed
    return Measurement(name: name, callsPerSecond: perSecond,
                       megabytesPerSecond: perSecond * Double(bytesPerIteration) / 1e6)
}

print("XML-RPC codec benchmark: \(seconds) s per measure")
print("response \(responseBytes.count) bytes (48 pages), call \(callBytes.count) bytes; MB = 10^6 bytes")
print("libxml2 \(XMLRPCDecoder.libxml2Version)")

extension Array {
    mutating func appendIfPresent(_ element: Element?) {
        if let element { append(element) }
    }
}

var ours: [Measurement] = []
ours.appendIfPresent(measure("encode response", seconds: seconds, bytesPerIteration: responseBytes.count) {
    (try? XMLRPCEncoder.encodeResponse(response))?.readableBytes ?? 0
})
ours.appendIfPresent(measure("decode response", seconds: seconds, bytesPerIteration: responseBytes.count) {
    switch try? XMLRPCDecoder.decodeResponse(responseBytes) {
    case .success(let value)?: return value.structureValue?.count ?? 0
    default: return -1
    }
})
ours.appendIfPresent(measure("decode call + encode response", seconds: seconds, bytesPerIteration: callBytes.count + responseBytes.count) {
    guard let decoded = try? XMLRPCDecoder.decodeCall(callBytes) else { return -1 }
    return decoded.params.count &+ ((try? XMLRPCEncoder.encodeResponse(response))?.readableBytes ?? 0)
})

// MARK: - Python peer

func writeTemporary(_ bytes: [UInt8], suffix: String) -> String? {
    var template = Array("/tmp/xmlrpc-bench-XXXXXX\(suffix)".utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer {
        mkstemps($0.baseAddress!, Int32(suffix.utf8.count))
    }
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    guard written == bytes.count else { return nil }
    return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}

/// Runs a command and returns its standard output (nil if it could not start or failed).
func runCapturingOutput(_ command: [String]) -> String? {
    var pipeDescriptors: [Int32] = [0, 0]
    guard pipe(&pipeDescriptors) == 0 else { return nil }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, pipeDescriptors[1], 1)
    posix_spawn_file_actions_addclose(&actions, pipeDescriptors[0])
    var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid = pid_t()
    let status = posix_spawnp(&pid, command[0], &actions, nil, &argv, environ)
    close(pipeDescriptors[1])
    guard status == 0 else {
        close(pipeDescriptors[0])
        return nil
    }
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(pipeDescriptors[0], $0.baseAddress, $0.count) }
        if count <= 0 { break }
        output.append(contentsOf: buffer[0..<count])
    }
    close(pipeDescriptors[0])
    var exitStatus: Int32 = 0
    waitpid(pid, &exitStatus, 0)
    guard exitStatus == 0 else { return nil }
    return String(decoding: output, as: UTF8.self)
}

func peerScriptPath() -> String {
    // Benchmarks/XMLRPCBenchmark/main.swift -> Benchmarks/xmlrpc_codec_peer.py
    var path = "\(#filePath)"
    for _ in 0..<2 {
        if let slash = path.lastIndex(of: "/") { path = String(path[..<slash]) }
    }
    let candidate = path + "/xmlrpc_codec_peer.py"
    return access(candidate, R_OK) == 0 ? candidate : "Benchmarks/xmlrpc_codec_peer.py"
}

var theirs: [String: Measurement] = [:]
var pythonVersion = ""
if runPython {
    if let responseFile = writeTemporary(responseBytes, suffix: ".xml"),
       let callFile = writeTemporary(callBytes, suffix: ".xml")
    {
        defer { unlink(responseFile); unlink(callFile) }
        print("running \(pythonExecutable) \(peerScriptPath()) ...")
        let output = runCapturingOutput([pythonExecutable, peerScriptPath(), "--seconds", String(seconds),
                                         "--response", responseFile, "--call", callFile, "--machine"])
        if let output {
            // Lines: "RESULT<TAB>name<TAB>calls/s<TAB>MB/s" and "PYTHON<TAB>version".
            for line in output.split(separator: "\n") {
                let fields = line.split(separator: "\t").map(String.init)
                if fields.count == 4, fields[0] == "RESULT", let calls = Double(fields[2]), let mb = Double(fields[3]) {
                    theirs[fields[1]] = Measurement(name: fields[1], callsPerSecond: calls, megabytesPerSecond: mb)
                } else if fields.count == 2, fields[0] == "PYTHON" {
                    pythonVersion = fields[1]
                }
            }
        } else {
            print("(the Python peer did not run; use --no-python to skip it)")
        }
    }
}

// MARK: - Report

func pad(_ text: String, _ width: Int, right: Bool = true) -> String {
    let count = text.count
    guard count < width else { return text }
    let padding = String(repeating: " ", count: width - count)
    return right ? padding + text : text + padding
}

func format(_ value: Double, decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var text = decimals == 0 ? String(Int(rounded)) : String(rounded)
    if decimals > 0, let dot = text.firstIndex(of: ".") {
        let fraction = text.distance(from: dot, to: text.endIndex) - 1
        if fraction < decimals { text += String(repeating: "0", count: decimals - fraction) }
    }
    return text
}

print("")
if !pythonVersion.isEmpty { print("python: \(pythonVersion)") }
print(pad("measure", 32, right: false) + pad("swift calls/s", 15) + pad("swift MB/s", 12)
      + (theirs.isEmpty ? "" : pad("python calls/s", 16) + pad("python MB/s", 13) + pad("ratio", 9)))
for measurement in ours {
    var line = pad(measurement.name, 32, right: false)
        + pad(format(measurement.callsPerSecond, decimals: 0), 15)
        + pad(format(measurement.megabytesPerSecond, decimals: 1), 12)
    if let peer = theirs[measurement.name] {
        line += pad(format(peer.callsPerSecond, decimals: 0), 16)
            + pad(format(peer.megabytesPerSecond, decimals: 1), 13)
            + pad(format(measurement.callsPerSecond / peer.callsPerSecond, decimals: 1) + "x", 9)
    }
    print(line)
}
if sink == 42 { print("") }  // keeps the measured work observable
