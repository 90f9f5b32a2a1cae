#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every error of this package: a stable code, a sentence for people, where it happened and
/// what it came from.
///
/// One shape from the table core to the command line: the code a system call, libvips or a table
/// gave is carried unchanged through the bake, the worker protocol and the cache to the JSON
/// output, so a script can tell `locked` from `no-space` wherever it happened. Layers add
/// context (a path, a key) but keep the code. The CLI prints these compiler-style
/// (`tables/small.imagetable: error: … [locked]`); `docs/CLI.md` lists every code.
public struct ImageTableError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public let code: Code
    /// A sentence for people; it names the cause and, where there is one, the remedy.
    public let message: String
    /// The file concerned: a table, a source, a manifest, an output file.
    public let path: String?
    /// The entry key concerned: a source's key in a bake, a request's key in the cache.
    public let key: String?
    /// What the failure came from, in the words of the layer below: libvips' error buffer and
    /// warnings, a provider's error. `nil` when there is nothing to add to ``message``.
    public let cause: String?
    /// The system error number, when a system call failed.
    public let errno: Int32?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: the kind of failure.
    ///   - message: what went wrong, for people.
    ///   - path: the file concerned.
    ///   - key: the entry key concerned.
    ///   - cause: the lower layer's own words.
    ///   - errno: the system error number, when a system call failed.
    public init(_ code: Code, _ message: String, path: String? = nil, key: String? = nil, cause: String? = nil,
                errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.key = key
        self.cause = cause.flatMap { $0.isEmpty ? nil : $0 }
        self.errno = errno
    }

    /// `path: error: message [code]`, as the CLI prints it; with a cause, ` (cause)` before the code.
    public var description: String {
        let location = path.map { "\($0): " } ?? ""
        let why = cause.map { " (\($0))" } ?? ""
        return "\(location)error: \(message)\(why) [\(code.rawValue)]"
    }

    /// The same error attributed to `path` (and `key`, when given); code, message and cause kept.
    ///
    /// - Parameters:
    ///   - path: the file concerned.
    ///   - key: the entry key concerned; the error's own when `nil`.
    public func at(_ path: String?, key: String? = nil) -> ImageTableError {
        ImageTableError(code, message, path: path, key: key ?? self.key, cause: cause, errno: errno)
    }

    /// The same error with `context` before its message (`cannot reserve a slot for 'a.jpg': …`).
    ///
    /// - Parameter context: what was being done.
    public func explained(_ context: String) -> ImageTableError {
        ImageTableError(code, "\(context): \(message)", path: path, key: key, cause: cause, errno: errno)
    }

    /// An error from a failed system call: `noSpace` for a full disk or file size limit,
    /// `notFound`, `permissionDenied`, else `io`; the message names the call and errno's text.
    ///
    /// - Parameters:
    ///   - call: the call, as people know it (`open`, `msync`).
    ///   - path: the file concerned.
    ///   - e: the error number (the argument `errno:`); the current `errno` by default.
    public static func system(_ call: String, path: String?, errno e: Int32 = currentErrno) -> ImageTableError {
        let reason = String(cString: strerror(e))
        switch e {
        case EFBIG:
            // Freeing space does not help: a size limit (`ulimit -f`) or the file system's
            // largest file was met.
            return ImageTableError(.noSpace, "\(call) failed: \(reason); the file would pass the largest size this process "
                                   + "may write (ulimit -f) or the file system holds", path: path, errno: e)
        case ENOSPC, EDQUOT:
            return ImageTableError(.noSpace, "\(call) failed: \(reason); free some disk space and try again", path: path, errno: e)
        case ENOENT, ENOTDIR:
            return ImageTableError(.notFound, "\(call) failed: \(reason)", path: path, errno: e)
        case EISDIR:
            // A table, or its lock file, that is a directory: said as `inspect` and `verify` say it.
            return ImageTableError(.isADirectory, "\(call) failed: \(reason)", path: path, errno: e)
        case EACCES, EPERM:
            return ImageTableError(.permissionDenied, "\(call) failed: \(reason)" + (path.map(accessHint) ?? ""), path: path, errno: e)
        default:
            return ImageTableError(.io, "\(call) failed: \(reason)", path: path, errno: e)
        }
    }

    /// Who may write `path` and who asked, for a permission error: a cron job run as another
    /// user than the one who restored the tables said only "Permission denied" of the table,
    /// whichever of the table, its lock file or their directory refused. Names the file, or its
    /// directory when the file is not there, by owner and mode.
    static func accessHint(_ path: String) -> String {
        var st = stat()
        var what = String(PathBytes.lastName(path))
        if stat(path, &st) != 0 {
            let directory = Directories.parent(of: path)
            guard stat(directory, &st) == 0 else { return "" }
            what = "its directory " + directory
        }
        return "; \(what) is owned by uid \(st.st_uid) with mode 0\(String(st.st_mode & 0o7777, radix: 8)), and this process runs as "
            + "uid \(geteuid()): run it as the owner, or change the owner or mode (chown, chmod)"
    }

    /// The calling thread's `errno`, readable where a property named `errno` shadows it.
    public static var currentErrno: Int32 {
        #if canImport(Glibc)
        Glibc.errno
        #else
        Darwin.errno
        #endif
    }
}

extension ImageTableError: Encodable {
    private enum CodingKeys: String, CodingKey { case code, message, path, key, cause }

    /// `{"code", "message", "path", "key", "cause"}`, leaving out the fields that are `nil`: the
    /// shape every `--format json` uses for an error.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(code.rawValue, forKey: .code)
        try c.encode(message, forKey: .message)
        try c.encodeIfPresent(path, forKey: .path)
        try c.encodeIfPresent(key, forKey: .key)
        try c.encodeIfPresent(cause, forKey: .cause)
    }
}
