/// Why a worker could not do a job.
public struct WorkerFailure: Sendable, Equatable, Error {
    /// The failure codes a worker reports; the raw values are the documented codes of
    /// `docs/CLI.md`, "Error codes", which the command carries on unchanged.
    public enum Code: String, Sendable, CaseIterable {
        /// The source could not be opened or read.
        case unreadable
        /// The source has no bytes.
        case empty
        /// The source is over the byte limit.
        case sourceTooLarge = "source-too-large"
        /// No allowed loader recognises the source.
        case unsupportedFormat = "unsupported-format"
        /// The source's header declares more pixels than the limit.
        case tooManyPixels = "too-many-pixels"
        /// The source's data ends early.
        case truncated
        /// The source's data is corrupt.
        case decodeFailed = "decode-failed"
        /// libvips failed after a good decode.
        case renderFailed = "render-failed"
        /// The file changed while it was read; nothing was rendered from it.
        case changedWhileReading = "changed-while-reading"
        /// libvips could not start.
        case libraryUnavailable = "library-unavailable"
        /// A destination table was rebuilt, or its slot is no longer reserved with that
        /// generation: not the source's fault, but nothing was rendered.
        case tableChanged = "table-changed"
        /// The worker is from another build: its protocol or rendering version differs.
        case workerMismatch = "worker-mismatch"
        /// A request the worker cannot read or carry out as written (a malformed format, a
        /// destination outside the scratch memory).
        case protocolError = "protocol-error"
    }

    /// What kind of failure.
    public var code: Code
    /// A sentence for people.
    public var message: String
    /// libvips' own words, when it said anything.
    public var cause: String?

    /// Creates a failure.
    ///
    /// - Parameters:
    ///   - code: the kind of failure.
    ///   - message: a sentence for people.
    ///   - cause: the underlying library's text.
    public init(_ code: Code, _ message: String, cause: String? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }
}
