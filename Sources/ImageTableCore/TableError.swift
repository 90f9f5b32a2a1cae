/// An error from the table core: a stable code, a message for people, the file it concerns and,
/// where a system call failed, its `errno`.
///
/// The CLI prints these compiler-style (`tables/small.imagetable: error: … [code]`) and as JSON.
public struct TableError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable identifiers for each kind of failure; the raw values appear in CLI output.
    public enum Code: String, Sendable {
        /// The requested layout is out of range or overflows.
        case invalidLayout = "invalid-layout"
        /// A descriptor field (name, key, rectangle) is invalid.
        case invalidArgument = "invalid-argument"
        /// The file is not an image table at all (wrong magic).
        case notATable = "not-a-table"
        /// The header or an index record is damaged or inconsistent.
        case corrupt = "corrupt"
        /// The table was written by a newer, unknown format version.
        case unsupportedVersion = "unsupported-version"
        /// The file's permissions, type or link count make it unsafe to use.
        case insecureFile = "insecure-file"
        /// Another process holds the writer lock.
        case locked = "locked"
        /// A system call failed (see `errno`).
        case io = "io"
        /// The disk is full or a file size limit was hit.
        case noSpace = "no-space"
        /// The entry changed under a reader too many times in a row, or every slot is reserved.
        case busy = "busy"
        /// A write that may not evict found the table full.
        case full = "full"
        /// The table handle was closed, or opened read-only and asked to write.
        case notWritable = "not-writable"
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence for people; it names the cause and, where there is one, the remedy.
    public let message: String
    /// The file concerned, when there is one.
    public let path: String?
    /// The system error number, when a system call failed.
    public let errno: Int32?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: the kind of failure.
    ///   - message: what went wrong, for people.
    ///   - path: the file concerned.
    ///   - errno: the system error number, when a system call failed.
    public init(_ code: Code, _ message: String, path: String? = nil, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.errno = errno
    }

    /// `path: error: message [code]`, as the CLI prints it.
    public var description: String {
        let location = path.map { "\($0): " } ?? ""
        return "\(location)error: \(message) [\(code.rawValue)]"
    }

    /// The same error attributed to `path`.
    func at(_ path: String) -> TableError { TableError(code, message, path: path, errno: errno) }
}
