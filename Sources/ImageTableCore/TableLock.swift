#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A table's writer lock, held without opening the table for writing: for a tool that reads
/// tables and must not see a writer change them meanwhile, such as `imagetable export`.
///
/// It is the lock every ``ImageTableWriter`` takes (an exclusive `flock` of `<table>.lock`,
/// `docs/FORMAT.md`, "Commit protocol"), so while it is held no bake and no runtime cache
/// writes the table, and a bake, which locks every table of its manifest before it starts,
/// has either finished with all of them or not begun. Unlike opening a writer, taking it never
/// changes the table: a table whose parameters differ is not rebuilt, and interrupted writes are
/// not cleared.
public final class TableLock: Sendable {
    /// The lock itself, which an ``ImageTableWriter`` opened with it adopts.
    let lock: WriterLock

    /// Takes the lock of the table at `tablePath`, waiting up to `timeout` seconds for a writer
    /// that holds it.
    ///
    /// The lock file is created if missing, with the table's permissions (read permissions
    /// only), as a writer would create it.
    ///
    /// - Parameters:
    ///   - tablePath: the table; its lock file is `tablePath + ".lock"`.
    ///   - timeout: seconds to wait for another process.
    /// - Throws: ``ImageTableError`` `locked`, naming the process that holds it, when it is
    ///   still held after `timeout`; `io` or `permissionDenied` when the lock file cannot be
    ///   opened.
    public init(tablePath: String, timeout: Double) throws(ImageTableError) {
        var st = stat()
        let permissions = lstat(tablePath, &st) == 0 ? UInt16(st.st_mode & 0o644) : 0o644
        lock = try WriterLock(tablePath: tablePath, permissions: permissions, timeout: timeout)
    }

    /// Takes the lock of a table about to be opened for writing in `format`, as its writer
    /// would (a lock file made with the format's protection), so that the caller may look at
    /// what it knows of the table before the writer rebuilds it, and then hand the lock to
    /// ``ImageTableWriter/init(path:format:options:adopting:)``.
    ///
    /// - Parameters:
    ///   - tablePath: the table; its lock file is `tablePath + ".lock"`.
    ///   - format: the format the writer will open it in.
    ///   - timeout: seconds to wait for another process.
    /// - Throws: as ``init(tablePath:timeout:)``.
    public init(tablePath: String, format: TableFormat, timeout: Double) throws(ImageTableError) {
        lock = try WriterLock(tablePath: tablePath, permissions: format.protection.permissions, timeout: timeout)
    }

    /// Takes the lock as ``init(tablePath:timeout:)`` does, or returns `nil` when this process
    /// may not open the lock file for writing at all (`EACCES`, `EPERM`, `EROFS`: another user's
    /// table, a read-only directory or file system). A tool that only reads the table, such as
    /// `export` or `merge`, then reads it without the lock.
    ///
    /// - Parameters:
    ///   - tablePath: the table; its lock file is `tablePath + ".lock"`.
    ///   - timeout: seconds to wait for another process.
    /// - Throws: as ``init(tablePath:timeout:)``, but for a lock file this process may not open.
    public static func unlessReadOnly(tablePath: String, timeout: Double) throws(ImageTableError) -> TableLock? {
        do {
            return try TableLock(tablePath: tablePath, timeout: timeout)
        } catch where [EACCES, EPERM, EROFS].contains(error.errno ?? 0) {
            return nil
        }
    }

    /// Releases the lock; idempotent. Also done when the lock is deinitialised.
    public func release() { lock.release() }
}
