import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file's identity on its file system: what stays the same while it is renamed or rewritten in
/// place, and differs for the new file a rename puts at its path.
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64

    /// The identity of the file open on `descriptor`, or `nil` when `fstat` fails.
    init?(descriptor: Int32) {
        var st = stat()
        guard fstat(descriptor, &st) == 0 else { return nil }
        self.init(st)
    }

    /// The identity of the file `path` names now, without following a final symbolic link (the
    /// reader never follows one), or `nil` when it names nothing.
    init?(path: String) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        self.init(st)
    }

    private init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
    }
}

extension ImageTableReader {
    /// Whether ``path`` now names another file than the one this reader has open, or nothing.
    ///
    /// Writers never replace a table's contents wholesale in place: a bake that rebuilds a table
    /// writes a new file and renames it over the old one, and `imagetable export` swaps a whole
    /// directory of tables at once. A reader keeps the old file mapped and goes on reading it,
    /// consistently, until it reopens. This is how it learns that it should: one `lstat` of the
    /// path, compared with the device and inode of the open file. The comparison cannot be
    /// fooled by a new file that reuses the inode number, since the open file keeps its inode
    /// in use. A chmod or a writer publishing entries in place does not count as a replacement
    /// (those a reader sees anyway; see ``refreshIfChanged()``).
    public var isReplaced: Bool {
        guard let identity else { return true }
        return FileIdentity(path: path) != identity
    }

    /// Opens whatever ``path`` names now, as a new reader; this one stays valid, on the file it
    /// has open, until it is released.
    ///
    /// - Returns: a reader of the current file.
    /// - Throws: ``ImageTableError``, as ``init(path:planning:)`` does (`notFound` when the path names
    ///   nothing).
    public func reopen() throws(ImageTableError) -> ImageTableReader {
        try ImageTableReader(path: path)
    }

    /// Opens several tables that are replaced together, such as an export directory that
    /// `imagetable export` swaps whole, so that every reader returned is of the same set.
    ///
    /// The tables are opened one after the other, then each path is checked with
    /// ``isReplaced``: if none was replaced, no replacement happened between the first open
    /// and the last check, so every file came from one set. Otherwise, or when a path named
    /// nothing for a moment (a file system that cannot swap directories atomically), it tries
    /// again.
    ///
    /// - Parameters:
    ///   - paths: the tables.
    ///   - attempts: how many times to try before giving up.
    /// - Returns: one reader per path, in order.
    /// - Throws: ``ImageTableError`` `busy` when the set kept being replaced `attempts` times in
    ///   a row; otherwise what ``init(path:planning:)`` throws.
    public static func openSet(paths: [String], attempts: Int = 8) throws(ImageTableError) -> [ImageTableReader] {
        for attempt in 1...max(1, attempts) {
            do throws(ImageTableError) {
                let readers = try paths.map { path throws(ImageTableError) in try ImageTableReader(path: path) }
                if !readers.contains(where: \.isReplaced) { return readers }
            } catch let error where error.code == .notFound && attempt < attempts {
                continue
            }
        }
        throw ImageTableError(.busy, "the tables were replaced while they were opened, \(attempts) times in a row",
                              path: paths.first)
    }
}
