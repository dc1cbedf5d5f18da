import KioskTestSupport
import Foundation
@testable import KioskEditions
import KioskModels
import KioskSQLite
import KioskStoreSupport
import Testing
@testable import KioskFiles

@Suite struct BundleTests {
    let day = TestEnvironment.day

    /// Writes `files` (name -> bytes) under a folder and builds a bundle of them in that order.
    func build(_ files: [(String, [UInt8])], options: BundleOptions) async throws -> (zip: String, folder: String, built: BuiltBundle, temp: TemporaryFolder) {
        let temp = TemporaryFolder()
        let folder = temp.sub("src")
        var entries: [ZipEntry] = []
        for (name, bytes) in files {
            let path = folder + "/" + name
            try FileManager.default.createDirectory(atPath: FS.parentPath(path), withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            entries.append(ZipEntry(name: name, source: path, alwaysStore: name.hasSuffix(".jpg")))
        }
        let zip = temp.path + "/out.zip"
        let header = BundleManifest.Header(editionID: 1, publicationName: "El Punt Avui", editionName: "Nacional", date: day, revision: 1)
        let manifest = BundleManifest.xml(header: header, pages: (1...20).map { BundleManifest.Page(number: $0, section: Section(id: 1, name: "Portada")) })
        let built = try await BundleBuilder.build(manifest: manifest, entries: entries, date: day, to: zip, options: options)
        return (zip, folder, built, temp)
    }

    func acceptedByUnzipAndPython(_ zip: String, folder: String) async throws -> [String: Int] {
        let test = try await run(["unzip", "-t", zip])
        #expect(test.status == 0, "unzip -t: \(test.output) \(test.error)")
        #expect(test.output.contains("No errors detected"))
        return try await pythonCheck(zip: zip, against: folder)
    }

    @Test func deflatesOnlyWhereItPays() async throws {
        var noise = Noise(seed: 7)
        let textPDF = Fixtures.pdf(text: 50_000)
        let imagePDF = Fixtures.pdf(text: 200, binary: 80_000)
        // Random first block, compressible rest: read whole, so the whole entry decides (deflated).
        let randomHead = Array("%PDF-1.4\n".utf8) + noise.bytes(70_000) + Array(Fixtures.pdf(text: 200_000).dropFirst(9))
        let files: [(String, [UInt8])] = [
            ("pdf/001.pdf", textPDF), ("pdf/002.pdf", imagePDF), ("pdf/003.pdf", randomHead),
            ("jpg/001.jpg", Fixtures.jpeg(body: 30_000, compressible: true)), ("jpgA/001.jpg", Fixtures.jpeg(body: 30_000)),
            ("empty.bin", []),
            // Larger than the output buffer, smaller than the in-memory limit: written around the buffer.
            ("jpgA/002.jpg", Fixtures.jpeg(body: 300_000, seed: 3)), ("pdf/004.pdf", Fixtures.pdf(text: 200, binary: 200_000)),
            ("pdf/005.pdf", Fixtures.pdf(text: 900_000)),
        ]
        let result = try await build(files, options: BundleOptions(sync: false))
        let methods = try await acceptedByUnzipAndPython(result.zip, folder: result.folder)
        #expect(methods == ["edicio.xml": 8, "pdf/001.pdf": 8, "pdf/002.pdf": 0, "pdf/003.pdf": 8,
                            "jpg/001.jpg": 0, "jpgA/001.jpg": 0, "empty.bin": 0,
                            "jpgA/002.jpg": 0, "pdf/004.pdf": 0, "pdf/005.pdf": 8])
        #expect(result.built.deflatedEntries == 4)
        #expect(result.built.storedEntries == 6)
        #expect(result.built.size == Int64(readFile(result.zip).count))
        #expect(try await run(["sha256sum", result.zip]).output.hasPrefix(result.built.sha256 + " "))
        // No data descriptors for entries read whole: local headers carry the real sizes.
        #expect(readFile(result.zip).occurrences(of: [0x50, 0x4B, 0x07, 0x08]) == 0)
    }

    @Test func streamsLargeEntriesWithDataDescriptors() async throws {
        var noise = Noise(seed: 9)
        let files: [(String, [UInt8])] = [
            ("pdf/001.pdf", Fixtures.pdf(text: 600_000)),                       // deflated, streamed
            ("pdf/002.pdf", Fixtures.pdf(text: 100, binary: 300_000)),          // stored, streamed
            ("jpgA/001.jpg", Fixtures.jpeg(body: 250_000)),                     // stored, streamed
            ("jpg/001.jpg", Array(noise.bytes(10))),                            // small, buffered
        ]
        let options = BundleOptions(probeBytes: 16 << 10, bufferLimit: 64 << 10, sync: false)
        let result = try await build(files, options: options)
        let methods = try await acceptedByUnzipAndPython(result.zip, folder: result.folder)
        #expect(methods["pdf/001.pdf"] == 8)
        #expect(methods["pdf/002.pdf"] == 0)
        #expect(methods["jpgA/001.jpg"] == 0)
        #expect(readFile(result.zip).occurrences(of: [0x50, 0x4B, 0x07, 0x08]) == 3)
        // Our own reader (used for uploads) agrees.
        let out = TemporaryFolder()
        _ = try? ArchiveExtractor.extract(archive: result.zip, into: out.path)
        for (name, bytes) in files { #expect(readFile(out.path + "/" + name) == bytes, "\(name)") }
    }

    /// Entries read whole are deflated by libdeflate, larger ones streamed through zlib, in one bundle:
    /// every entry reads back byte for byte with Python's `zipfile` and with `unzip -p`, and what is
    /// deflated saves at least `minimumSaving`.
    @Test func libdeflateAndStreamedZlibEntriesReadBackExactly() async throws {
        var noise = Noise(seed: 11)
        let limit = 64 << 10
        let files: [(String, [UInt8])] = [
            ("pdf/001.pdf", Fixtures.pdf(text: 40_000)),                        // whole, deflated
            ("pdf/002.pdf", Fixtures.pdf(text: 300, binary: 40_000, seed: 5)),  // whole, saves < 5 %: stored
            ("pdf/003.pdf", noise.bytes(50_000)),                               // whole, random: stored
            ("pdf/004.pdf", [UInt8](repeating: 0, count: limit)),               // whole, exactly the limit
            ("pdf/005.pdf", Array("%PDF".utf8)),                                // whole, too short to pay
            ("pdf/006.pdf", Fixtures.pdf(text: 300_000)),                       // over the limit: zlib, deflated
            // Over the limit, random first block, compressible rest: the streamed probe decides (stored).
            ("pdf/007.pdf", Array("%PDF-1.4\n".utf8) + noise.bytes(20_000) + Fixtures.pdf(text: 100_000)),
            ("jpgA/001.jpg", Fixtures.jpeg(body: 100_000, compressible: true)), // over the limit, JPEG: stored
            ("jpg/001.jpg", Fixtures.jpeg(body: 5_000)),                        // whole, JPEG: stored
        ]
        let options = BundleOptions(probeBytes: 16 << 10, bufferLimit: limit, sync: false)
        let result = try await build(files, options: options)
        let methods = try await acceptedByUnzipAndPython(result.zip, folder: result.folder)
        #expect(methods == ["edicio.xml": 8, "pdf/001.pdf": 8, "pdf/002.pdf": 0, "pdf/003.pdf": 0, "pdf/004.pdf": 8,
                            "pdf/005.pdf": 0, "pdf/006.pdf": 8, "pdf/007.pdf": 0, "jpgA/001.jpg": 0, "jpg/001.jpg": 0])
        #expect(readFile(result.zip).occurrences(of: [0x50, 0x4B, 0x07, 0x08]) == 3, "data descriptors of the streamed")
        let extracted = TemporaryFolder()
        for (name, bytes) in files {
            let copy = extracted.path + "/" + name.replacingOccurrences(of: "/", with: "-")
            let unzip = try await run(["sh", "-c", "unzip -p \"$0\" \"$1\" > \"$2\"", result.zip, name, copy])
            #expect(unzip.status == 0, "\(unzip.error)")
            #expect(readFile(copy) == bytes, "unzip -p \(name)")
        }
        let savings = try await run(["python3", "-c", """
            import sys, zipfile
            for i in zipfile.ZipFile(sys.argv[1]).infolist():
                if i.compress_type == 8 and i.compress_size > i.file_size * 0.95:
                    print(i.filename, i.file_size, i.compress_size)
            """, result.zip])
        #expect(savings.status == 0 && savings.output.isEmpty, "deflated without paying: \(savings.output) \(savings.error)")
    }

    /// The compressed-size cap follows `pays`, and odd `minimumSaving` values neither overflow it nor
    /// lose bytes: negative ones deflate even what grows, NaN stores everything.
    @Test func oddMinimumSavingsAreClamped() async throws {
        func capacity(_ original: Int, _ saving: Double, limit: Int = 10_000) -> Int {
            ZipOptions(minimumSaving: saving).payingCapacity(original, limit: limit)
        }
        #expect(capacity(1_000, 0.05) == 950)
        #expect(capacity(999, 0.05) == 949)                 // 949.05: a size of 950 would not pay
        #expect(ZipOptions().pays(999, 949) && !ZipOptions().pays(999, 950))
        #expect(capacity(1_000, 0) == 1_000)
        #expect(capacity(1_000, 1) == 0 && capacity(1_000, 2) == 0)
        #expect(capacity(1_000, -0.5) == 1_500)
        #expect(capacity(1_000, -100, limit: 1_200) == 1_200)
        #expect(capacity(Int.max, -.infinity, limit: 1_200) == 1_200)
        #expect(capacity(1_000, .nan) == 0 && capacity(1_000, .infinity) == 0 && capacity(1_000, -.infinity) == 10_000)
        var noise = Noise(seed: 13)
        let files: [(String, [UInt8])] = [
            ("pdf/001.pdf", noise.bytes(30_000)), ("pdf/002.pdf", Fixtures.pdf(text: 20_000)),
            ("pdf/003.pdf", noise.bytes(100_000)),      // streamed
        ]
        for saving in [-1.0, -Double.infinity, Double.nan] {
            let result = try await build(files, options: BundleOptions(minimumSaving: saving, bufferLimit: 64 << 10, sync: false))
            let methods = try await acceptedByUnzipAndPython(result.zip, folder: result.folder)
            let expected = saving.isNaN ? 0 : 8
            #expect(methods == ["edicio.xml": expected, "pdf/001.pdf": expected, "pdf/002.pdf": expected, "pdf/003.pdf": expected],
                    "minimumSaving \(saving)")
        }
    }

    /// A value a ZIP field cannot hold is refused with an error, never written cut short: a name over
    /// 65535 bytes, a size of 4 GiB or more without ZIP64, a negative count for zlib. Out-of-range date
    /// parts are kept to their bits.
    @Test func zipFieldsRefuseWhatTheyCannotHold() throws {
        let dos = (date: UInt16(0), time: UInt16(0))
        let long = [UInt8](repeating: UInt8(ascii: "a"), count: 65_536)
        #expect(throws: ZipError.self) {
            try ZipFormat.localHeader(name: long, flags: 0, method: 0, dos: dos, crc: 0, compressedSize: 0, size: 0, zip64: false)
        }
        let record = CentralRecord(name: long, method: 0, flags: 0, crc: 0, compressedSize: 0, size: 0, localHeaderOffset: 0)
        #expect(throws: ZipError.self) { try ZipFormat.centralHeader(record, dos: dos, forceZIP64: false) }
        let name = Array("pdf/001.pdf".utf8)
        #expect(throws: ZipError.self) {
            try ZipFormat.localHeader(name: name, flags: 0, method: 0, dos: dos, crc: 0, compressedSize: 1 << 32, size: 1 << 32, zip64: false)
        }
        #expect(throws: ZipError.self) { try ZipFormat.dataDescriptor(name: "pdf/001.pdf", crc: 0, compressedSize: 1 << 32, size: 0, zip64: false) }
        let header = try ZipFormat.localHeader(name: name, flags: 0, method: 0, dos: dos, crc: 0, compressedSize: 1 << 32,
                                               size: 1 << 32, zip64: true)
        #expect(header.count == 30 + name.count + 20 && header[18..<26].allSatisfy { $0 == 0xFF })
        #expect(try ZipFormat.dataDescriptor(name: "pdf/001.pdf", crc: 0, compressedSize: 5, size: 7, zip64: false).count == 16)
        #expect(throws: ZipError.self) { try Deflater(level: 1).bound(-1) }
        #expect(ZipFormat.dosDateTime(year: 2024, month: 3, day: 15).date == 44 << 9 | 3 << 5 | 15)
        #expect(ZipFormat.dosDateTime(year: 2024, month: 13, day: 40) == ZipFormat.dosDateTime(year: 2024, month: 12, day: 31))
        #expect(ZipFormat.dosDateTime(year: 1900, month: 0, day: 0).date == 0 << 9 | 1 << 5 | 1)
    }

    @Test func forcedZIP64IsAcceptedByUnzipAndPython() async throws {
        for bufferLimit in [4 << 20, 64 << 10] {    // buffered entries, then streamed ones
            let files: [(String, [UInt8])] = [
                ("pdf/001.pdf", Fixtures.pdf(text: 200_000)), ("pdf/002.pdf", Fixtures.pdf(text: 100, binary: 100_000)),
                ("jpg/001.jpg", Fixtures.jpeg(body: 100_000)),
            ]
            let result = try await build(files, options: BundleOptions(bufferLimit: bufferLimit, forceZIP64: true, sync: false))
            let bytes = readFile(result.zip)
            #expect(bytes.occurrences(of: [0x50, 0x4B, 0x06, 0x06]) == 1, "ZIP64 end record")
            #expect(bytes.occurrences(of: [0x50, 0x4B, 0x06, 0x07]) == 1, "ZIP64 locator")
            let methods = try await acceptedByUnzipAndPython(result.zip, folder: result.folder)
            #expect(methods.count == 4)
            let zip64 = try await run(["python3", "-c", """
                import sys, zipfile
                z = zipfile.ZipFile(sys.argv[1])
                print(all(i.extra[:2] == b'\\x01\\x00' for i in z.infolist()))
                """, result.zip])
            #expect(zip64.output.trimmingCharacters(in: .whitespacesAndNewlines) == "True", "\(zip64.error)")
            let out = TemporaryFolder()
            _ = try? ArchiveExtractor.extract(archive: result.zip, into: out.path)
            for (name, bytes) in files { #expect(readFile(out.path + "/" + name) == bytes, "\(name)") }
        }
    }

    @Test func moreThan65535EntriesGetZIP64EndRecords() async throws {
        let temp = TemporaryFolder()
        let source = temp.path + "/page.jpg"
        try Data(Fixtures.jpeg(body: 10)).write(to: URL(fileURLWithPath: source))
        let entries = (1...65_536).map { ZipEntry(name: String(format: "jpg/%05d.jpg", $0), source: source, alwaysStore: true) }
        let zip = temp.path + "/many.zip"
        let built = try await BundleBuilder.build(manifest: Array("<edicio/>".utf8), entries: entries, date: day, to: zip,
                                            options: BundleOptions(sync: false))
        #expect(built.storedEntries == 65_537 && built.deflatedEntries == 0)
        let bytes = readFile(zip)
        #expect(bytes.occurrences(of: [0x50, 0x4B, 0x06, 0x06]) == 1, "ZIP64 end record")
        #expect(bytes.occurrences(of: [0x50, 0x4B, 0x06, 0x07]) == 1, "ZIP64 locator")
        #expect(try await run(["unzip", "-tq", zip]).output.contains("No errors detected"))
        let python = try await run(["python3", "-c", """
            import sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            names = z.namelist()
            print(len(names), names[1], names[-1], z.read(names[-1]) == open(sys.argv[2], "rb").read())
            """, zip, source])
        #expect(python.output.trimmingCharacters(in: .whitespacesAndNewlines) == "65537 jpg/00001.jpg jpg/65536.jpg True", "\(python.error)")
    }

    /// A 4 GiB sparse file (zeros, read at memory speed): the entry is streamed with ZIP64 sizes.
    @Test func anEntryOver4GiBGetsZIP64Sizes() async throws {
        let temp = TemporaryFolder()
        let source = temp.path + "/big.pdf"
        let size: Int64 = (1 << 32) + 4_096
        let file = try FS.open(source, O_WRONLY | O_CREAT | O_EXCL, mode: 0o644)
        guard ftruncate(file.fd, off_t(size)) == 0 else { throw CheckFailure("ftruncate: \(errno)") }
        let zip = temp.path + "/big.zip"
        let built = try await BundleBuilder.build(manifest: Array("<edicio/>".utf8), entries: [ZipEntry(name: "pdf/001.pdf", source: source, alwaysStore: false)],
                                            date: day, to: zip, options: BundleOptions(sync: false))
        #expect(built.deflatedEntries == 1 && built.storedEntries == 1)
        #expect(try await run(["unzip", "-tq", zip]).output.contains("No errors detected"))
        let python = try await run(["python3", "-c", """
            import sys, zipfile
            info = zipfile.ZipFile(sys.argv[1]).getinfo("pdf/001.pdf")
            print(info.file_size, info.compress_type, info.extra[:2] == b'\\x01\\x00')
            """, zip])
        #expect(python.output.trimmingCharacters(in: .whitespacesAndNewlines) == "\(size) 8 True", "\(python.error)")
    }

    @Test func theSameIssueGivesTheSameBytes() async throws {
        let files: [(String, [UInt8])] = [("pdf/001.pdf", Fixtures.pdf(text: 20_000)), ("jpg/001.jpg", Fixtures.jpeg())]
        let a = try await build(files, options: BundleOptions(sync: false))
        let b = try await build(files, options: BundleOptions(sync: false))
        #expect(a.built.sha256 == b.built.sha256)
    }

    @Test func twentyConcurrentFirstDemandRequestsBuildOnce() async throws {
        let env = try await TestEnvironment()
        let published = try await env.publisher.publish(
            editionID: 1, date: day, from: Fixtures.writeFolder(env.temp.sub("in"), pages: Fixtures.pages(6)))
        let path = env.directory.absolute(published.bundle.path)
        try FileManager.default.removeItem(atPath: path)    // missing: e.g. deleted by an operator
        let contents = try #require(try await env.store.issueContents(editionID: 1, date: day))
        let service = BundleService(directory: env.directory, registry: env.store, options: BundleOptions(sync: false))
        // A second service stands for another process: it shares only the disk and the database.
        let other = BundleService(directory: env.directory, registry: env.store, options: BundleOptions(sync: false))
        let offered = env.offered
        let results = try await withThrowingTaskGroup(of: BundleInfo.self) { group in
            for index in 0..<20 {
                let target = index % 4 == 3 ? other : service
                group.addTask { try await target.bundle(for: contents, offered: offered) }
            }
            return try await group.reduce(into: [BundleInfo]()) { $0.append($1) }
        }
        #expect(results.count == 20)
        #expect(Set(results) == [published.bundle], "rebuilt bundle is byte-identical to the published one")
        let builds = await service.buildCount + other.buildCount
        #expect(builds == 1)
        #expect(try await env.store.issueContents(editionID: 1, date: day)?.bundle == published.bundle)
        #expect(try await run(["unzip", "-tq", path]).status == 0)
        // Present and recorded: no build at all.
        let again = try await service.bundle(for: try #require(try await env.store.issueContents(editionID: 1, date: day)), offered: offered)
        #expect(again == published.bundle)
        #expect(await service.buildCount == builds - (await other.buildCount))
        // No temporary files left.
        let names = try FileManager.default.contentsOfDirectory(atPath: env.directory.absolute("1/2025-06-30/r1"))
        #expect(names.filter { $0.contains(".tmp-") }.isEmpty)
    }

    @Test func manyWorkersKeepEntryOrderAndBytes() async throws {
        // Distinct entries of equal size: a swapped pair would keep the size and change the hash.
        let files = (1...60).map { number in
            ("pdf/\(number).pdf", (0..<30_000).map { UInt8(truncatingIfNeeded: ($0 &* 31 &+ number) % 97) })
        }
        let first = try await build(files, options: BundleOptions(sync: false, workers: 1))
        for _ in 0..<15 {
            let again = try await build(files, options: BundleOptions(sync: false, workers: 8))
            #expect(again.built.sha256 == first.built.sha256)
        }
        _ = try await acceptedByUnzipAndPython(first.zip, folder: first.folder)
    }

    @Test(arguments: [1, 2, 4])
    func aFileMissingMidwayFailsTheBuildAndLeavesNothing(workers: Int) async throws {
        let temp = TemporaryFolder()
        var entries: [ZipEntry] = []
        for number in 1...30 {
            let path = temp.sub("src") + "/pdf/\(number).pdf"
            try FileManager.default.createDirectory(atPath: FS.parentPath(path), withIntermediateDirectories: true)
            if number != 17 {   // the 17th is missing: a worker fails while others are ahead and the writer behind
                try Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 % 7) }).write(to: URL(fileURLWithPath: path))
            }
            entries.append(ZipEntry(name: "pdf/\(number).pdf", source: path, alwaysStore: false))
        }
        let zip = temp.path + "/out.zip"
        await #expect(throws: SystemError.self) {
            try await BundleBuilder.build(manifest: Array("<edicio/>".utf8), entries: entries, date: day, to: zip,
                                    options: BundleOptions(workers: workers))
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: temp.path)
        #expect(left == ["src"], "left behind: \(left)")
    }

    @Test func aBundleOfAWithdrawnAndCleanedRevisionIsNotRecreated() async throws {
        let env = try await TestEnvironment()
        let published = try await env.publisher.publish(
            editionID: 1, date: day, from: Fixtures.writeFolder(env.temp.sub("in"), pages: Fixtures.pages(1)))
        let contents = try #require(try await env.store.issueContents(editionID: 1, date: day))
        try FileManager.default.removeItem(atPath: env.directory.absolute("1/2025-06-30/r1"))
        let service = BundleService(directory: env.directory, registry: env.store)
        await #expect(throws: SystemError.self) { try await service.bundle(for: contents, offered: env.offered) }
        #expect(!FileManager.default.fileExists(atPath: env.directory.absolute(published.bundle.path)))
    }
}

extension Array where Element == UInt8 {
    /// How many times `pattern` occurs.
    func occurrences(of pattern: [UInt8]) -> Int {
        guard count >= pattern.count else { return 0 }
        var found = 0
        for start in 0...(count - pattern.count) where self[start] == pattern[0] {
            if self[start..<(start + pattern.count)].elementsEqual(pattern) { found += 1 }
        }
        return found
    }
}

/// The blocking executor is bounded: work waiting for a lock or for other work must never hold one of
/// its threads, or a few waiters would starve the holder. One thread must be enough for everything.
@Suite struct BlockingExecutorTests {
    @Test func oneThreadServesConcurrentPublishesOfOneIssueAndTheirBundles() async throws {
        let env = try await TestEnvironment()
        let narrow = try EditionsDirectory(path: env.directory.root, executor: BlockingExecutor(threads: 1))
        let store = env.store
        let publisher = IssuePublisher(directory: narrow, registry: store, bundleOptions: BundleOptions(sync: false, workers: 4),
                                       publicationName: { try await store.publicationName(id: $0) })
        let folder = try await Fixtures.writeFolder(env.temp.sub("in"), pages: Fixtures.pages(6))
        let finished = LockedFlag()
        let watchdog = Task {
            try await Task.sleep(for: .seconds(60))
            #expect(finished.isSet, "publishes on a one-thread executor did not finish within 60 s (deadlock)")
        }
        // Four publishes of one issue queue on its lock; four of another edition run beside them.
        let results = try await withThrowingTaskGroup(of: PublishResult.self) { group in
            for index in 0..<8 {
                group.addTask { try await publisher.publish(editionID: 1 + index % 2, date: TestEnvironment.day, from: folder) }
            }
            return try await group.reduce(into: [PublishResult]()) { $0.append($1) }
        }
        finished.set()
        watchdog.cancel()
        #expect(Set(results.map { "\($0.editionID)/r\($0.revision)" }) == ["1/r1", "1/r2", "1/r3", "1/r4", "2/r1", "2/r2", "2/r3", "2/r4"])
        // Missing bundles of both issues, asked for at once through a service on the same narrow executor.
        let service = BundleService(directory: narrow, registry: store, options: BundleOptions(sync: false, workers: 4))
        var missing: [IssueContents] = []
        for edition in [1, 2] {
            let issue = try #require(try await store.issueContents(editionID: edition, date: TestEnvironment.day))
            try FileManager.default.removeItem(atPath: narrow.absolute(try #require(issue.bundle).path))
            missing.append(issue)
        }
        let contents = missing
        let offered = [env.offered, OfferedEdition(
            line: TariffLine(appKey: "app", editionID: 2, order: 2, access: .free),
            edition: Edition(id: 2, publicationID: 1, name: "Comarques Gironines", createdOn: IssueDate("2010-03-01")!),
            publicationName: "El Punt Avui")]
        let built = try await withThrowingTaskGroup(of: BundleInfo.self) { group in
            for index in 0..<10 { group.addTask { try await service.bundle(for: contents[index % 2], offered: offered[index % 2]) } }
            return try await group.reduce(into: Set<BundleInfo>()) { $0.insert($1) }
        }
        #expect(built == Set(contents.compactMap(\.bundle)), "rebuilt bundles are the published bytes")
        #expect(await service.buildCount == 2)
    }
}
