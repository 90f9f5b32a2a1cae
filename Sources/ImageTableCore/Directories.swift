#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Making directories, with errors that say which part of the path is in the way.
///
/// Foundation's `createDirectory(atPath:withIntermediateDirectories:)` reports "The operation
/// could not be completed. (NSCocoaErrorDomain error 512.)" for a path below a file, and names no
/// part of it; the bake, `extract`, `export` and `merge` printed that.
public enum Directories {
    /// Makes `path` and every missing directory above it, as `mkdir -p` does.
    ///
    /// - Parameters:
    ///   - path: the directory, absolute or relative to the working directory.
    ///   - mode: the mode of the directories made (before the umask).
    /// - Throws: ``ImageTableError`` whose path is the part that could not be made:
    ///   `notADirectory` when something other than a directory has its name, `io` for a link
    ///   that leads nowhere, `invalidArgument` for an empty path, else what `mkdir` failed with
    ///   (``ImageTableError/system(_:path:errno:)``).
    public static func make(_ path: String, mode: mode_t = 0o755) throws(ImageTableError) {
        guard !path.isEmpty else { throw ImageTableError(.invalidArgument, "the directory's path is empty") }
        var prefix = PathBytes.isAbsolute(path) ? "" : "."
        for part in PathBytes.components(path) {
            prefix += "/" + part
            if mkdir(prefix, mode) == 0 { continue }
            let e = ImageTableError.currentErrno
            var info = stat()
            if e == EEXIST, stat(prefix, &info) == 0 {
                if info.st_mode & S_IFMT == S_IFDIR { continue }
                throw ImageTableError(.notADirectory, "\(display(prefix)) exists and is not a directory", path: display(prefix))
            }
            if e == EEXIST, lstat(prefix, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
                // Taken by a link that leads nowhere ("File exists", said mkdir).
                throw ImageTableError(.io, "\(display(prefix)) is a symbolic link to something that does not exist", path: display(prefix))
            }
            throw ImageTableError.system("mkdir", path: display(prefix), errno: e)
        }
    }

    /// `path` made absolute against the working directory, with `.` and `..` folded as text
    /// (links are not followed: the folding `bake --output` and `merge` have always done).
    ///
    /// Foundation's `URL(fileURLWithPath:).standardized` drops a relative path's leading `..`
    /// (`../out` became `<cwd>/out`), which put `merge ../out`'s staging directory in the
    /// working directory, where its rename to `../out` crossed file systems.
    ///
    /// - Parameter path: a path, absolute or relative to the working directory.
    /// - Returns: the absolute path; `path` as it is when the working directory has no path
    ///   (it was deleted), so that whatever uses it fails there rather than at `/`.
    public static func absolute(_ path: String) -> String {
        var full = path
        if !PathBytes.isAbsolute(path) {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            guard let cwd = getcwd(&buffer, buffer.count).map({ String(cString: $0) }) else { return path }
            full = cwd + "/" + path
        }
        var parts: [Substring] = []
        for part in PathBytes.components(full) where !PathBytes.same(part, ".") {
            if PathBytes.same(part, "..") {
                if !parts.isEmpty { parts.removeLast() }
            } else {
                parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }

    /// The directory that holds `path`, as text: `.` for a bare name, `/` for a name at the root;
    /// trailing slashes are ignored (`out/` is held by `.`).
    ///
    /// Foundation's `NSString.deletingLastPathComponent` on Linux dies by SIGILL on a name of one
    /// character (`M`, `M/`, `.`), which made `imagetable merge M …` crash after it had replaced `M`.
    ///
    /// - Parameter path: a path, absolute or relative.
    /// - Returns: the parent directory's path.
    public static func parent(of path: String) -> String {
        // By bytes: a slash that a combining mark follows is one Character with it, which
        // `lastIndex(of: "/")` does not find (`merge "mm/\u{301}x"` made its staging
        // directory in `mm`'s parent's parent, and failed).
        guard let cut = PathBytes.lastSlash(String(PathBytes.trimmingTrailingSlashes(path))) else { return "." }
        let parent = PathBytes.trimmingTrailingSlashes(String(cut.directory))
        return parent.isEmpty ? "/" : String(parent)
    }

    /// `prefix` as the caller wrote its path (without the `./` a relative path is walked from).
    private static func display(_ prefix: String) -> String {
        prefix.hasPrefix("./") ? String(prefix.dropFirst(2)) : prefix
    }

    /// A failure of ``make(_:mode:)`` as the error of making `what`, named `path`:
    /// "cannot create the output directory: tables exists and is not a directory".
    ///
    /// - Parameters:
    ///   - error: what ``make(_:mode:)`` threw.
    ///   - what: the directory's role, such as "the output directory".
    ///   - path: the directory as the user named it.
    public static func failure(_ error: ImageTableError, making what: String, path: String) -> ImageTableError {
        let part = error.path.map { $0 == path || error.message.hasPrefix($0) ? "" : " (\($0))" } ?? ""
        return ImageTableError(error.code, "cannot create \(what): \(error.message)\(part)", path: path, errno: error.errno)
    }
}
