import Foundation
import CTableSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes new, empty tables so that they appear whole or not at all.
///
/// A new table is written to a hidden temporary file beside its final name, created with
/// `O_EXCL | O_NOFOLLOW` at mode 0600 and `fchmod`ed to the protection's mode (so the umask
/// neither widens nor narrows it), synced, and renamed into place. Callers hold the writer lock.
enum TableCreation {
    /// The prefix of temporary files for `path`; anything matching it is a leftover of a killed writer.
    static func temporaryPrefix(for path: String) -> String { ".\(Posix.basename(of: path)).tmp-" }

    /// Creates an empty table at `path`, replacing whatever file is there.
    ///
    /// - Parameters:
    ///   - path: the final path.
    ///   - format: the format.
    ///   - layout: its layout.
    ///   - createdAt: the creation time to record, in seconds since 1970; `nil` for now.
    /// - Throws: ``ImageTableError`` (`io`, `noSpace`).
    static func create(at path: String, format: TableFormat, layout: TableLayout, createdAt: UInt64? = nil) throws(ImageTableError) {
        let dir = Directories.parent(of: path)
        let temp = "\(dir)/\(temporaryPrefix(for: path))\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = Posix.retrying { open(temp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        guard fd >= 0 else { throw Posix.error("create", path: temp) }
        var keep = false
        defer {
            close(fd)
            if !keep { unlink(temp) }
        }
        guard fchmod(fd, mode_t(format.protection.permissions)) == 0 else { throw Posix.error("fchmod", path: temp) }
        let header = TableHeader(format: format, layout: layout, createdAt: createdAt ?? UInt64(Date().timeIntervalSince1970))
        try write(header, to: fd, path: temp)
        guard Posix.retrying({ fsync(fd) }) == 0 else { throw Posix.error("fsync", path: temp) }
        guard rename(temp, path) == 0 else { throw Posix.error("rename", path: path) }
        keep = true
        Posix.syncDirectory(of: path)
    }

    /// Writes a new table's header into the empty file `fd` and sizes the file to its index.
    ///
    /// The file reaches `slotsOffset` at once, so readers may touch any record or bucket
    /// (a SIGBUS beyond the end of the file is impossible), but only the header's blocks are
    /// allocated: the records and buckets are a hole that reads as zeros (empty) until writers
    /// allocate each part before they store into it. On macOS, where a hole cannot be allocated
    /// in place, the whole index is allocated here, as version 1 did everywhere.
    static func write(_ header: TableHeader, to fd: Int32, path: String) throws(ImageTableError) {
        var bytes = [UInt8](repeating: 0, count: TableLimits.headerBytes)
        bytes.withUnsafeMutableBytes { header.encode(into: $0.baseAddress!) }
        let layout = header.layout
        #if canImport(Darwin)
        let reserved = itc_reserve(fd, 0, Int64(layout.slotsOffset))
        #else
        let reserved = itc_reserve(fd, 0, Int64(min(layout.slotsOffset, 4096)))
        #endif
        guard reserved == 0 else { throw Posix.error("posix_fallocate", path: path, errno: reserved) }
        guard ftruncate(fd, off_t(layout.slotsOffset)) == 0 else { throw Posix.error("ftruncate", path: path) }
        let written = bytes.withUnsafeBytes { raw in Result { () throws(ImageTableError) in try Posix.pwriteAll(fd, raw, at: 0, path: path) } }
        try written.get()
    }

    /// Removes temporary files that killed writers left beside `path`.
    ///
    /// - Returns: the names removed.
    static func removeStaleTemporaries(for path: String) -> [String] {
        let dir = Directories.parent(of: path)
        let prefix = temporaryPrefix(for: path)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return [] }
        return names.filter { $0.hasPrefix(prefix) && unlink("\(dir)/\($0)") == 0 }
    }
}

