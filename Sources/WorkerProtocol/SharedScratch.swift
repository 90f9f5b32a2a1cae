import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Memory a command and its worker both map: where the worker renders the members whose table
/// had no free slot, so that the command can evict (only once the source has decoded) and copy
/// them into their slots itself. A source that fails never costs an entry its place.
///
/// It is an unnamed shared-memory object (created and unlinked at once; where the system has no
/// room or no `shm_open`, an unlinked file in the temporary directory), passed to the worker as
/// ``WorkerDescriptors/scratch``: nothing is left behind however either process ends.
public final class SharedScratch: @unchecked Sendable {
    /// The mapped bytes.
    public let memory: UnsafeMutableRawBufferPointer
    /// The descriptor to pass to ``WorkerConnection``.
    public let descriptor: Int32

    /// Creates scratch memory of at least `bytes` bytes (rounded up to whole pages).
    ///
    /// - Parameter bytes: the size needed.
    /// - Returns: `nil` when the system refuses both.
    public init?(bytes: Int) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let size = max(page, (bytes + page - 1) / page * page)
        // Short: macOS takes at most 31 bytes of a shared-memory object's name.
        let name = "/itscr-\(String(getpid(), radix: 36))-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
        var fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0o600)
        if fd >= 0 {
            shm_unlink(name)
        } else {
            let directory = NSTemporaryDirectory()
            var template = Array((directory + (directory.hasSuffix("/") ? "" : "/") + "imagetable-scratch-XXXXXX").utf8CString)
            fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard fd >= 0 else { return nil }
            template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        guard ftruncate(fd, off_t(size)) == 0, let base = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0),
              base != MAP_FAILED else {
            close(fd)
            return nil
        }
        descriptor = fd
        memory = UnsafeMutableRawBufferPointer(start: base, count: size)
    }

    /// The worker's view of the scratch memory it was started with, or `nil` when it has none.
    public init?(attachingTo fd: Int32 = WorkerDescriptors.scratch) {
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_size > 0, let base = mmap(nil, Int(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0),
              base != MAP_FAILED else { return nil }
        descriptor = fd
        memory = UnsafeMutableRawBufferPointer(start: base, count: Int(st.st_size))
    }

    deinit {
        munmap(memory.baseAddress, memory.count)
        close(descriptor)
    }
}
