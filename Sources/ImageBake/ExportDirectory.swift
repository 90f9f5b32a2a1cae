import CTableSupport
import Foundation
import ImageManifest
import ImageTableCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The destination of an export, replaced whole: the new set of files is written into a hidden
/// staging directory beside it, then the two are swapped in one `rename`, so that another
/// process looking at the path sees the old set or the new one, never a mix and never neither.
struct ExportDirectory {
    /// The path as given, without trailing slashes.
    let path: String
    /// Its parent and its last component.
    let parent: String
    let name: String

    /// Checks `path` as an export destination.
    ///
    /// - Parameter path: the directory to replace.
    /// - Throws: ``ImageTableError`` `notAnExport` when it exists and is not an earlier export
    ///   (or an empty directory): an export replaces everything in it, so it must not be a
    ///   directory of other files, such as the tables the bake writes; `invalidArgument` for a
    ///   path with no last component to replace (`/`, `.`, `..`).
    init(_ path: String) throws(ImageTableError) {
        // By bytes (``PathBytes``): `--to "e/\u{301}x"` was cut before `e`.
        let trimmed = String(PathBytes.trimmingTrailingSlashes(path))
        self.path = trimmed
        name = String(PathBytes.lastName(trimmed))
        parent = Directories.parent(of: trimmed)
        guard !name.isEmpty, !PathBytes.same(name, "."), !PathBytes.same(name, "..") else {
            throw ImageTableError(.invalidArgument, "an export replaces a directory by name; give one, not '\(path)'", path: path)
        }
        try checkReplaceable()
    }

    /// Refuses a destination that holds anything but an earlier export.
    private func checkReplaceable() throws(ImageTableError) {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            let e = errno
            if e == ENOTDIR {
                // A file above it: the directories above are made (and refused) as makeStaging
                // makes them, naming the part in the way ("lstat failed: Not a directory").
                do throws(ImageTableError) {
                    try Directories.make(parent)
                } catch {
                    throw Directories.failure(error, making: "the directory", path: path)
                }
            }
            guard e == ENOENT else { throw ImageTableError.system("lstat", path: path, errno: e) }
            return
        }
        if st.st_mode & S_IFMT == S_IFLNK {
            // The rename would replace the link, not the directory readers reach through it.
            // Named from here: a relative target is relative to the link's directory.
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)).map { target in
                " (\(target.hasPrefix("/") || parent == "." ? target : parent + "/" + target))"
            } ?? ""
            throw ImageTableError(.notAnExport, "is a symbolic link, which an export would replace rather than the directory it "
                                  + "points to; give the directory it points to\(target)", path: path)
        }
        guard st.st_mode & S_IFMT == S_IFDIR else {
            throw ImageTableError(.notAnExport, "exists and is not a directory; an export only replaces a directory it wrote", path: path)
        }
        // Said before any work: a mount point (a volume) cannot be replaced by a rename.
        var above = stat()
        if stat(parent, &above) == 0, st.st_dev != above.st_dev {
            throw ImageTableError(.notAnExport, "is a mount point, which an export cannot replace in one step; give a directory "
                                  + "inside it, such as \(path)/tables, and point readers there", path: path)
        }
        // Every name, one that is not UTF-8 as its printable form (`x\xFF`): no export wrote it,
        // and Foundation named it with U+FFFD.
        guard let listing = DirectoryListing.names(in: path) else {
            throw ImageTableError(.io, "cannot list the directory: \(String(cString: strerror(errno)))", path: path)
        }
        let names = listing.map { name in
            switch name {
            case .utf8(let text): text
            case .notUTF8(_, let printable): printable
            }
        }
        guard !names.isEmpty else { return }
        guard let index = ExportIndex.read(directory: path) else {
            throw ImageTableError(.notAnExport, "is not an earlier export (it has no \(ExportIndex.fileName) of one), so it is not "
                                  + "replaced: an export replaces everything in its directory; name a new or empty one", path: path)
        }
        // A table's lock file is made by whatever opened the table to write or to read it under
        // its lock (the cache, `merge`, `export --output`), not by hand: it goes with the set.
        let tables = Set(index.tables.map(\.file))
        let listed = tables.union([ExportIndex.fileName]).union(tables.map { $0 + ".lock" })
        if let other = names.sorted().first(where: { !listed.contains($0) }) {
            throw ImageTableError(.notAnExport, "holds '\(PrintableText.escaped(other))', which the export there did not write, "
                                  + "so it is not replaced", path: path)
        }
        // Only files: an index edited by hand (or a table's name made a directory since) must not
        // make everything below such a name go with the set.
        for name in names.sorted() {
            var entry = stat()
            guard lstat(path + "/" + name, &entry) == 0, entry.st_mode & S_IFMT != S_IFREG else { continue }
            throw ImageTableError(.notAnExport, "holds '\(PrintableText.escaped(name))', which is not a file, so it is not the "
                                  + "export's and the directory is not replaced", path: path)
        }
    }

    /// The prefix of staging directories, and of the old set while it is removed.
    private var stagingPrefix: String { ".\(name).export-" }

    /// Creates an empty staging directory beside the destination (and the directories above it
    /// that are missing), after removing those that exports which were killed left behind.
    ///
    /// - Returns: its path.
    /// - Throws: ``ImageTableError`` when it cannot be created.
    func makeStaging() throws(ImageTableError) -> String {
        do throws(ImageTableError) {
            try Directories.make(parent)
        } catch {
            throw Directories.failure(error, making: "the directory", path: parent)
        }
        removeAbandonedStaging()
        let staging = "\(parent)/\(stagingPrefix)\(StagingOwner.current)-\(UInt32.random(in: 0...UInt32.max))"
        guard mkdir(staging, 0o700) == 0 else {
            // Named as given: the staging directory's name changes with every run.
            let error = ImageTableError.system("mkdir", path: staging)
            let name = String(PathBytes.lastName(staging))
            throw ImageTableError(error.code, "cannot make the export's staging directory beside it (\(name) in \(parent)): \(error.message)",
                                  path: path, errno: error.errno)
        }
        return staging
    }

    /// Removes staging directories whose export process is gone; those of a live export (two
    /// exports to one destination may run at once) are left alone.
    private func removeAbandonedStaging() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent) else { return }
        for name in names where name.hasPrefix(stagingPrefix) && !StagingOwner.mayBeWriting(name.dropFirst(stagingPrefix.count)) {
            try? FileManager.default.removeItem(atPath: "\(parent)/\(name)")
        }
    }

    /// Puts `staging` at the destination's path in one step, then removes what was there.
    ///
    /// Where the file system cannot swap two directories (`RENAME_EXCHANGE` is refused), the
    /// old one is renamed aside first: then, for a moment, the path names nothing, but still
    /// never a mix.
    ///
    /// No writer may be inside a table of the old set when it goes (a runtime cache opens an
    /// export's tables as its own), nor wait to enter one: their locks are taken first, as
    /// `merge` takes them, and held until the swap.
    ///
    /// - Parameters:
    ///   - staging: a complete, synced staging directory from ``makeStaging()``.
    ///   - lockTimeout: seconds to wait for a writer of the old set's tables; then `locked`.
    /// - Throws: ``ImageTableError`` `locked`, or when neither rename works; the staging
    ///   directory is removed.
    func install(_ staging: String, lockTimeout: Double) throws(ImageTableError) {
        let locks: [TableWriterLock]
        do throws(ImageTableError) {
            locks = try TableWriterLock.all(in: path, timeout: lockTimeout)
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            throw error
        }
        defer { locks.forEach { $0.release() } }
        var st = stat()
        if lstat(path, &st) != 0 {
            guard rename(staging, path) == 0 else {
                let error = ImageTableError.system("rename", path: path)
                try? FileManager.default.removeItem(atPath: staging)
                throw error
            }
        } else if itc_exchange(staging, path) != 0 {
            // `staging` keeps the new set until the old one is out of the way.
            let aside = staging + ".old"
            guard rename(path, aside) == 0 else {
                let error = ImageTableError.system("rename", path: path)
                try? FileManager.default.removeItem(atPath: staging)
                throw error
            }
            guard rename(staging, path) == 0 else {
                let error = ImageTableError.system("rename", path: path)
                _ = rename(aside, path)
                try? FileManager.default.removeItem(atPath: staging)
                throw error
            }
            try? FileManager.default.removeItem(atPath: aside)
        } else {
            // After the swap `staging` names the old set.
            try? FileManager.default.removeItem(atPath: staging)
        }
        ExportFiles.sync(parent)
    }
}
