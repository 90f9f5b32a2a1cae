import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one-writer-per-table lock: an exclusive `flock` on `<table>.lock`.
///
/// `flock` locks belong to the open file description, so the kernel drops them when the holder
/// dies (kill -9 included) and an unrelated `close()` of the same file elsewhere in the process
/// does not (classic `F_SETLK` locks get both wrong). The holder writes its PID into the file so
/// that a waiting writer can say who it is waiting for.
final class WriterLock: Sendable {
    let path: String
    /// The lock file's descriptor (-1 once released) and whether we hold the lock. Guarded, so
    /// that two threads releasing at once close the descriptor once: a second `close` could hit
    /// a descriptor another thread has just opened.
    private let state: Mutex<(fd: Int32, held: Bool)>

    /// Takes the lock, polling until `timeout` passes.
    ///
    /// - Parameters:
    ///   - tablePath: the table the lock guards; the lock file is `tablePath + ".lock"`.
    ///   - permissions: the lock file's mode when it has to be created.
    ///   - timeout: how long to wait for another writer, in seconds.
    /// - Throws: ``ImageTableError`` `locked` naming the lock file and the holder's PID, or `io`.
    init(tablePath: String, permissions: UInt16, timeout: Double) throws(ImageTableError) {
        let path = tablePath + ".lock"
        self.path = path
        func openLockFile() throws(ImageTableError) -> Int32 {
            let mode = mode_t(permissions & 0o644)
            // Set only when made here: a bake that is then refused (another manifest's table,
            // `shared-table`) changed the mode of a lock file it had no business with.
            for _ in 0..<100 {
                let made = Posix.retrying { open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode) }
                if made >= 0 {
                    // Like the table itself, the lock file's mode must not depend on the umask.
                    _ = fchmod(made, mode)
                    return made
                }
                guard errno == EEXIST else { throw Posix.error("open lock file", path: path) }
                let existing = Posix.retrying { open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC) }
                if existing >= 0 { return existing }
                // Deleted between the two opens (a prune took its table): made again.
                guard errno == ENOENT else { throw Posix.error("open lock file", path: path) }
            }
            throw ImageTableError(.io, "the lock file kept being deleted and made again", path: path)
        }
        state = Mutex((try openLockFile(), false))
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let fd = state.withLock { $0.fd }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                // The file locked must still be the one the path names: a tool that replaced the
                // table's directory (`imagetable merge`) or deleted the table (`bake --prune`)
                // took its lock file along, and a lock on that would guard nothing.
                var held = stat(), named = stat()
                if fstat(fd, &held) == 0, lstat(path, &named) == 0, held.st_ino == named.st_ino, held.st_dev == named.st_dev { break }
                let fresh = try openLockFile()
                state.withLock { s in
                    close(s.fd)
                    s.fd = fresh
                }
                continue
            }
            let e = errno
            guard e == EWOULDBLOCK || e == EINTR else {
                release()
                throw Posix.error("flock", path: path, errno: e)
            }
            // A command that stops at SIGINT or SIGTERM (a bake, a merge) stops waiting too: the
            // signal, caught, was only seen once the lock came or the timeout passed (seconds,
            // minutes with a long --lock-timeout), and a merge then failed `locked`, exit 1.
            let signal = InterruptSignals.caught
            if signal != nil || Date() >= deadline {
                let holder = (try? String(contentsOfFile: path, encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
                release()
                let who = holder.isEmpty ? "another process" : "process \(holder)"
                if let signal {
                    throw ImageTableError(.interrupted, "interrupted by \(InterruptSignals.name(signal)) while \(who) was writing this table "
                                          + "(lock file \((path as NSString).lastPathComponent))", path: tablePath)
                }
                // `10.0 s` reads as a measurement; the timeout is what was asked for.
                let waited = timeout <= 0 ? "did not wait (lock timeout 0)"
                    : "gave up after " + (timeout == timeout.rounded() && timeout < 1e15 ? "\(Int(timeout))" : "\(timeout)") + " s"
                // The lock file by its name: it lies beside the table the error names.
                throw ImageTableError(.locked, "\(who) is writing this table (lock file \((path as NSString).lastPathComponent)); \(waited). "
                    + "Wait for it to finish or allow a longer lock timeout", path: tablePath)
            }
            usleep(20_000)
        }
        let fd = state.withLock { s in
            s.held = true
            return s.fd
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    /// Whether some writer holds `tablePath`'s lock at this instant, asked without waiting.
    ///
    /// A shared `flock` is tried and dropped at once: it fails only while a writer holds the
    /// exclusive one, and a writer that polls for the lock meanwhile just tries again. The lock
    /// file is opened read-only and never created, so asking changes nothing on disk.
    ///
    /// - Parameter tablePath: the table; its lock file is `tablePath + ".lock"`.
    /// - Returns: `true` when a writer holds it, `false` when none does (or there is no lock
    ///   file), `nil` when it cannot be told (the lock file cannot be opened).
    static func isHeld(tablePath: String) -> Bool? {
        let fd = Posix.retrying { open(tablePath + ".lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else { return errno == ENOENT ? false : nil }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 { return false }
        return errno == EWOULDBLOCK ? true : nil
    }

    /// Whether a writer in another process holds `tablePath`'s lock at this instant: as
    /// ``isHeld(tablePath:)``, less this process's own hold (a tool reading tables it locked,
    /// such as `export` or `merge`), told by the PID the holder writes into the lock file.
    ///
    /// - Parameter tablePath: the table.
    static func isHeldByAnotherProcess(tablePath: String) -> Bool {
        for attempt in 0..<5 {
            guard isHeld(tablePath: tablePath) == true else { return false }
            if let text = try? String(contentsOfFile: tablePath + ".lock", encoding: .utf8),
               let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                return pid != getpid()
            }
            // Held with no PID written: a writer between taking the lock and writing its PID,
            // or a released lock whose descriptor a process being spawned holds until its exec
            // closes it (verify then took a table no one writes for one being written, and
            // reported no damage: a test saw it once). Looked at again a moment later.
            if attempt < 4 { usleep(2_000) }
        }
        return true
    }

    /// Releases the lock (clearing the PID only if we held it); idempotent and thread-safe.
    ///
    /// - Returns: whether this call released it (`false` when it was already released).
    @discardableResult
    func release() -> Bool {
        state.withLock { s in
            guard s.fd >= 0 else { return false }
            if s.held { _ = ftruncate(s.fd, 0) }
            close(s.fd)
            s = (-1, false)
            return true
        }
    }

    deinit { release() }
}

/// A table's writer lock held without opening the table, for a tool that replaces table files
/// wholesale (`imagetable merge` swapping its output directory): while it is held, no writer
/// (a bake, a runtime cache) is inside the table, and none that waits for it can end up writing
/// into a file that is no longer the table's.
public final class TableWriterLock: Sendable {
    private let lock: WriterLock

    /// Takes the writer lock of the table at `tablePath`, waiting up to `timeout` seconds.
    ///
    /// - Parameters:
    ///   - tablePath: the table; its lock file is `tablePath + ".lock"`.
    ///   - protection: the table's protection, for the lock file's mode when it is created.
    ///   - timeout: seconds to wait for a writer.
    /// - Throws: ``ImageTableError`` `locked` naming the holder, or `io`.
    public init(tablePath: String, protection: ProtectionMode, timeout: Double) throws(ImageTableError) {
        lock = try WriterLock(tablePath: tablePath, permissions: protection.permissions, timeout: timeout)
    }

    /// Releases the lock; idempotent.
    public func release() { lock.release() }

    /// Takes the writer lock of every table in `directory`, in name order, for a tool about to
    /// replace the directory whole (`merge` its output, `export` its destination).
    ///
    /// - Parameters:
    ///   - directory: the set's directory; one that cannot be listed holds no table.
    ///   - timeout: seconds to wait for each table's writer.
    /// - Returns: the locks, to release once the directory is replaced.
    /// - Throws: ``ImageTableError`` `locked` naming the holder, or `io`; the locks taken
    ///   before are released.
    public static func all(in directory: String, timeout: Double) throws(ImageTableError) -> [TableWriterLock] {
        var locks: [TableWriterLock] = []
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted() where name.hasSuffix(".imagetable") {
            let table = directory + "/" + name
            let protection = (try? ImageTableReader(path: table))?.header.protection ?? .none
            do throws(ImageTableError) {
                locks.append(try TableWriterLock(tablePath: table, protection: protection, timeout: timeout))
            } catch {
                locks.forEach { $0.release() }
                throw error
            }
        }
        return locks
    }
}
