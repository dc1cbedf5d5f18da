import NIOFoundationEssentialsCompat
import Foundation
import KioskTestSupport
import Hummingbird
import HummingbirdTesting
import KioskEditions
import KioskModels
import KioskSQLite
import KioskTestSupport
import Logging
import NIOCore
import Testing
@testable import KioskServer
@testable import KioskConfig
@testable import KioskHTTP
@testable import KioskFiles
@testable import KioskPasswords

/// File delivery and the publishers' endpoint on a plain router, over real HTTP.
@Suite struct FileDeliveryTests {
    static let secret = "delivery-test-secret-0123456789abcdef"
    static let day = IssueDate("2025-06-30")!
    static let now: Int64 = 1_751_284_800

    /// A store with one edition, an editions directory and one published issue.
    struct Fixture {
        let folder: URL
        let store: SQLiteKioskStore
        let directory: EditionsDirectory
        let publisher: IssuePublisher
        let source: String

        init() async throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-delivery-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            store = try SQLiteKioskStore(path: folder.path + "/kiosk.sqlite")
            try await store.syncCatalogue(Catalogue(
                publications: [Publication(id: 1, name: "El Punt Avui")],
                editions: [Edition(id: 1, publicationID: 1, name: "Nacional", createdOn: IssueDate("2010-03-01")!)],
                apps: [], tariffLines: []), dryRun: false)
            directory = try EditionsDirectory(path: folder.path + "/Editions")
            let store = self.store
            publisher = IssuePublisher(directory: directory, registry: store,
                                       bundleOptions: BundleOptions(sync: false),
                                       publicationName: { try await store.publicationName(id: $0) },
                                       logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
            source = try await IssueFolders.writeIssue(folder.path + "/in", pages: 3)
            _ = try await publisher.publish(editionID: 1, date: FileDeliveryTests.day, from: source)
        }

        func links(_ format: LinkFormat, lifetime: Int64 = 3600) -> SignedLinks {
            SignedLinks(format: format, secret: FileDeliveryTests.secret, prefix: "/files", baseURL: "", lifetimeSeconds: lifetime)
        }

        /// The delivery and publishing routes as the server adds them, on this fixture's parts; the
        /// publisher `editor` (password `pw`) may publish.
        func app(_ format: LinkFormat = .kiosk, clock: Int64 = FileDeliveryTests.now,
                 maxUpload: Int64 = 64 << 20) async throws -> some ApplicationProtocol {
            let router = Router(context: KioskRequestContext.self)
            var delivery = FileDelivery(directory: directory, links: links(format))
            delivery.clock = TestClock(clock)
            delivery.chunkSize = 16 << 10
            let fixed = delivery
            FileDeliveryController(prefix: "/files") { _ in fixed }.addRoutes(to: router.group())
            let endpoint = PublishEndpoint(publisher: publisher, maxUploadBytes: maxUpload,
                                           logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
            let editors = BasicAuthenticator(accounts: [.init(username: "editor", passwordHash: try await PasswordHashing().hash("pw", cost: 4))])
            PublishController(endpoint: { _ in endpoint }, scopes: { _ in nil }).addRoutes(to: router.group().add(middleware: BasicAuthenticationMiddleware(
                realm: "kiosk publishers", message: "Publisher credentials are required (HTTP Basic).",
                accounts: { _ in editors }, drainLimit: { _ in 8 << 20 })))
            return Application(router: router, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        }

        func bytes(_ relative: String) -> [UInt8] { Array(FileManager.default.contents(atPath: directory.absolute(relative))!) }
    }

    static func body(_ response: TestResponse) -> [UInt8] { Array(buffer: response.body) }

    @Test func getHeadRangesAndValidators() async throws {
        let fixture = try await Fixture()
        let path = "1/2025-06-30/r1/1-2025-06-30.zip"
        let file = fixture.bytes(path)
        let url = fixture.links(.kiosk).path(to: path, now: Self.now)
        try await fixture.app().test(.live) { client in
            let full = try await client.execute(uri: url, method: .get)
            #expect(full.status == .ok)
            #expect(Self.body(full) == file)
            #expect(full.headers[.contentType] == "application/zip")
            #expect(full.headers[.contentLength] == String(file.count))
            #expect(full.headers[.acceptRanges] == "bytes")
            let etag = try #require(full.headers[.eTag])
            #expect(etag.hasPrefix("\""))

            let head = try await client.execute(uri: url, method: .head)
            #expect(head.status == .ok)
            #expect(head.headers[.contentLength] == String(file.count))
            #expect(head.body.readableBytes == 0)

            let first = try await client.execute(uri: url, method: .get, headers: [.range: "bytes=0-99"])
            #expect(first.status == .partialContent)
            #expect(first.headers[.contentRange] == "bytes 0-99/\(file.count)")
            #expect(first.headers[.contentLength] == "100")
            #expect(Self.body(first) == Array(file[0..<100]))
            // A resumed download: the rest, conditional on the same representation.
            let rest = try await client.execute(uri: url, method: .get, headers: [.range: "bytes=100-", .ifRange: etag])
            #expect(rest.status == .partialContent)
            #expect(Self.body(first) + Self.body(rest) == file)
            let suffix = try await client.execute(uri: url, method: .get, headers: [.range: "bytes=-10"])
            #expect(Self.body(suffix) == Array(file.suffix(10)))
            #expect(suffix.headers[.contentRange] == "bytes \(file.count - 10)-\(file.count - 1)/\(file.count)")
            let past = try await client.execute(uri: url, method: .get, headers: [.range: "bytes=\(file.count)-"])
            #expect(past.status == .rangeNotSatisfiable)
            #expect(past.headers[.contentRange] == "bytes */\(file.count)")
            // Changed representation (If-Range mismatch), several ranges, junk: the whole file.
            for headers: HTTPFields in [[.range: "bytes=0-9", .ifRange: "\"other\""], [.range: "bytes=0-9,20-29"], [.range: "lines=1-2"]] {
                let response = try await client.execute(uri: url, method: .get, headers: headers)
                #expect(response.status == .ok)
                #expect(Self.body(response).count == file.count)
            }
            let cached = try await client.execute(uri: url, method: .get, headers: [.ifNoneMatch: etag])
            #expect(cached.status == .notModified)
            #expect(cached.body.readableBytes == 0)
            let stale = try await client.execute(uri: url, method: .get, headers: [.ifNoneMatch: "\"nope\""])
            #expect(stale.status == .ok)
        }
    }

    @Test(arguments: [LinkFormat.kiosk, .nginx])
    func badExpiredAndEscapingLinks(format: LinkFormat) async throws {
        let fixture = try await Fixture()
        let links = fixture.links(format, lifetime: 60)
        let good = links.path(to: "1/2025-06-30/r1/pdf/001.pdf", now: Self.now)
        let old = links.path(to: "1/2025-06-30/r1/pdf/001.pdf", now: Self.now - 7200)
        let secretFile = fixture.folder.path + "/kiosk.sqlite"
        try await fixture.app(format).test(.live) { client in
            #expect(try await client.execute(uri: good, method: .get).status == .ok)
            #expect(try await client.execute(uri: good.replacingOccurrences(of: "001.pdf", with: "002.pdf"), method: .get).status == .forbidden)
            #expect(try await client.execute(uri: old, method: .get).status == .gone)
            // Links signed for paths outside the editions directory, however spelled, never serve.
            for evil in ["../kiosk.sqlite", "1/../../kiosk.sqlite", "%2e%2e/kiosk.sqlite", "%252e%252e/kiosk.sqlite",
                         ".staging/x", "1/2025-06-30/r1/pdf/001.pdf%00.jpg", secretFile, "..%2fkiosk.sqlite"] {
                let signed = links.path(to: evil, now: Self.now)
                let status = try await client.execute(uri: signed, method: .get).status
                #expect(status == .forbidden || status == .notFound, "\(evil): \(status)")
            }
            // Valid link, file not there.
            #expect(try await client.execute(uri: links.path(to: "1/2025-06-30/r9/pdf/001.pdf", now: Self.now), method: .get).status == .notFound)
        }
    }

    @Test func publishAndWithdrawOverHTTP() async throws {
        let fixture = try await Fixture()
        let issue = try await IssueFolders.writeIssue(fixture.folder.path + "/upload", pages: 4, seed: 9)
        let zip = fixture.folder.path + "/upload.zip"
        #expect(try await ChildProcess.run("/usr/bin/zip", ["-q", "-r", zip, "."], directory: issue).status == 0)
        let body = ByteBuffer(bytes: Array(FileManager.default.contents(atPath: zip)!))
        let auth: HTTPFields = [.authorization: "Basic " + Data("editor:pw".utf8).base64EncodedString()]
        try await fixture.app(maxUpload: 1 << 20).test(.live) { live in
            // Publishing unpacks, fsyncs and builds a bundle: on a machine starved by the parallel suites one
            // request can go past the live client's 20 s without a byte, so this client waits up to 2 min.
            try await TestClient.withClient(host: "127.0.0.1", port: live.port!, configuration: .init(timeout: .seconds(120))) { client in
                let anonymous = try await client.execute(uri: "/publish/1/2025-06-30", method: .put, body: body)
                #expect(anonymous.status == .unauthorized)
                #expect(anonymous.headers[.wwwAuthenticate]?.hasPrefix("Basic") == true)
                let badDate = try await client.execute(uri: "/publish/1/2025-02-30", method: .put, headers: auth, body: body)
                #expect(badDate.status == .badRequest)

                let published = try await client.execute(uri: "/publish/1/2025-06-30", method: .put, headers: auth, body: body)
                #expect(published.status == .created, "\(String(buffer: published.body))")
                let summary = try JSONSerialization.jsonObject(with: Data(buffer: published.body)) as? [String: Any]
                #expect(summary?["revision"] as? Int == 2 && summary?["replaced_revision"] as? Int == 1 && summary?["pages"] as? Int == 4,
                        "\(String(buffer: published.body))")
                let contents = try #require(try await fixture.store.issueContents(editionID: 1, date: Self.day))
                #expect(contents.pages.count == 4)
                #expect(fixture.bytes(contents.pages[3].files.jpgA) == Array(FileManager.default.contents(atPath: issue + "/jpgA/004.jpg")!))

                let notAnArchive = try await client.execute(uri: "/publish/1/2025-06-30", method: .put, headers: auth,
                                                            body: ByteBuffer(string: "hello"))
                #expect(notAnArchive.status == .badRequest)
                #expect(String(buffer: notAnArchive.body).contains("neither a ZIP nor a tar"))
                let large = try await client.execute(uri: "/publish/1/2025-06-30", method: .put, headers: auth,
                                                     body: ByteBuffer(bytes: [UInt8](repeating: 0, count: 2 << 20)))
                #expect(large.status == .contentTooLarge)

                // Refused content: a page that is not a JPEG, with its name and page in the answer.
                try Data(Array("%PDF-1.4 not an image".utf8) + [UInt8](repeating: 32, count: 200))
                    .write(to: URL(fileURLWithPath: issue + "/jpgA/002.jpg"))
                let badZip = fixture.folder.path + "/bad.zip"
                #expect(try await ChildProcess.run("/usr/bin/zip", ["-q", "-r", badZip, "."], directory: issue).status == 0)
                let refused = try await client.execute(uri: "/publish/1/2025-06-30", method: .put, headers: auth,
                                                       body: ByteBuffer(bytes: Array(FileManager.default.contents(atPath: badZip)!)))
                #expect(refused.status == .unprocessableContent)
                #expect(String(buffer: refused.body).contains("jpgA/002.jpg (page 2): is not a JPEG"))
                #expect(try await fixture.store.issueContents(editionID: 1, date: Self.day)?.revision == 2)

                let withdrawn = try await client.execute(uri: "/publish/1/2025-06-30", method: .delete, headers: auth)
                #expect(withdrawn.status == .ok)
                #expect(try await fixture.store.issueContents(editionID: 1, date: Self.day) == nil)
                #expect(try await client.execute(uri: "/publish/1/2025-06-30", method: .delete, headers: auth).status == .notFound)
            }
        }
        // Nothing left in staging.
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.directory.stagingRoot).isEmpty)
    }

    /// Uploads crafted to overflow the readers' numbers (KioskEditionsTests' `HostileArchiveTests` has
    /// every variant): each is a 400 naming the problem, not a crash of the server or an empty 500, and
    /// nothing is published.
    @Test func hostileArchivesAreRefusedWith400() async throws {
        typealias A = CraftedArchives
        let fixture = try await Fixture()
        let auth: HTTPFields = [.authorization: "Basic " + Data("editor:pw".utf8).base64EncodedString()]
        let eocdAlone = A.le32(0x0605_4B50) + A.le16(0) + A.le16(0) + A.le16(0xFFFF) + A.le16(0xFFFF) + A.le32(0) + A.le32(0) + A.le16(0)
        let data = Array("{}".utf8)
        let uploads: [(String, [UInt8], String)] = [
            ("ZIP64 entry count 2^64 - 1", A.zip64Claiming(), "it claims 18446744073709551615 entries"),
            ("end record at byte 0 asking for ZIP64", eocdAlone, "no ZIP64 end of central directory locator"),
            ("ZIP64 extra field past the directory", A.zip("issue.json", data) {
                A.zipCentral("issue.json", crc: $0, compressedSize: 2, size: 0xFFFF_FFFF, localOffset: 0,
                             extra: A.zip64Extra([], declaredLength: 0xFFF0))
            }, "has a damaged extra field"),
            ("ZIP64 local header offset past Int64.max", A.zip("issue.json", data) {
                A.zipCentral("issue.json", crc: $0, compressedSize: 2, size: 2, localOffset: 0xFFFF_FFFF,
                             extra: A.zip64Extra([0xFFFF_FFFF_FFFF_FFF0]))
            }, "larger than any file can be"),
            ("tar base-256 size Int64.max", A.tarHeader("issue.json", sizeField: A.base256(UInt64(Int64.max))) + A.tarEnd,
             "has a size larger than any file can be"),
            ("tar.gz with a wrong CRC-32", A.gzipMember(A.minimalTar, breakTrailer: true), "incorrect data check"),
        ]
        let date = "2025-07-01"
        try await fixture.app(maxUpload: 1 << 20).test(.live) { client in
            for (name, bytes, expected) in uploads {
                let answer = try await client.execute(uri: "/publish/1/\(date)", method: .put, headers: auth, body: ByteBuffer(bytes: bytes))
                let text = String(buffer: answer.body)
                #expect(answer.status == .badRequest, "\(name): \(answer.status) \(text)")
                #expect(text.contains(expected), "\(name): \(text)")
            }
            // The server is still there and publishes a good upload.
            let good = try await client.execute(uri: "/publish/1/\(date)", method: .put, headers: auth, body: ByteBuffer(bytes: A.minimalTar))
            #expect(good.status == .unprocessableContent, "\(String(buffer: good.body))")   // "{}" has no pages
        }
        #expect(try await fixture.store.issueContents(editionID: 1, date: IssueDate(date)!) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.directory.stagingRoot).isEmpty)
    }

    /// A stock nginx, configured with `secure_link` and the same secret, serves a link Kiosk signed and
    /// refuses a tampered one.
    @Test func nginxServesKioskSignedLinks() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"), "nginx is needed: apt-get install nginx")
        let fixture = try await Fixture()
        let port = Int.random(in: 20_000...40_000)
        let prefix = fixture.folder.path + "/nginx"
        try FileManager.default.createDirectory(atPath: prefix, withIntermediateDirectories: true)
        let conf = """
            daemon off; master_process off; worker_processes 1;
            error_log \(prefix)/error.log; pid \(prefix)/nginx.pid;
            events { worker_connections 64; }
            http {
              access_log off;
              client_body_temp_path \(prefix)/body; proxy_temp_path \(prefix)/proxy; fastcgi_temp_path \(prefix)/fastcgi;
              uwsgi_temp_path \(prefix)/uwsgi; scgi_temp_path \(prefix)/scgi;
              server {
                listen 127.0.0.1:\(port);
                location /files/ {
                  secure_link $arg_md5,$arg_expires;
                  secure_link_md5 "$secure_link_expires$uri \(Self.secret)";
                  if ($secure_link = "") { return 403; }
                  if ($secure_link = "0") { return 410; }
                  alias \(fixture.directory.root)/;
                }
              }
            }
            """
        try conf.write(toFile: prefix + "/nginx.conf", atomically: true, encoding: .utf8)
        let nginx = try ChildProcess("/usr/sbin/nginx", ["-p", prefix, "-c", prefix + "/nginx.conf"], errors: .inherit)
        defer { nginx.signal(SIGKILL); nginx.waitUntilExit() }
        let links = fixture.links(.nginx)
        let path = "1/2025-06-30/r1/1-2025-06-30.zip"
        let now = Int64(Date().timeIntervalSince1970)
        func fetch(_ url: String) async throws -> (Int, Int) {
            let curl = try await ChildProcess.run("/usr/bin/curl", ["-s", "-o", prefix + "/download", "-w", "%{http_code}", "--retry", "5",
                                                                    "--retry-connrefused", "--retry-delay", "1", "http://127.0.0.1:\(port)" + url])
            return (Int(curl.output) ?? 0, (try? FileManager.default.attributesOfItem(atPath: prefix + "/download")[.size] as? Int) ?? -1)
        }
        let signed = links.path(to: path, now: now)
        let (ok, size) = try await fetch(signed)
        #expect(ok == 200)
        #expect(size == fixture.bytes(path).count)
        #expect(Array(FileManager.default.contents(atPath: prefix + "/download") ?? Data()) == fixture.bytes(path))
        let token = try #require(signed.range(of: "md5=")).upperBound
        let flipped = signed[..<token] + (signed[token] == "A" ? "B" : "A") + signed[signed.index(after: token)...]
        #expect(try await fetch(String(flipped)).0 == 403)
        #expect(try await fetch(signed.replacingOccurrences(of: ".zip", with: ".zap")).0 == 403)
        #expect(try await fetch(links.path(to: path, now: now - 7200)).0 == 410)
        // A link whose expiry is rounded up to a 300 s bucket: nginx serves it like any other.
        let bucketed = SignedLinks(format: .nginx, secret: Self.secret, prefix: "/files", baseURL: "",
                                   lifetimeSeconds: 3600, expiryBucketSeconds: 300)
        let rounded = bucketed.path(to: path, now: now)
        let expires = try #require(Int64(rounded.split(separator: "=").last ?? ""))
        #expect(expires % 300 == 0 && expires >= now + 3600 && expires < now + 3900)
        #expect(try await fetch(rounded) == (200, fixture.bytes(path).count))
        #expect(try await fetch(bucketed.path(to: path, now: now - 7200)).0 == 410)
    }
}

extension TestClient {
    /// What the tests read of a response.
    struct Answer {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: ByteBuffer
    }

    /// One request on this client, as the live test client sends it (keep-alive).
    func execute(uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil) async throws -> Answer {
        var headers = headers
        headers[.connection] = "keep-alive"
        let response = try await execute(TestClient.Request(uri, method: method, authority: "localhost", headers: headers, body: body))
        return Answer(status: response.head.status, headers: response.head.headerFields, body: response.body ?? ByteBuffer())
    }
}
