import CSystemCalls
import KioskIntegers

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call: which call, on what, and the `errno` text.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    public let call: String
    public let path: String
    public let code: Int32

    public init(_ call: String, _ path: String, code: Int32 = errno) {
        self.call = call; self.path = path; self.code = code
    }

    public var description: String { "\(call) \(path): \(String(cString: strerror(code)))" }

    /// The file system is full (or the quota is used up).
    public var isOutOfSpace: Bool { code == ENOSPC || code == EDQUOT }
}

/// An open file descriptor, closed when the last reference goes.
public final class OpenFile: Sendable {
    public let fd: Int32
    /// The path it was opened by, for messages.
    public let path: String

    package init(fd: Int32, path: String) { self.fd = fd; self.path = path }
    deinit { close(fd) }

    /// `fstat` of the open file.
    public func status() throws -> stat {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemError("fstat", path) }
        return info
    }

    /// Reads `count` bytes at `offset` only if they are all in the page cache, without ever waiting for
    /// the disk (`preadv2` with `RWF_NOWAIT`): true when done, false when the caller must read them
    /// with `read(into:count:at:)` off the event loop (data not cached, or a kernel without it).
    public func readIfCached(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int64) -> Bool {
        var done = 0
        while done < count {
            let n = kiosk_pread_nowait(fd, buffer + done, count - done, off_t(widening: offset) + off_t(widening: done))
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }

    /// Reads up to `count` bytes at `offset` into `buffer`, retrying short reads; returns the bytes read
    /// (fewer only at the end of the file).
    public func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int64) throws -> Int {
        var done = 0
        while done < count {
            let n = pread(fd, buffer + done, count - done, off_t(widening: offset) + off_t(widening: done))
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("read", path)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Reads `count` bytes at `offset` (fewer at the end of the file).
    public func bytes(at offset: Int64, count: Int) throws -> [UInt8] {
        guard count > 0 else { return [] }
        var result = [UInt8](repeating: 0, count: count)
        let n = try result.withUnsafeMutableBytes { raw -> Int in
            guard let base = raw.baseAddress else { return 0 }
            return try read(into: base, count: count, at: offset)
        }
        result.removeLast(count - n)
        return result
    }

    /// Writes all of `bytes` at the current offset.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress else { return }     // nothing to write
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, base + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("write", path)
            }
            done += n
        }
    }

    public func sync() throws {
        while fsync(fd) != 0 {
            if errno == EINTR { continue }
            throw SystemError("fsync", path)
        }
    }

    /// Hints the kernel to start reading the whole file now (cold-cache read-ahead).
    public func willNeed() { _ = posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED) }
}

/// Small wrappers over the system calls the editions code needs, with errors that name the path.
package enum FS {
    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws -> OpenFile {
        let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
        guard fd >= 0 else { throw SystemError("open", path) }
        return OpenFile(fd: fd, path: path)
    }

    package static func openDirectory(_ path: String) throws -> OpenFile {
        try open(path, O_RDONLY | O_DIRECTORY)
    }

    /// Opens `relative` below the directory `base`, refusing any symbolic link on the way (every
    /// component is opened with `O_NOFOLLOW`), any `..`, and anything that is not a directory before the
    /// last component. The caller checks the last component's type with `fstat`.
    package static func openBeneath(_ base: OpenFile, _ relative: String, flags: Int32 = O_RDONLY) throws -> OpenFile {
        let components = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !components.isEmpty else { throw SystemError("open", relative, code: ENOENT) }
        var current = base
        for (index, component) in components.enumerated() {
            guard !component.isEmpty, component != ".", component != ".." else {
                throw SystemError("open", relative, code: EACCES)
            }
            let last = index == components.count - 1
            let fd = openat(current.fd, String(component),
                            (last ? flags : O_RDONLY | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else {
                // ELOOP: the file is a symbolic link; ENOTDIR: a file or link where a folder should be.
                let code = errno
                throw SystemError("open", base.path + "/" + relative, code: !last && code == ELOOP ? ENOTDIR : code)
            }
            current = OpenFile(fd: fd, path: base.path + "/" + components[0...index].joined(separator: "/"))
        }
        return current
    }

    package static func lstat(_ path: String) -> stat? {
        var info = stat()
        return Glibc.lstat(path, &info) == 0 ? info : nil
    }

    package static func isDirectory(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFDIR }
    package static func isRegular(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFREG }

    package static func exists(_ path: String) -> Bool { lstat(path) != nil }

    /// Creates `path` and missing parents (mode 0755), fsyncing each parent that gained an entry.
    package static func makeDirectories(_ path: String) throws {
        if let info = lstat(path) {
            guard isDirectory(info) else { throw SystemError("mkdir", path, code: ENOTDIR) }
            return
        }
        let parent = parentPath(path)
        if parent != path { try makeDirectories(parent) }
        if mkdir(path, 0o755) != 0 && errno != EEXIST { throw SystemError("mkdir", path) }
        try syncDirectory(parent)
    }

    package static func parentPath(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    package static func syncDirectory(_ path: String) throws {
        try openDirectory(path).sync()
    }

    package static func rename(_ from: String, _ to: String) throws {
        guard Glibc.rename(from, to) == 0 else { throw SystemError("rename", "\(from) -> \(to)") }
    }

    package static func unlink(_ path: String) {
        _ = Glibc.unlink(path)
    }

    /// The names in a directory (without `.` and `..`).
    package static func list(_ path: String) throws -> [String] {
        guard let dir = opendir(path) else { throw SystemError("opendir", path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            // d_name: the name and a NUL, within the field.
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes `path` and everything below it without following symbolic links. Missing is fine.
    package static func removeTree(_ path: String) throws {
        guard let info = lstat(path) else { return }
        if isDirectory(info) {
            for name in try list(path) { try removeTree(path + "/" + name) }
            guard rmdir(path) == 0 || errno == ENOENT else { throw SystemError("rmdir", path) }
        } else {
            guard Glibc.unlink(path) == 0 || errno == ENOENT else { throw SystemError("unlink", path) }
        }
    }

    /// `realpath(3)`.
    package static func realPath(_ path: String) throws -> String {
        guard let resolved = Glibc.realpath(path, nil) else { throw SystemError("realpath", path) }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// A short random hex string for temporary names.
    package static func randomSuffix() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(UInt64.random(in: 0...UInt64.max, using: &generator), radix: 16)
    }

    /// Unix time now, in seconds.

    /// Monotonic seconds, for rates.
    package static func monotonic() -> Double { seconds(on: CLOCK_MONOTONIC) }

    /// Seconds of CPU the calling thread has used, for costs that must not depend on the machine's load.
    package static func threadCPUTime() -> Double { seconds(on: CLOCK_THREAD_CPUTIME_ID) }

    private static func seconds(on clock: clockid_t) -> Double {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
