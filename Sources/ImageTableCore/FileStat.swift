import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `stat` says of a source file that can change without its name changing: its identity
/// (device, inode), its size and its two timestamps, in nanoseconds.
///
/// A bake's state remembers these next to a file's fingerprint. The next bake trusts the
/// fingerprint only when all five are the same and the file was last modified well before it was
/// fingerprinted; otherwise it reads the file again. A reader compares them before and after a
/// read to tell a file that changed while it was read. `touch -r` keeps the
/// modification time but not the change time, so it is still seen; what cannot be seen is
/// described in `docs/BAKE.md`.
public struct FileStat: Sendable, Hashable, Codable {
    /// The device the file is on.
    public var device: UInt64
    /// Its inode number.
    public var inode: UInt64
    /// Its size in bytes.
    public var size: Int
    /// Its last modification, nanoseconds since 1970.
    public var modifiedNs: Int64
    /// Its last status change (content, mode, links, rename), nanoseconds since 1970.
    public var changedNs: Int64

    /// Creates a stat record.
    ///
    /// - Parameters:
    ///   - device: the device.
    ///   - inode: the inode.
    ///   - size: the size in bytes.
    ///   - modifiedNs: the modification time in nanoseconds.
    ///   - changedNs: the status change time in nanoseconds.
    public init(device: UInt64, inode: UInt64, size: Int, modifiedNs: Int64, changedNs: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modifiedNs = modifiedNs
        self.changedNs = changedNs
    }

    /// The fields of a `stat` result.
    ///
    /// - Parameter st: what `stat` or `fstat` returned.
    public init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int(st.st_size)
        #if canImport(Darwin)
        modifiedNs = Int64(st.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(st.st_mtimespec.tv_nsec)
        changedNs = Int64(st.st_ctimespec.tv_sec) * 1_000_000_000 + Int64(st.st_ctimespec.tv_nsec)
        #else
        modifiedNs = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        changedNs = Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)
        #endif
    }

    /// The stat of the file `path` names (following links), or `nil` when it is gone.
    ///
    /// - Parameter path: the file.
    public init?(path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        self.init(st)
    }

    /// The current time in nanoseconds since 1970, on the clock file timestamps use.
    public static var now: Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
