#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers that turn failed system calls into ``ImageTableError``s naming the call and file.
enum Posix {
    /// The current `errno` as an ``ImageTableError`` (``ImageTableError/system(_:path:errno:)``).
    static func error(_ call: String, path: String, errno e: Int32 = errno) -> ImageTableError {
        ImageTableError.system(call, path: path, errno: e)
    }

    /// Retries a call interrupted by a signal.
    static func retrying(_ body: () -> Int32) -> Int32 {
        while true {
            let r = body()
            if r == -1 && errno == EINTR { continue }
            return r
        }
    }

    /// Writes all of `bytes` at `offset`.
    static func pwriteAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int, path: String) throws(ImageTableError) {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw error("write", path: path)
            }
            done += n
        }
    }

    /// Reads up to `count` bytes at `offset`; fewer only at end of file.
    static func preadFully(_ fd: Int32, count: Int, at offset: Int, path: String) throws(ImageTableError) -> [UInt8] {
        var failure: ImageTableError?
        var done = 0
        let buffer = [UInt8](unsafeUninitializedCapacity: count) { raw, initialized in
            while done < count {
                let n = pread(fd, raw.baseAddress! + done, count - done, off_t(offset + done))
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = error("read", path: path)
                    break
                }
                if n == 0 { break }
                done += n
            }
            initialized = done
        }
        if let failure { throw failure }
        return buffer
    }

    /// `fsync` of the directory holding `path`, so that a rename survives power loss.
    static func syncDirectory(of path: String) {
        let dir = Directories.parent(of: path)
        let fd = open(dir, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// The last component of a path.
    static func basename(of path: String) -> String {
        PathBytes.lastSlash(path).map { String($0.name) } ?? path
    }
}
