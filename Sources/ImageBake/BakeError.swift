/// A failure of the bake as a whole (as opposed to one source's failure, which is reported and
/// skipped): a stable code, a message, and the file concerned.
public struct BakeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable identifiers; the raw values appear in CLI and JSON output.
    public enum Code: String, Sendable {
        /// A family's sources directory is missing or unreadable.
        case sourcesUnreadable = "sources-unreadable"
        /// A table could not be created or opened for writing.
        case tableUnavailable = "table-unavailable"
        /// A worker process could not be started or kept failing.
        case workerFailed = "worker-failed"
        /// `--strict`: a source failed.
        case sourceFailed = "source-failed"
    }

    /// What kind of failure.
    public let code: Code
    /// A sentence for people.
    public let message: String
    /// The file concerned.
    public let path: String?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: the kind of failure.
    ///   - message: what went wrong.
    ///   - path: the file concerned.
    public init(_ code: Code, _ message: String, path: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
    }

    /// `path: error: message [code]`.
    public var description: String { "\(path.map { "\($0): " } ?? "")error: \(message) [\(code.rawValue)]" }
}
