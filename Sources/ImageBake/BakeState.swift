import Foundation
import ImageManifest
import ImageTableCore
import Synchronization

/// What an output directory's last bakes learnt: each source file's fingerprint with the stat
/// that was true when its bytes were read, and each table's parameters.
///
/// It is a cache, never the truth. The tables say what they hold; the state saves reading a file
/// whose stat has not changed, and decoding again one that failed to decode and has not changed
/// (`BakeState+Failures.swift`). Deleting it costs one re-fingerprint of every source and
/// changes no entry. It lives beside the tables (`.imagetable-state.sqlite`), so a CI cache of the
/// output directory carries it, and keys files by their path relative to the manifest's
/// directory, so a project moved elsewhere stays warm (the stat differs, the fingerprint does
/// not: a moved file is read again, never decoded again). Why SQLite, the schema and its
/// crash-safety: `docs/BAKE.md`.
///
/// Thread-safe: dispatcher threads record what they read; ``commit()`` writes it in one
/// transaction.
final class BakeState: @unchecked Sendable {
    /// The file's name in the output directory.
    static let fileName = ".imagetable-state.sqlite"
    /// What SQLite keeps beside the state, by suffix: its write-ahead log and the log's index
    /// (the state runs in WAL mode), and the rollback journal of the moments before it does.
    static let companionSuffixes = ["-wal", "-shm", "-journal"]
    /// How long after a file's last modification its fingerprint is trusted: longer than the
    /// coarsest timestamp a file system keeps (FAT's 2 s), so a write in the same tick as the
    /// read cannot go unseen (git's "racily clean" entries).
    static let racyMarginNs: Int64 = 2_000_000_000
    /// The schema's version, in SQLite's `user_version`. Version 2 has version 1's tables, and
    /// `files` rows whose fingerprint records what a peek at a file's first bytes found
    /// (``peekedImage``, ``peekedNotImage``), which a version 1 bake would take for the bytes'
    /// fingerprint: a version 1 state is read as it is, and stamped 2 by a bake.
    static let schemaVersion = 2
    /// The earlier versions a state may have and be read as this one.
    static let readableVersions: Set<Int64> = [1, 2]

    /// One file, as it was when its bytes were last read.
    struct FileRecord: Sendable, Equatable {
        var stat: FileStat
        var fingerprint: UUID
        /// When the bytes were read (their stat was taken just before), nanoseconds since 1970.
        var checkedNs: Int64
        /// The tables that held an entry of these bytes after the bake (informative).
        var tables: [String]
    }

    private struct Pending {
        /// What was learnt of files, in order: a later entry for a path wins at commit.
        var files: [PendingFile] = []
        var formats: [String: String] = [:]
        /// Failed decodes learnt (a record) or forgotten (`nil`), in order.
        var failures: [(key: FailureKey, record: FailureRecord?)] = []
    }

    /// A file read (its record) or gone (`nil`), named by its directory and its name in it, which
    /// the scan's strings share, rather than by a path string of its own.
    private struct PendingFile {
        let directory: String?
        let name: String
        let record: FileRecord?
    }

    /// The database file.
    let path: String
    /// What opening did: a damaged state replaced by an empty one (`state-reset`), or one that
    /// cannot be written opened to read (`state-read-only`); each a message and its code.
    let notices: [(message: String, code: String)]
    /// Whether commits write: not to a state this process may not write.
    private let writable: Bool
    /// Whether what the bake learns is kept for a commit: not when no commit would write it (a
    /// dry run, a state that cannot be written), where a first dry run of 100,000 sources held
    /// a record of each peek to the end.
    private let keepsRecords: Bool
    private let root: String
    private let database: SQLiteDatabase?
    /// What the state knew of files when it opened, until the diff takes it (``takeKnownFiles()``).
    private let files: AdaptiveMutex<KnownFiles>
    private let formats: [String: String]
    /// Failed decodes remembered at open (`BakeState+Failures.swift`).
    let failures: AdaptiveMutex<RememberedFailures>
    /// Whether any was: most bakes have none, and then look none up.
    let hasRememberedFailures: Bool
    private let pending = AdaptiveMutex(Pending())
    /// Held while a commit writes; whether commits during the run are still tried (not after one
    /// failed: its batch waits for the last commit).
    private let committing = Mutex(true)

    /// Opens the state of `directory`, creating it (unless `readOnly`), or starting afresh when
    /// it is damaged or from another schema.
    ///
    /// - Parameters:
    ///   - directory: the output directory.
    ///   - root: the manifest's directory; paths under it are stored relative to it.
    ///   - readOnly: a dry run: read what is there, write nothing.
    /// - Throws: ``ImageTableError`` when the state cannot be created at all (a read-only or full
    ///   directory).
    init(directory: String, root: String, readOnly: Bool) throws(ImageTableError) {
        path = directory + "/" + Self.fileName
        // Resolved as the sources are (their paths are real paths): a project reached through
        // a symbolic link stored every path absolute, so a moved project was not warm.
        self.root = SourceScanner.realPath(root) ?? root
        var notices: [(message: String, code: String)] = []
        var writable = !readOnly
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        // SQLite says only "disk I/O error" of a directory in the state's place.
        if exists && isDirectory.boolValue {
            throw ImageTableError(.isADirectory, "is a directory where the bake state belongs; remove it (the bake makes the file)", path: path)
        }
        // A dry run with no state file, or a damaged one, plans from no state: no database.
        var opened: (SQLiteDatabase?, KnownFiles, [String: String], [FailureKey: FailureRecord]) = (nil, KnownFiles([]), [:], [:])
        let unwritable = readOnly || !exists ? nil : Self.unwritable(path)
        do throws(ImageTableError) {
            if let unwritable { throw ImageTableError(.permissionDenied, "\(unwritable) may not be written", path: path) }
            if !readOnly || exists { opened = try Self.open(path, readOnly: readOnly) }
        } catch where error.code == .corrupt && !readOnly {
            notices.append(("the bake state was damaged (\(error.cause ?? error.message)); started afresh, "
                            + "so each source is read once more (none is decoded for it)", "state-reset"))
            for suffix in [""] + Self.companionSuffixes { unlink(path + suffix) }
            opened = try Self.open(path, readOnly: false)
        } catch where error.code == .corrupt {
            // A dry run (and `--list`) plans as the bake will: from no state, which the bake
            // starts afresh. It stopped with exit 1 where the bake goes on (a CI cache cut short).
            notices.append(("the bake state is damaged (\(error.cause ?? error.message)); the bake will start it afresh, "
                            + "so each source is read once more (none is decoded for it)", "state-reset"))
        } catch where (error.code == .permissionDenied || error.code == .noSpace) && !readOnly && exists {
            // The state is a cache: a file this process may not write (restored with another
            // owner, made read-only), or cannot (a full disk: opening it for writing makes its
            // WAL files), is read for what it knows, and the bake goes on without remembering,
            // rather than stopping before any table (a bake with nothing to write failed).
            // Through an ordinary connection where this user may write, which reads the WAL: an
            // immutable one reads the main file alone, which a full disk can leave short of the
            // pages its header counts ("database disk image is malformed", a bake's fatal error
            // over a sound state). Nothing read at all: planned as with no state.
            let read = (Self.mayWrite(path) ? try? Self.open(path, access: .read) : nil) ?? (try? Self.open(path, access: .immutable))
            if let read { opened = read }
            writable = false
            notices.append(("the bake state cannot be written (\(error.cause ?? error.message)\(Self.fullFileSystem(directory)))"
                            + (read == nil ? " nor read" : "") + "; baked without remembering, so the next bake reads again every "
                            + "source this one read", "state-read-only"))
        }
        self.writable = writable
        let known: KnownFiles, failed: [FailureKey: FailureRecord], recorded: [String: String]
        (database, known, recorded, failed) = opened
        keepsRecords = writable && database != nil
        // A state copied or moved with its directory: its manifests' paths, rebased, are kept.
        formats = Self.rebasedOwners(recorded, directory: directory)
        var rebased: [String: String] = [:]
        for (key, value) in formats where key.hasPrefix("manifest/") && recorded[key] != value { rebased[key] = value }
        files = AdaptiveMutex(known)
        failures = AdaptiveMutex(RememberedFailures(records: failed))
        hasRememberedFailures = !failed.isEmpty
        self.notices = notices
        if !rebased.isEmpty { pending.withLock { $0.formats.merge(rebased) { $1 } } }
    }

    /// Why a state that may be written could not be opened for writing, when its file system
    /// is full: SQLite says only "unable to open database file" when its `-wal` file cannot be
    /// made, which reads as a permission problem. Empty otherwise.
    static func fullFileSystem(_ directory: String) -> String {
        var fs = statvfs()
        guard statvfs(directory, &fs) == 0 else { return "" }
        // Root may use the blocks and inodes kept back for it: only none at all stops it.
        let root = getuid() == 0
        if fs.f_files > 0 && (root ? fs.f_ffree : fs.f_favail) == 0 { return "; its file system has no inode left" }
        if (root ? fs.f_bfree : fs.f_bavail) == 0 { return "; its file system is full" }
        return ""
    }

    /// What the state knew of every file when it opened, handed over once and forgotten here.
    ///
    /// The diff alone asks, and a list of every known file costs dozens of bytes a source:
    /// held by the diff rather than by the state, it is freed before the plan is built, not
    /// carried to the end of the bake. A second call gets an empty list.
    func takeKnownFiles() -> TrustedFiles {
        TrustedFiles(files: files.withLock { known in
            let taken = known
            known = KnownFiles([])
            return taken
        }, root: root)
    }

    /// Remembers what a read of `file` found; written by the next ``commit()``.
    func remember(_ file: SourceFile, _ record: FileRecord) {
        guard keepsRecords else { return }
        pending.withLock { $0.files.append(PendingFile(directory: file.root, name: file.key, record: record)) }
    }

    /// Forgets a file that is gone.
    ///
    /// - Parameter path: its path, absolute or as stored.
    func forget(path: String) {
        guard keepsRecords else { return }
        pending.withLock { $0.files.append(PendingFile(directory: nil, name: path, record: nil)) }
    }

    /// How many files and failures wait for the next commit.
    var pendingCount: Int { pending.withLock { $0.files.count + $0.failures.count } }

    /// Commits what is remembered once it is `count` files or more, unless another thread is
    /// committing: the diff and the run call this as sources are read and baked, so that what
    /// they learn is held in memory a batch at a time, not a hundred bytes per source until the
    /// end (and a bake that is killed loses only the last batch of fingerprints).
    ///
    /// Past twice `count`, the caller waits for the commit in progress and then commits, where
    /// it would go on: the diff peeks at files faster than SQLite writes their rows, and its
    /// batches grew as the state did (8,192 files, then 13,197, 24,623 and 53,988 on a first
    /// bake of 100,000 sources), so that it still held most of them at once.
    ///
    /// A commit that fails here (the state busy with another bake past SQLite's timeout, a full
    /// disk) puts its batch back and ends commits during the run: the last ``commit()`` writes
    /// everything, and only its failure fails the bake, as when that was the only commit.
    ///
    /// - Parameter count: the least number of files worth a transaction.
    func commit(ifAtLeast count: Int) {
        guard database != nil else { return }
        let remembered = pendingCount
        guard remembered >= count else { return }
        func attempt(_ tryDuringRun: inout Bool) {
            // A commit this caller waited for may have taken its files already.
            guard tryDuringRun, pendingCount >= count else { return }
            let batch = takePending()
            do throws(ImageTableError) {
                try write(batch)
            } catch {
                tryDuringRun = false
                pending.withLock { p in
                    // Older than anything remembered since: first, so that later entries still win.
                    p.files = batch.files + p.files
                    p.failures = batch.failures + p.failures
                    p.formats.merge(batch.formats) { newer, _ in newer }
                }
            }
        }
        if remembered / 2 >= count {
            committing.withLock { attempt(&$0) }
        } else {
            _ = committing.withLockIfAvailable { attempt(&$0) }
        }
    }

    /// The canonical parameters a table had at the last bake, to say what changed on a rebuild.
    func parameters(ofTable file: String) -> String? { formats[file] }

    /// Remembers a table's canonical parameters.
    func setParameters(ofTable file: String, _ parameters: String) {
        pending.withLock { $0.formats[file] = parameters }
    }

    /// The manifest (its real path) whose bake last wrote a table: two manifests may share an
    /// output directory, and a table one names is not the other's orphan. Kept in `formats`
    /// under `manifest/<table file>` (no file name holds a `/`), which older builds ignore.
    func manifest(ofTable file: String) -> String? { formats["manifest/" + file] }

    /// Every table's recorded manifest (``manifest(ofTable:)``), read from the state in
    /// `directory` before the bake opens its tables (opening one of another format rebuilds it):
    /// by table file name, rebased when the state was recorded in another directory
    /// (``rebasedOwners(_:directory:)``). Empty when there is no state or it cannot be read,
    /// which is a cache's absence, not an error.
    ///
    /// - Parameter directory: the output directory.
    static func tableManifests(directory: String) -> [String: String] {
        let path = directory + "/" + fileName
        guard FileManager.default.fileExists(atPath: path),
              let db = try? database(path, access: mayWrite(path) ? .read : .immutable),
              let recorded = try? BakeStateSchema.loadFormats(db) else { return [:] }
        let formats = rebasedOwners(recorded, directory: directory)
        var owners: [String: String] = [:]
        for (key, manifest) in formats where key.hasPrefix("manifest/") { owners[String(key.dropFirst("manifest/".count))] = manifest }
        return owners
    }

    /// Remembers the manifest whose bake wrote a table.
    func setManifest(ofTable file: String, _ manifest: String) {
        pending.withLock { $0.formats["manifest/" + file] = manifest }
    }

    /// `formats` with the manifests' paths (`manifest/<table>` rows) rebased onto `directory`
    /// when the state was recorded in another one (``setDirectory(_:)``): a copied or moved
    /// project's state named the original's manifests, which bake the original's tables, so
    /// its own manifests were refused (`shared-table`) and its orphans never found. Each path
    /// keeps its place relative to the output directory (`../site.yaml` stays `../site.yaml`);
    /// one that is not there in the copy names no manifest, and claims nothing.
    ///
    /// - Parameters:
    ///   - formats: the state's `formats` rows.
    ///   - directory: the output directory now.
    /// - Returns: the rows, rebased where they need to be.
    static func rebasedOwners(_ formats: [String: String], directory: String) -> [String: String] {
        let now = SourceScanner.realPath(directory) ?? directory
        guard let then = formats[directoryKey], then != now else { return formats }
        var rebased = formats
        for (key, path) in formats where key.hasPrefix("manifest/") { rebased[key] = rebase(path, from: then, to: now) }
        return rebased
    }

    /// `path` moved as `old` moved to `new`: the same path relative to it, resolved lexically.
    static func rebase(_ path: String, from old: String, to new: String) -> String {
        let from = PathBytes.components(old), target = PathBytes.components(path)
        let common = zip(from, target).prefix { PathBytes.same($0, $1) }.count
        var parts: [Substring] = PathBytes.components(new)
        for _ in common..<from.count { if !parts.isEmpty { parts.removeLast() } }
        parts += target[common...]
        return "/" + parts.joined(separator: "/")
    }

    /// Where the state's rows of `formats` hold the output directory's real path at the last bake:
    /// no table file is named so.
    static let directoryKey = "directory"

    /// Remembers the output directory's real path: a state copied or moved with its directory
    /// then tells that the manifests it records baked somewhere else (``tableManifests(directory:)``).
    ///
    /// - Parameter realPath: the output directory's real path.
    func setDirectory(_ realPath: String) {
        pending.withLock { $0.formats[Self.directoryKey] = realPath }
    }

    /// Writes everything remembered since the last commit, in one transaction. A no-op for a
    /// read-only state.
    ///
    /// - Throws: ``ImageTableError`` from SQLite (`no-space`, `locked`, `io`…).
    func commit() throws(ImageTableError) {
        try committing.withLock { (_: inout Bool) throws(ImageTableError) in try write(takePending()) }
    }

    /// What is remembered, taken for a commit.
    private func takePending() -> Pending {
        pending.withLock { p in
            defer { p = Pending() }
            return p
        }
    }

    /// Writes `batch` in one transaction.
    private func write(_ batch: Pending) throws(ImageTableError) {
        guard let database, writable else { return }
        guard !batch.files.isEmpty || !batch.formats.isEmpty || !batch.failures.isEmpty else { return }
        let files = batch.files.lazy.map { [self] file in
            (path: relative(file.directory.map { SourceFile.path(root: $0, key: file.name) } ?? file.name), record: file.record)
        }
        try BakeStateSchema.write(files, batch.formats, failures: batch.failures, to: database)
    }

    /// Queues a failure's row to be written (`nil`: deleted) at the next commit.
    func addPendingFailure(_ key: FailureKey, _ record: FailureRecord?) {
        guard keepsRecords else { return }
        pending.withLock { $0.failures.append((key, record)) }
    }

    /// Closes the database; later commits throw.
    func close() { database?.close() }

    /// Calls `body` with the path of every file the state holds, as stored, read from the
    /// database as it goes (nothing when there is none).
    ///
    /// - Throws: ``ImageTableError`` from SQLite.
    func forEachKnownPath(_ body: (String) -> Void) throws(ImageTableError) {
        guard let database else { return }
        try BakeStateSchema.forEachPath(database, body)
    }

    /// A path as stored, made absolute again.
    func absolute(_ stored: String) -> String { PathBytes.isAbsolute(stored) ? stored : root + "/" + stored }

    /// `path` relative to the manifest's directory when it lies below it.
    func relative(_ path: String) -> String { String(Self.relativeSubstring(path, root: root)) }

    static func relativeSubstring(_ path: String, root: String) -> Substring {
        PathBytes.remainder(path, after: root + "/") ?? path[...]
    }
}
