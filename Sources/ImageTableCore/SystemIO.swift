#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one place where this package's modules loop over `read` and `write`: short transfers are
/// continued and interrupted calls retried here, by name, instead of in loops at every call
/// site. (The worker protocol's channel has its own two, since that module depends on Foundation
/// alone.)
public enum SystemIO {
    /// Reads from `fd` until `buffer` is full or the file ends, retrying `EINTR` and `EAGAIN`.
    ///
    /// - Parameters:
    ///   - fd: the descriptor.
    ///   - buffer: where the bytes go.
    /// - Returns: the number of bytes read (fewer than `buffer.count` only at end of file), or
    ///   the `errno` of the failed call.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, SystemError> {
        fill(buffer) { start, count, _ in
            #if canImport(Glibc)
            Glibc.read(fd, start, count)
            #else
            Darwin.read(fd, start, count)
            #endif
        }
    }

    /// Reads up to `buffer.count` bytes at `offset` with `pread`, retrying `EINTR` and
    /// continuing short reads; fewer only at the end of the file.
    ///
    /// - Parameters:
    ///   - fd: the descriptor.
    ///   - buffer: where to read.
    ///   - offset: the file offset.
    /// - Returns: the bytes read, or the error.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Result<Int, SystemError> {
        fill(buffer) { start, count, done in pread(fd, start, count, off_t(offset + done)) }
    }

    /// The loop of both reads: `call(start, count, done)` reads at most `count` bytes to `start`,
    /// `done` bytes into the buffer, and returns what the system call returned.
    private static func fill(_ buffer: UnsafeMutableRawBufferPointer,
                             _ call: (UnsafeMutableRawPointer, Int, Int) -> Int) -> Result<Int, SystemError> {
        var done = 0
        while done < buffer.count {
            let n = call(buffer.baseAddress! + done, buffer.count - done, done)
            if n > 0 {
                done += n
            } else if n == 0 {
                break
            } else if errno != EINTR && errno != EAGAIN {
                return .failure(SystemError(errno: errno))
            }
        }
        return .success(done)
    }

    /// Writes all of `bytes` to `fd`, retrying `EINTR` and continuing short writes.
    ///
    /// - Parameters:
    ///   - fd: the descriptor.
    ///   - bytes: the bytes.
    /// - Returns: the `errno` of the failed call, or `nil` when every byte was written.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> SystemError? {
        var done = 0
        while done < bytes.count {
            #if canImport(Glibc)
            let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            #else
            let n = Darwin.write(fd, bytes.baseAddress! + done, bytes.count - done)
            #endif
            if n >= 0 {
                done += n
            } else if errno != EINTR {
                return SystemError(errno: errno)
            }
        }
        return nil
    }

    /// Writes `text` to standard error, and drops it if that fails.
    ///
    /// Every diagnostic of the tools goes through here, not through Foundation's
    /// `FileHandle.write`, which ends the process with a fatal error (`SIGILL`) when a write
    /// fails: with `2>/dev/full`, or `2>&1 | head` once the reader had gone, every command
    /// crashed, a bake just after committing its tables. A diagnostic that cannot be written is
    /// lost, as C tools' `fprintf(stderr, …)` loses it; what the command did and its exit status
    /// stand, and standard output's flush at exit still reports a loss of its own
    /// (``StandardOutputFlush``).
    ///
    /// - Parameter text: what to write, line breaks included.
    public static func writeStandardError(_ text: String) {
        var text = text
        text.withUTF8 { _ = writeAll(2, UnsafeRawBufferPointer($0)) }
    }

    /// Writes all of `bytes` to `fd` at `offset` (the file position is left alone), retrying
    /// `EINTR` and continuing short writes.
    ///
    /// - Parameters:
    ///   - fd: the descriptor.
    ///   - bytes: the bytes.
    ///   - offset: where in the file they go.
    /// - Returns: the `errno` of the failed call, or `nil` when every byte was written.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> SystemError? {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if n > 0 {
                done += n
            } else if n == 0 {
                return SystemError(errno: EIO)
            } else if errno != EINTR {
                return SystemError(errno: errno)
            }
        }
        return nil
    }
}

/// A failed system call's error number, and its text.
public struct SystemError: Error, Sendable, Equatable {
    /// The `errno` value.
    public let errno: Int32

    /// `strerror`'s text for it.
    public var reason: String { String(cString: strerror(errno)) }
}
