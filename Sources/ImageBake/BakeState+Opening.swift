import Foundation
import ImageTableCore
#if canImport(Glibc)
import Glibc
#endif

/// Opening the bake state: for the bake (created, switched to WAL), for a dry run (writable
/// where it may be, writing nothing), or as a file no one writes, for a state this process may
/// not write.
extension BakeState {
    /// The first of the state's files, and its directory, that this process may not write, if
    /// one: asked before SQLite opens it for writing, which makes `-wal` and `-shm` with the
    /// file's mode (read-only ones, which kept the state read-only after it was made writable).
    static func unwritable(_ path: String) -> String? {
        let directory = Directories.parent(of: path)
        if access(directory.isEmpty ? "." : directory, W_OK) != 0 { return "its directory" }
        for (file, name) in [(path, "the file")] + companionSuffixes.map({ (path + $0, "its \($0) file") }) {
            if access(file, F_OK) == 0 && access(file, W_OK) != 0 { return name }
        }
        return nil
    }

    /// How the state is opened.
    enum Access {
        /// For the bake: created if missing, switched to WAL.
        case write
        /// For a dry run: writable where the file and its directory may be written, though
        /// nothing is written (a read-only connection to a WAL database leaves its `-wal` and
        /// `-shm` behind when it closes, where the last writable one removes them), else as
        /// ``immutable``.
        case read
        /// Read as a file no one writes (SQLite's `immutable`): no `-wal` or `-shm` is made or
        /// read, so nothing is left behind, with the modes of a file this process may not
        /// write (they kept the state read-only after it was made writable again), in a
        /// directory it may not write (where reading a WAL database fails).
        case immutable
    }

    static func open(_ path: String, readOnly: Bool) throws(ImageTableError)
        -> (SQLiteDatabase, KnownFiles, [String: String], [FailureKey: FailureRecord]) {
        guard readOnly else { return try open(path, access: .write) }
        if mayWrite(path), let opened = try? open(path, access: .read) { return opened }
        return try open(path, access: .immutable)
    }

    /// Whether this process may write the state at `path` and its directory: only then is it
    /// read through an ordinary connection, which leaves no `-wal` or `-shm` file behind (one
    /// made by a read-only connection kept the state read-only once it was writable again).
    static func mayWrite(_ path: String) -> Bool {
        let directory = Directories.parent(of: path)
        return access(path, W_OK) == 0 && access(directory.isEmpty ? "." : directory, W_OK) == 0
    }

    /// The state's database at `path`, connected for `access`.
    static func database(_ path: String, access: Access) throws(ImageTableError) -> SQLiteDatabase {
        switch access {
        case .write: try SQLiteDatabase(path: path)
        case .read: try SQLiteDatabase(path: path, create: false)
        case .immutable: try SQLiteDatabase(path: path, readOnly: true, immutable: true)
        }
    }

    static func open(_ path: String, access: Access) throws(ImageTableError)
        -> (SQLiteDatabase, KnownFiles, [String: String], [FailureKey: FailureRecord]) {
        let db = try database(path, access: access)
        // The version is read before the schema is made: making it stamps the version, so a
        // state of any other version was trusted and re-stamped by a bake (only a dry run
        // refused it). A new database is version 0 with no table.
        let found = try schemaVersion(of: db)
        let tables = found == 0 ? try tableCount(of: db) : -1
        let fresh = tables == 0
        guard readableVersions.contains(found) || fresh else {
            throw ImageTableError(.corrupt, "the bake state has schema version \(found), not \(schemaVersion)", path: path)
        }
        if access == .write {
            // WAL: a commit killed at any instant leaves the old state or the new one, and readers
            // (a dry run, `sqlite3`) never block the bake. NORMAL: durable against a killed
            // process; a power cut may lose the last commit, which costs a re-fingerprint only.
            try retryingWhileBusy { () throws(ImageTableError) in try db.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;") }
            // One transaction: another bake never sees tables without their version, which it
            // would take for a damaged state and delete.
            try retryingWhileBusy { () throws(ImageTableError) in try db.execute("BEGIN IMMEDIATE; " + BakeStateSchema.create + " COMMIT;") }
        } else if fresh {
            // An empty file (or one SQLite has just made): no state, as when there is no file.
            return (db, KnownFiles([]), [:], [:])
        }
        // A state whose tables do not read as this schema's (a table or a column gone) is
        // damaged as a broken file is: started afresh by a bake, planned from none by a dry run,
        // where every bake failed "no such column".
        do throws(ImageTableError) {
            return (db, try BakeStateSchema.loadFiles(db), try BakeStateSchema.loadFormats(db), try BakeStateSchema.loadFailures(db))
        } catch where error.code != .locked {
            throw ImageTableError(.corrupt, "the bake state cannot be read as schema \(schemaVersion)", path: path, cause: error.cause ?? error.message)
        }
    }

    /// The database's `PRAGMA user_version`.
    private static func schemaVersion(of db: SQLiteDatabase) throws(ImageTableError) -> Int64 {
        let version = try db.prepare("PRAGMA user_version")
        _ = try version.step()
        return version.int(0)
    }

    /// How many tables the database holds: none in a database SQLite has just made.
    private static func tableCount(of db: SQLiteDatabase) throws(ImageTableError) -> Int64 {
        let count = try db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'")
        _ = try count.step()
        return count.int(0)
    }

    /// Runs `body` again while it fails with `locked`, for up to 10 seconds. Switching a new
    /// database to WAL fails at once, without calling SQLite's busy handler, while another
    /// connection holds a write lock on it, so two processes creating one state (bakes of two
    /// manifests sharing an output directory) would otherwise fail rather than wait.
    static func retryingWhileBusy(_ body: () throws(ImageTableError) -> Void) throws(ImageTableError) {
        let deadline = Date().addingTimeInterval(10)
        while true {
            do throws(ImageTableError) {
                return try body()
            } catch where error.code == .locked && Date() < deadline {
                usleep(10_000)
            }
        }
    }
}
