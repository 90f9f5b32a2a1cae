import ImagePipeline
import ImageTableCore

/// Why the cache could not deliver or store an image: a stable code, a sentence for people, the
/// key and format concerned, and the lower layer's own error where there was one.
///
/// Every failure of ``ImageCache`` is one of these (typed throws). A failure concerns one
/// request: the next request for the same entity starts afresh, so a source that failed once is
/// fetched again rather than remembered as bad.
public struct CacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is; the raw value is a stable kebab-case code.
    public enum Code: String, Sendable, CaseIterable, Codable {
        /// No format of that name is configured.
        case unknownFormat = "unknown-format"
        /// The request cannot work: a key longer than a table allows, an empty configuration,
        /// two formats with the same identifier.
        case invalidRequest = "invalid-request"
        /// The ``SourceProvider`` threw; ``CacheError/underlying`` holds its error's text.
        case sourceUnavailable = "source-unavailable"
        /// The pipeline could not decode or render the source; ``CacheError/pipelineError``
        /// holds the pipeline's error (`truncated`, `unsupported-format`, …).
        case decodeFailed = "decode-failed"
        /// A table could not be opened, or a slot reserved or published; ``CacheError/tableError``
        /// holds the core's error (`locked`, `no-space`, …).
        case tableUnavailable = "table-unavailable"
        /// The calling task was cancelled while it waited.
        case cancelled
        /// The image was stored, but replaced or evicted by other writes before it could be
        /// returned, three times in a row: the table is far too small for its workload.
        case notStored = "not-stored"
    }

    /// The kind of failure.
    public let code: Code
    /// What went wrong, in one sentence.
    public let message: String
    /// The entity's key, when the failure concerns one.
    public let key: String?
    /// The format's identifier, when the failure concerns one.
    public let format: String?
    /// The pipeline's error, for ``Code/decodeFailed``.
    public let pipelineError: PipelineError?
    /// The table core's error, for ``Code/tableUnavailable``.
    public let tableError: TableError?
    /// The text of the provider's error, for ``Code/sourceUnavailable``. Kept as text because
    /// arbitrary errors are neither `Equatable` nor always `Sendable`.
    public let underlying: String?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: the kind of failure.
    ///   - message: what went wrong.
    ///   - key: the entity's key.
    ///   - format: the format's identifier.
    ///   - pipelineError: the pipeline's error, if it caused this one.
    ///   - tableError: the core's error, if it caused this one.
    ///   - underlying: the text of another error that caused this one.
    public init(_ code: Code, _ message: String, key: String? = nil, format: String? = nil,
                pipelineError: PipelineError? = nil, tableError: TableError? = nil, underlying: String? = nil) {
        self.code = code
        self.message = message
        self.key = key
        self.format = format
        self.pipelineError = pipelineError
        self.tableError = tableError
        self.underlying = underlying
    }

    /// `key [format]: code: message`.
    public var description: String {
        var text = ""
        if let key { text += key }
        if let format { text += text.isEmpty ? "[\(format)]" : " [\(format)]" }
        if !text.isEmpty { text += ": " }
        return text + "\(code.rawValue): \(message)"
    }

    static func cancelled(key: String?, format: String?) -> CacheError {
        CacheError(.cancelled, "the request was cancelled", key: key, format: format)
    }

    static func table(_ error: TableError, key: String?, format: String?) -> CacheError {
        CacheError(.tableUnavailable, error.description, key: key, format: format, tableError: error)
    }

    static func decode(_ error: PipelineError, key: String, format: String?) -> CacheError {
        CacheError(.decodeFailed, error.description, key: key, format: format, pipelineError: error)
    }
}
