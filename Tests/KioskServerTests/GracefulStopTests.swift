import Foundation
import KioskTestSupport
import KioskWiring
import Testing

/// A graceful stop (SIGTERM) of the real binary is bounded: a request still unfinished after
/// `ServeComposition.gracefulShutdownLimit`, here an anonymous store notification whose body comes a byte a second and never ends, is cut, and
/// the process exits 0 within systemd's `TimeoutStopSec` (30 s) instead of being killed there.
@Suite struct GracefulStopTests {
    @Test func aBodyThatNeverEndsIsCutAtTheLimitAndTheServerStops() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try writeTestConfiguration(in: directory)
        let server = try await ServerProcess(["--config", config], environment: ["KIOSK_SECRET": String(repeating: "e", count: 40)])
        let limit = Double(ServeComposition.gracefulShutdownLimit.components.seconds)
        let output = try await runClient("python3", ["-c", """
            import json, os, signal, socket, time
            s = socket.create_connection(("127.0.0.1", \(server.port)), timeout=5)
            s.sendall(b"POST /store/apple/quiosc HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\nContent-Length: 20000\\r\\n\\r\\n<")
            time.sleep(0.5)
            os.kill(\(server.pid), signal.SIGTERM)
            start, cut = time.time(), None
            while time.time() - start < 40:   # a byte a second: the idle timeout never fires
                try:
                    s.sendall(b" ")
                except OSError:
                    cut = time.time() - start
                    break
                time.sleep(1)
            print(json.dumps({"cut": cut}))
            """])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
        let cut = try #require(report["cut"] as? Double, "the connection was never cut: \(report)")
        // Not before the limit (requests in flight get their time), and well before systemd's 30 s.
        #expect(cut >= limit - 1 && cut < 28, "cut after \(cut) s")
        #expect(try await server.waitForExit(timeout: .seconds(10)) == 0, "\(server.log.suffix(2000))")
    }
}
