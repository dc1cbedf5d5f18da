#if canImport(Glibc)
import KioskIntegers
import Glibc
#endif
import KioskFiles
/// Unpacks an uploaded publish folder (ZIP, tar or gzip-compressed tar, told apart by content) into an
/// empty folder, refusing anything that could write outside it or is not a plain file or folder:
/// absolute names, `..`, backslashes, symbolic and hard links, devices, duplicate names, encrypted or
/// unknown compression; and bounding entry count, each file and the total (a ZIP bomb stops at the limit).
public enum ArchiveExtractor {
    public struct Limits: Sendable, Hashable {
        public var maxEntries: Int
        public var maxFileBytes: Int64
        public var maxTotalBytes: Int64
        public init(maxEntries: Int = 10_000, maxFileBytes: Int64 = 200 << 20, maxTotalBytes: Int64 = 4 << 30) {
            self.maxEntries = maxEntries; self.maxFileBytes = maxFileBytes; self.maxTotalBytes = maxTotalBytes
        }

        /// Limits matching a publish's.
        public init(publish: PublishLimits) {
            let entries = publish.maxPages.multipliedReportingOverflow(by: 3)
            let total = publish.maxIssueBytes.addingReportingOverflow(Int64(widening: PublishManifest.maxBytes))
            self.init(maxEntries: entries.overflow ? Int.max : entries.partialValue.addingReportingOverflow(100).partialValue,
                      maxFileBytes: max(publish.maxFileBytes, Int64(widening: PublishManifest.maxBytes)),
                      maxTotalBytes: total.overflow ? Int64.max : total.partialValue)
        }
    }

    /// Extracts `archive` into `destination` (an existing empty folder) and returns the publish folder
    /// (holding `issue.json`, or PDFs alone): `destination` itself, or its only subfolder when the archive
    /// wraps everything in one.
    /// Throws `PublishRejected` naming the entry for anything refused, a damaged or unreadable archive
    /// included; a `SystemError` only for a failure on the server's side (writing into `destination`,
    /// e.g. a full disk). Blocking.
    public static func extract(archive: String, into destination: String, limits: Limits = Limits()) throws -> String {
        let file: OpenFile
        do { file = try FS.open(archive, O_RDONLY) } catch let error as SystemError {
            throw PublishRejected(file: "upload", "cannot be read (\(error.call) failed: \(String(cString: strerror(error.code))))")
        }
        let root = try FS.openDirectory(destination)
        var sink = Sink(root: root, limits: limits)
        let inflated = limits.maxTotalBytes.addingReportingOverflow(64 << 20)
        do {
            try ArchiveReader.read(file, into: &sink, inflatedLimit: inflated.overflow ? Int64.max : inflated.partialValue)
        } catch let error as ArchiveError {
            throw PublishRejected(file: error.entry.map { "upload entry \($0.debugDescription)" } ?? "upload", error.problem,
                                  exceedsLimit: error.exceedsLimit)
        }
        if isPublishFolder(destination) { return destination }
        let top = try FS.list(destination)
        if top.count == 1, let info = FS.lstat(destination + "/" + top[0]), FS.isDirectory(info),
           isPublishFolder(destination + "/" + top[0]) {
            return destination + "/" + top[0]
        }
        throw PublishRejected(file: PublishManifest.fileName, "is missing: put it at the top of the archive (or of its only folder), "
                              + "or send a folder of the issue's PDFs alone")
    }

    /// A classic publish folder (`issue.json`) or a PDF-only one.
    private static func isPublishFolder(_ folder: String) -> Bool {
        FS.exists(folder + "/" + PublishManifest.fileName) || PDFIssueImporter.isPDFOnlyFolder(folder)
    }

    /// Writes checked entries below the root.
    struct Sink: ArchiveSink {
        let root: OpenFile
        let limits: Limits
        var entries = 0
        var total: Int64 = 0

        static func reject(_ name: String, _ message: String) -> PublishRejected {
            PublishRejected(file: "upload entry \(name.debugDescription)", message)
        }

        /// Normalises and checks an entry name: strips one leading `./`, a trailing `/` for folders.
        mutating func checkedName(_ raw: String) throws -> String? {
            entries += 1
            guard entries <= limits.maxEntries else {
                throw PublishRejected(file: "upload", "the archive has more than \(limits.maxEntries) entries", exceedsLimit: true)
            }
            var name = raw
            while name.hasPrefix("./") { name.removeFirst(2) }
            while name.hasSuffix("/") { name.removeLast() }
            if name.isEmpty || name == "." { return nil }
            if name.contains("\\") { throw Self.reject(raw, "contains a backslash") }
            if name.utf8.contains(0) { throw Self.reject(raw, "contains a NUL byte") }
            if let problem = PublishManifest.checkName(name) { throw Self.reject(raw, problem) }
            return name
        }

        mutating func directory(_ raw: String) throws {
            guard let name = try checkedName(raw) else { return }
            try makeParents(name + "/x", raw: raw)
        }

        /// Creates the folders above the last component of `name`; returns the innermost (the root when
        /// there are none). What the archive does wrong (a file where a folder must be) is a refusal;
        /// any other failure (a full disk) is the server's, a `SystemError`.
        @discardableResult
        private func makeParents(_ name: String, raw: String) throws -> OpenFile {
            var current = root
            let components = name.split(separator: "/")
            for component in components.dropLast() {
                let part = String(component)
                if mkdirat(current.fd, part, 0o755) != 0 {
                    let code = errno
                    if code == ENOTDIR { throw Self.reject(raw, "a file of the same name is in the way of its folder") }
                    guard code == EEXIST else { throw SystemError("mkdir", current.path + "/" + part, code: code) }
                }
                let fd = openat(current.fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard fd >= 0 else {
                    let code = errno
                    if code == ENOTDIR || code == ELOOP { throw Self.reject(raw, "a file of the same name is in the way of its folder") }
                    throw SystemError("open", current.path + "/" + part, code: code)
                }
                current = OpenFile(fd: fd, path: current.path + "/" + part)
            }
            return current
        }

        /// Creates a file and passes a writer that enforces the limits.
        mutating func file(_ raw: String, declaredSize: Int64?, contents: (inout FileWriter) throws -> Void) throws {
            guard let name = try checkedName(raw), let base = name.split(separator: "/").last.map(String.init) else {
                throw Self.reject(raw, "is not a file name")
            }
            if let declaredSize, declaredSize > limits.maxFileBytes {
                throw PublishRejected(file: "upload entry \(raw.debugDescription)",
                                      "is \(declaredSize) bytes; the limit per file is \(limits.maxFileBytes) bytes", exceedsLimit: true)
            }
            let parent = try makeParents(name, raw: raw)
            let fd = openat(parent.fd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                let code = errno
                switch code {
                case EEXIST: throw Self.reject(raw, "appears twice in the archive")
                case EISDIR, ELOOP: throw Self.reject(raw, "is both a file and a folder in the archive")
                default: throw SystemError("open", parent.path + "/" + base, code: code)
                }
            }
            var writer = FileWriter(file: OpenFile(fd: fd, path: name), name: raw, limits: limits, total: total)
            try contents(&writer)
            total = writer.total
        }
    }

    /// Writes one extracted file, counting against the limits.
    struct FileWriter: ArchiveFileWriter {
        let file: OpenFile
        let name: String
        let limits: Limits
        var total: Int64
        var written: Int64 = 0

        mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
            written += Int64(widening: bytes.count)
            total += Int64(widening: bytes.count)
            if written > limits.maxFileBytes {
                throw PublishRejected(file: "upload entry \(name.debugDescription)",
                                      "is larger than the limit per file, \(limits.maxFileBytes) bytes", exceedsLimit: true)
            }
            if total > limits.maxTotalBytes {
                throw PublishRejected(file: "upload", "unpacks to more than \(limits.maxTotalBytes) bytes, the limit per issue",
                                      exceedsLimit: true)
            }
            try file.write(bytes)
        }
    }
}
