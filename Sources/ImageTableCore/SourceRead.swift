import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one read of a source file found: the fingerprint of exactly the bytes read, the stat
/// that was true before and after the read, the first bytes (to tell an image from a file that
/// is not one) and, when asked, the bytes themselves.
///
/// The one way this package reads a source: the bake's planner (streaming, for the fingerprint),
/// the worker (keeping the bytes it decodes and fingerprinting exactly those), the pipeline.
public struct SourceRead: Sendable, Equatable {
    /// ``SourceFingerprint`` of the bytes read, when fingerprinting.
    public let fingerprint: UUID?
    /// The file's bytes, when keeping them.
    public let bytes: [UInt8]?
    /// The file's stat, the same before and after the read.
    public let stat: FileStat
    /// The first bytes of the file (up to 32).
    public let header: [UInt8]
    /// When the read started, nanoseconds since 1970 (after the first stat).
    public let startedNs: Int64

    /// Reads the file at `path` once: whole into memory when `keepingBytes`, else streaming it
    /// through the fingerprint in 1 MiB chunks, so memory stays bounded whatever its size.
    ///
    /// The file's identity and stat (device, inode, size, modification and change times) are
    /// taken before and after the read; if they differ, the bytes may be a mix of two versions
    /// and the read is refused, as GNU tar's "file changed as we read it".
    ///
    /// - Parameters:
    ///   - path: the file.
    ///   - maxBytes: the largest file accepted; larger is refused from its size, unread.
    ///   - fingerprinting: compute ``fingerprint``.
    ///   - keepingBytes: keep the bytes in ``bytes``.
    /// - Throws: ``ImageTableError``: `unreadable` (cannot open, not a regular file, a read error),
    ///   `empty`, `source-too-large`, `changed-while-reading`.
    public init(path: String, maxBytes: Int, fingerprinting: Bool = true, keepingBytes: Bool = false) throws(ImageTableError) {
        // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
        let fd = Posix.retrying { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else { throw Self.unreadable(path, "open failed: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let before = try Self.fileStat(fd, path)
        startedNs = FileStat.now
        TestHook.run("source-opened", path: path)
        if let problem = Self.sizeProblem(before.size, maxBytes: maxBytes, path: path) { throw problem }
        var sha = SourceFingerprint.start()
        var total = 0
        var failure: SystemError?
        if keepingBytes {
            bytes = [UInt8](unsafeUninitializedCapacity: before.size) { buffer, count in
                switch SystemIO.read(fd, into: UnsafeMutableRawBufferPointer(buffer)) {
                case .success(let n): count = n
                case .failure(let error): (count, failure) = (0, error)
                }
            }
            total = bytes!.count
            header = Array(bytes!.prefix(32))
            if fingerprinting { bytes!.withUnsafeBytes { sha.update($0) } }
        } else {
            bytes = nil
            var first: [UInt8] = []
            let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
            defer { chunk.deallocate() }
            reading: while true {
                switch SystemIO.read(fd, into: chunk) {
                case .success(let n):
                    if first.count < 32 { first += UnsafeRawBufferPointer(rebasing: chunk[0..<min(n, 32 - first.count)]) }
                    if fingerprinting { sha.update(UnsafeRawBufferPointer(rebasing: chunk[0..<n])) }
                    total += n
                    if n < chunk.count || total > maxBytes { break reading }
                case .failure(let error):
                    failure = error
                    break reading
                }
            }
            header = first
        }
        if let failure { throw Self.unreadable(path, "read failed: \(failure.reason)") }
        let after = try Self.fileStat(fd, path)
        guard after == before, total == before.size else {
            throw ImageTableError(.changedWhileReading, "the file changed while it was read; it is read again on the next bake", path: path)
        }
        fingerprint = fingerprinting ? sha.finalize { EntityKey.uuid(fromSHA1: $0) } : nil
        stat = before
        TestHook.run("source-read", path: path)
    }

    private static func fileStat(_ fd: Int32, _ path: String) throws(ImageTableError) -> FileStat {
        #if canImport(Glibc)
        var st = Glibc.stat()
        #else
        var st = Darwin.stat()
        #endif
        guard fstat(fd, &st) == 0 else { throw unreadable(path, "stat failed: \(String(cString: strerror(errno)))") }
        switch st.st_mode & S_IFMT {
        case S_IFREG: return FileStat(st)
        case S_IFDIR: throw unreadable(path, "is a directory")
        default: throw unreadable(path, "is not a regular file")
        }
    }

    private static func unreadable(_ path: String, _ why: String) -> ImageTableError {
        ImageTableError(.unreadable, why, path: path)
    }

    /// Why a file of `size` bytes is refused before it is read: `empty` (0 bytes) or
    /// `source-too-large` (over `maxBytes`); `nil` when it is not. The bake's diff asks it of a
    /// file's listed size, so a file it need not open is refused as a read would refuse it.
    ///
    /// - Parameters:
    ///   - size: the file's size.
    ///   - maxBytes: the largest file accepted.
    ///   - path: the file, for the error.
    public static func sizeProblem(_ size: Int, maxBytes: Int, path: String) -> ImageTableError? {
        if size == 0 { return ImageTableError(.empty, "the file is empty (0 bytes)", path: path) }
        if size > maxBytes { return ImageTableError(.sourceTooLarge, "\(size) bytes is over the limit of \(maxBytes)", path: path) }
        return nil
    }

    /// The stat and first bytes of the file at `path`, without reading the rest: enough to tell an
    /// image from a file that is not one, and to refuse what cannot be baked, before deciding to
    /// decode it.
    ///
    /// - Parameters:
    ///   - path: the file.
    ///   - maxBytes: the largest file accepted.
    /// - Returns: the stat and up to 32 first bytes.
    /// - Throws: as ``init(path:maxBytes:fingerprinting:keepingBytes:)``.
    public static func peek(path: String, maxBytes: Int) throws(ImageTableError) -> (stat: FileStat, header: [UInt8]) {
        let fd = Posix.retrying { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else { throw unreadable(path, "open failed: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let stat = try fileStat(fd, path)
        if let problem = sizeProblem(stat.size, maxBytes: maxBytes, path: path) { throw problem }
        var header = [UInt8](repeating: 0, count: min(32, stat.size))
        switch header.withUnsafeMutableBytes({ SystemIO.read(fd, into: $0) }) {
        case .success(let n): header.removeSubrange(n...)
        case .failure(let error): throw unreadable(path, "read failed: \(error.reason)")
        }
        return (stat, header)
    }
}
