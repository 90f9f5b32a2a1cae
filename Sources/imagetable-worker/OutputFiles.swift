import Foundation
import ImageTableCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes output files so that a half-written file never has the final name and nothing lands
/// outside the directory it is meant for.
///
/// Each file is written to a temporary name in its directory and renamed over the final name.
/// Below a directory given by the user, directories are walked with `openat` and `O_NOFOLLOW`: a
/// symbolic link planted inside DIR cannot redirect a write elsewhere.
enum OutputFiles {
    /// Why an output file or directory could not be written: `output-failed`, naming it.
    static func outputFailed(_ path: String, _ message: String) -> ImageTableError {
        ImageTableError(.outputFailed, message, path: path)
    }

    private nonisolated(unsafe) static var counter = 0

    /// Writes `bytes` to `path` (a file named by the user; its directory must exist), or to
    /// standard output when `path` is `-`.
    ///
    /// - Parameters:
    ///   - sparing: the table being read, which `path` must not name.
    /// - Throws: `output-failed` when the file cannot be written, or when `path` names something
    ///   that is not a regular file or is the table `sparing` (see ``checkReplaceable``).
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t, sparing table: String) throws(ImageTableError) {
        if path == "-" {
            guard writeAll(1, bytes) else { throw outputFailed("<stdout>", "write failed: \(reason())") }
            return
        }
        // Cut at the last slash byte: `URL` took `y/\u{301}b.jpg.png` (a slash and a combining
        // accent, one Character) for a file named so in `y/`'s parent.
        let directory = Directories.parent(of: path), name = String(PathBytes.lastName(path))
        let dir = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dir >= 0 else { throw outputFailed(path, "cannot open its directory: \(reason())") }
        defer { close(dir) }
        try write(bytes, named: name, in: dir, displayPath: path, mode: mode, sparing: table)
    }

    /// Writes `bytes` to `components` below `root` (created if missing), creating the
    /// intermediate directories with `directoryMode`.
    ///
    /// - Returns: the path written, `root` joined with `components`.
    static func write(_ bytes: [UInt8], below root: String, components: [String], mode: mode_t,
                      directoryMode: mode_t, sparing table: String) throws(ImageTableError) -> String {
        let display = ([root] + components).joined(separator: "/")
        var dir = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dir >= 0 else { throw outputFailed(root, "cannot open the output directory: \(reason())") }
        defer { close(dir) }
        var walked = root
        for component in components.dropLast() {
            walked += "/" + component
            if mkdirat(dir, component, directoryMode) != 0 && errno != EEXIST {
                throw outputFailed(walked, "cannot create the directory: \(reason())")
            }
            let next = openat(dir, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else {
                let why = errno == ELOOP || errno == ENOTDIR ? "a file or symbolic link is in the way of the directory" : reason()
                throw outputFailed(walked, why)
            }
            close(dir)
            dir = next
        }
        try write(bytes, named: components[components.count - 1], in: dir, displayPath: display, mode: mode, sparing: table)
        return display
    }

    /// Creates `path` and its parents, like `mkdir -p`.
    static func makeDirectory(_ path: String, mode: mode_t) throws(ImageTableError) {
        do throws(ImageTableError) {
            try Directories.make(path, mode: mode)
        } catch {
            throw outputFailed(path, Directories.failure(error, making: "the output directory", path: path).message)
        }
    }

    /// Refuses to replace `name` in `dir` when it is not a regular file or is the table being
    /// read: the rename that puts a file in place replaces whatever has the name, so `-o` naming
    /// a device (`/dev/null`, for root), a FIFO or a symbolic link replaced the node itself with
    /// a PNG, and `-o` naming the table replaced the table.
    private static func checkReplaceable(_ name: String, in dir: Int32, displayPath: String, sparing table: String) throws(ImageTableError) {
        var existing = stat()
        guard fstatat(dir, name, &existing, AT_SYMLINK_NOFOLLOW) == 0 else { return }
        let kind: String? = switch existing.st_mode & S_IFMT {
        case S_IFREG: nil
        case S_IFLNK: "a symbolic link"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFIFO: "a FIFO"
        case S_IFDIR: "a directory"
        default: "not a regular file"
        }
        if let kind {
            throw outputFailed(displayPath, "is \(kind); refusing to replace it with a file (-o - writes to standard output)")
        }
        var read = stat()
        if stat(table, &read) == 0 && read.st_dev == existing.st_dev && read.st_ino == existing.st_ino {
            throw outputFailed(displayPath, "is the table being read; refusing to replace it")
        }
    }

    private static func write(_ bytes: [UInt8], named name: String, in dir: Int32, displayPath: String,
                              mode: mode_t, sparing table: String) throws(ImageTableError) {
        try checkReplaceable(name, in: dir, displayPath: displayPath, sparing: table)
        counter += 1
        let temporary = ".imagetable-\(getpid())-\(counter).tmp"
        let fd = openat(dir, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw outputFailed(displayPath, "cannot create a file next to it: \(reason())") }
        let written = writeAll(fd, bytes)
        let why = reason()
        close(fd)
        guard written else {
            unlinkat(dir, temporary, 0)
            throw outputFailed(displayPath, "write failed: \(why)")
        }
        guard renameat(dir, temporary, dir, name) == 0 else {
            let why = errno == EISDIR ? "a directory has that name" : reason()
            unlinkat(dir, temporary, 0)
            throw outputFailed(displayPath, "cannot put the file in place: \(why)")
        }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { SystemIO.writeAll(fd, $0) == nil }
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
}
