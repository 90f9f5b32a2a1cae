import Foundation
import ImageTableCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file operations an export makes, each of which must leave nothing that differs from one
/// run to the next: fixed modes (never the umask's), fixed times, and data on disk before the
/// directory that holds it is swapped into place.
enum ExportFiles {
    /// Writes `data` to a new file at `path` with `mode`, and syncs it.
    ///
    /// - Throws: ``ImageTableError`` when it cannot be created or written.
    static func create(_ path: String, holding data: Data, mode: mode_t) throws(ImageTableError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ImageTableError.system("create", path: path) }
        defer { close(fd) }
        guard fchmod(fd, mode) == 0 else { throw ImageTableError.system("fchmod", path: path) }
        let written = data.withUnsafeBytes { raw -> Int in
            var done = 0
            while done < raw.count {
                let n = write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return -1 }
                done += n
            }
            return done
        }
        guard written == data.count else { throw ImageTableError.system("write", path: path) }
        guard fsync(fd) == 0 else { throw ImageTableError.system("fsync", path: path) }
    }

    /// Cuts the file at `path` to `size` bytes and syncs it.
    ///
    /// - Throws: ``ImageTableError`` when it cannot.
    static func truncate(_ path: String, to size: Int) throws(ImageTableError) {
        let fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw ImageTableError.system("open", path: path) }
        defer { close(fd) }
        guard ftruncate(fd, off_t(size)) == 0 else { throw ImageTableError.system("ftruncate", path: path) }
        guard fsync(fd) == 0 else { throw ImageTableError.system("fsync", path: path) }
    }

    /// Sets the access and modification times of `path` to `seconds`, without following a link:
    /// archives made of an export (tar, zip, container layers) record them.
    static func setTime(_ path: String, seconds: UInt64) {
        let time = timespec(tv_sec: Int(seconds), tv_nsec: 0)
        var times = (time, time)
        _ = withUnsafePointer(to: &times) { pointer in
            pointer.withMemoryRebound(to: timespec.self, capacity: 2) { utimensat(AT_FDCWD, path, $0, AT_SYMLINK_NOFOLLOW) }
        }
    }

    /// Flushes a file or directory to disk; failures are ignored (some file systems refuse to
    /// sync a directory, and nothing could be done about it).
    static func sync(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
