import Foundation
import ImageManifest
import ImageTableCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a merge writes, so that its output is the old set of tables or the new one, never a
/// mix, whenever it is killed.
///
/// The new set is written whole into a staging directory beside the output
/// (`.<name>.merge-<pid>-<n>`), every table flushed by ``TableBuilder/finish(clock:)`` and the
/// directory synced; then one atomic step puts it in place: `rename` when the output does not
/// exist, else an exchange of the two directories (`renameat2(RENAME_EXCHANGE)`,
/// `renamex_np(RENAME_SWAP)`), under the writer locks of the old set's tables. The old set, now
/// under the staging name, is deleted last. A merge killed before the exchange leaves the output
/// untouched (the next merge deletes the staging directory); after it, the new set is in place.
struct MergeOutput {
    /// The file that marks a directory as a merge's output, which the next merge may replace.
    static let markerName = ".imagetable-merge"

    /// The output directory as given.
    let path: String
    /// The staging directory.
    let staging: String
    /// The file names of the tables the merge writes.
    let writing: Set<String>

    /// Prepares the staging directory, deleting any a killed merge left, and checks that the
    /// output may be replaced: it must not exist, be empty, or be a merge's output.
    ///
    /// - Parameters:
    ///   - path: the output directory.
    ///   - writing: the file names of the tables the merge writes.
    /// - Throws: ``ImageTableError`` `output-failed`.
    init(_ path: String, writing: Set<String>) throws(ImageTableError) {
        // `merge "" …` (an unset variable) ended in "rename failed: No such file or directory".
        guard !path.isEmpty else { throw ImageTableError(.invalidArgument, "the output directory's path is empty; name the directory to write") }
        let absolute = Directories.absolute(path)
        let parent = Directories.parent(of: absolute)
        let name = String(PathBytes.lastName(absolute))
        self.path = path
        self.writing = writing
        staging = parent + "/.\(name).merge-\(StagingOwner.current)-\(UInt32.random(in: 0...UInt32.max))"
        // The rename puts the new set in place of the link itself: the set landed beside the
        // link's target (perhaps on another volume) and the link was gone.
        var link = stat()
        // Without trailing slashes, which make lstat follow the link (`merge tables/ …`).
        var bare = path
        while bare.count > 1 && bare.hasSuffix("/") { bare.removeLast() }
        if lstat(bare, &link) == 0 && link.st_mode & S_IFMT == S_IFLNK {
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: bare)).map { " (\($0))" } ?? ""
            throw ImageTableError(.outputFailed, "is a symbolic link, which the merge would replace with a directory; "
                                  + "give the directory it points to\(target)", path: path)
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw ImageTableError(.notADirectory, "exists and is not a directory", path: path) }
            try Self.checkReplaceable(path, writing: writing)
            // Said before any work: a mount point (a volume) cannot be replaced by a rename.
            var own = stat(), above = stat()
            if stat(absolute, &own) == 0, stat(parent, &above) == 0, own.st_dev != above.st_dev {
                throw ImageTableError(.outputFailed, "is a mount point, which the merge cannot replace in one step; "
                                      + "give a directory inside it, such as \(path)/tables, and point readers there", path: path)
            }
        }
        // What merges killed before (or after) their exchange left: the staging directories of
        // processes that are gone. A merge still running keeps its own.
        for leftover in ((try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []) where leftover.hasPrefix(".\(name).merge-") {
            guard !StagingOwner.mayBeWriting(leftover.dropFirst(".\(name).merge-".count)) else { continue }
            try? FileManager.default.removeItem(atPath: parent + "/" + leftover)
        }
        do throws(ImageTableError) {
            try Directories.make(parent)
        } catch {
            throw Directories.failure(error, making: "the directory of the output", path: path)
        }
        guard mkdir(staging, 0o755) == 0 else {
            // Named by the output, beside which it was to be: the staging name means nothing to
            // people. The system's words, not Foundation's ("the operation could not be completed").
            let error = ImageTableError.system("mkdir", path: path)
            throw ImageTableError(error.code == .noSpace ? .noSpace : .outputFailed,
                                  "cannot create a staging directory beside it: \(error.message)", path: path, errno: error.errno)
        }
    }

    /// What a merge's output may hold besides the marker and its tables: a bake into it writes
    /// its state there (and the next bake fingerprints every source again without it).
    static let bakeStateNames = Set(([""] + BakeState.companionSuffixes).map { BakeState.fileName + $0 })

    /// Refuses an existing output that a merge may not replace: one without the marker, or one
    /// holding anything but the bake state and tables (with their lock files and what a killed
    /// writer left, `.NAME.imagetable.tmp-…`), each a file, of the merge before (its marker lists
    /// them; one that lists none vouches for none) or of this one. The replaced set is deleted
    /// whole, and a merge's output is also where people bake, export from and leave notes: a file
    /// of theirs there (`NOTES.txt`, a directory, another manifest's tables baked there with
    /// `--output`) was deleted without a word.
    ///
    /// - Parameters:
    ///   - path: the output directory, which exists.
    ///   - writing: the file names of the tables the merge writes.
    /// - Throws: ``ImageTableError`` `output-failed`, or `io` when it cannot be listed.
    static func checkReplaceable(_ path: String, writing: Set<String>) throws(ImageTableError) {
        guard let listing = DirectoryListing.names(in: path) else {
            throw ImageTableError(.io, "cannot list the directory: \(String(cString: strerror(errno)))", path: path)
        }
        var names: [String] = []
        for entry in listing {
            switch entry {
            case .utf8(let name): names.append(name)
            case .notUTF8(_, let printable):
                throw ImageTableError(.outputFailed, "holds '\(printable)', which no merge wrote, and a merge replaces the whole "
                                      + "directory; move it, or give another directory", path: path)
            }
        }
        guard !names.isEmpty else { return }
        guard names.contains(Self.markerName) else {
            throw ImageTableError(.outputFailed, "exists and was not made by imagetable merge, whose output replaces the whole "
                                  + "directory; give a new or empty directory", path: path)
        }
        // By bytes: as Strings, `\u{212A}.imagetable` (KELVIN SIGN) is `K.imagetable`. A marker
        // that lists no tables (unreadable, or a build's before the list) vouches for none.
        let merged = Set((writing.union(Self.markedTables(in: path) ?? [])).map { Array($0.utf8) })
        for name in names.sorted() {
            var entry = stat()
            let isFile = lstat(path + "/" + name, &entry) == 0 && entry.st_mode & S_IFMT == S_IFREG
            let table = Self.tableFileName(of: name)
            guard isFile, name == Self.markerName || Self.bakeStateNames.contains(name)
                    || table.map({ merged.contains(Array($0.utf8)) }) == true else {
                throw ImageTableError(.outputFailed, "holds '\(PrintableText.escaped(name))', which is no table of a merge's and would "
                                      + "be deleted with the set it replaces; move it, or give another directory", path: path)
            }
        }
    }

    /// The table a file in a set belongs to: `T.imagetable` of itself, its lock file
    /// `T.imagetable.lock` and a killed writer's `.T.imagetable.tmp-…`; `nil` for anything else.
    static func tableFileName(of name: String) -> String? {
        if name.hasSuffix(".imagetable") { return name }
        if name.hasSuffix(".imagetable.lock") { return String(name.dropLast(".lock".count)) }
        if name.hasPrefix("."), let range = name.range(of: ".imagetable.tmp-") {
            return String(name.dropFirst()[..<range.lowerBound]) + ".imagetable"
        }
        return nil
    }

    /// The marker's contents: what a merge of `inputs` directories (`shards` of a split, if
    /// they are) wrote, its tables listed, so that the next merge knows which tables are its own.
    static func marker(inputs: Int, shards: Int?, tables: [String]) -> String {
        var fields: [String: Any] = ["version": 1, "inputs": inputs, "tables": tables.sorted()]
        if let shards { fields["shards"] = shards }
        let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// The tables the marker in `directory` lists, or `nil` when it lists none (a build before
    /// the list) or cannot be read.
    static func markedTables(in directory: String) -> Set<String>? {
        guard let data = FileManager.default.contents(atPath: directory + "/" + markerName),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let tables = object["tables"] as? [String] else { return nil }
        return Set(tables)
    }

    /// The path of a table in the staging directory.
    func staged(_ name: String) -> String { staging + "/" + name }

    /// Marks the staging directory as a merge's output, syncs it, and puts it in place of the
    /// output in one step.
    ///
    /// - Parameters:
    ///   - marker: the marker file's contents.
    ///   - lockTimeout: seconds to wait for writers of the old set's tables.
    ///   - stopRequested: asked last, before the new set is put in place: an error to stop with
    ///     instead (an interrupt), or `nil`.
    /// - Throws: ``ImageTableError``: `locked` when a writer keeps an old table, `no-space` for
    ///   a marker a full disk cannot hold, `output-failed`, or what `stopRequested` gave.
    func commit(marker: String, lockTimeout: Double, stopRequested: () -> ImageTableError? = { nil }) throws(ImageTableError) {
        do throws(ImageTableError) {
            try ExportFiles.create(staging + "/" + Self.markerName, holding: Data(marker.utf8), mode: 0o644)
        } catch {
            // Named by the output: the staging directory is gone by the time this is reported. A
            // full disk is `no-space`, as it is for the tables (it was `output-failed`, in
            // Foundation's words: "The operation could not be completed").
            throw ImageTableError(error.code == .noSpace ? .noSpace : .outputFailed, "cannot write the merge marker: \(error.message)",
                                  path: path, errno: error.errno)
        }
        Self.sync(staging)
        TestHook.run("merge-staged", path: staging)
        if let stop = stopRequested() { throw stop }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            guard rename(staging, path) == 0 else { throw ImageTableError.system("rename", path: path).with(.outputFailed) }
            Self.sync(Directories.parent(of: path))
            return
        }
        // Before the locks too: a refused merge neither waits for a writer nor leaves lock files.
        try Self.checkReplaceable(path, writing: writing)
        // No writer may be inside a table of the old set when it goes, nor wait to enter one.
        let locks = try TableWriterLock.all(in: path, timeout: lockTimeout)
        defer { locks.forEach { $0.release() } }
        // Again, under the locks: what someone put there while the merge worked or waited for
        // them would go with the old set.
        try Self.checkReplaceable(path, writing: writing)
        do {
            try AtomicRename.exchange(staging, path)
        } catch where [EINVAL, ENOSYS, ENOTSUP, EOPNOTSUPP].contains(error.errno ?? 0) {
            // A file system that cannot exchange two directories (NFS, some FUSE ones): two
            // renames. A reader that opens the set in between finds no table and retries
            // (`ImageTableReader.openSet`); a kill in between leaves the old set beside the output.
            let old = staging + ".old"
            guard rename(path, old) == 0 else { throw ImageTableError.system("rename", path: path).with(.outputFailed) }
            guard rename(staging, path) == 0 else {
                let failure = ImageTableError.system("rename", path: path).with(.outputFailed)
                _ = rename(old, path)
                throw failure
            }
            try? FileManager.default.removeItem(atPath: old)
        } catch {
            throw error.with(.outputFailed)
        }
        Self.sync(Directories.parent(of: path))
        TestHook.run("merge-exchanged", path: path)
        try? FileManager.default.removeItem(atPath: staging)
    }

    /// Deletes the staging directory after a failure.
    func discard() { try? FileManager.default.removeItem(atPath: staging) }

    /// `fsync` of a directory, so the names in it (the tables, a rename) reach the disk.
    static func sync(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}

extension ImageTableError {
    /// The same error with another code: a system call's failure reported as what it stopped.
    func with(_ code: Code) -> ImageTableError {
        code == self.code || self.code == .noSpace ? self : ImageTableError(code, message, path: path, key: key, cause: cause, errno: errno)
    }
}
