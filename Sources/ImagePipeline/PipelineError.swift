/// Why a source could not be rendered: a stable code for summaries and exit codes, a sentence for
/// people, the source it concerns, and libvips' own words when it had any.
///
/// Every failure the pipeline reports is one of these; nothing else escapes
/// ``ImageRenderer/render(_:into:)``. A failure concerns one source only: the renderer stays usable.
public struct PipelineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. The raw value is the stable, kebab-case code that summaries
    /// and JSON output show.
    public enum Code: String, Sendable, CaseIterable, Codable {
        /// The file could not be opened or read: missing, a directory, no permission, I/O error.
        case unreadable
        /// The source has no bytes at all.
        case empty
        /// The source's size in bytes is over ``RenderOptions/maxSourceBytes``.
        case sourceTooLarge = "source-too-large"
        /// No allowed loader recognises the bytes: not an image, or a format that is blocked
        /// (see ``ImageLoader``).
        case unsupportedFormat = "unsupported-format"
        /// The header declares more pixels than ``RenderOptions/maxPixels``; refused before decoding.
        case tooManyPixels = "too-many-pixels"
        /// The image data ends before the image does.
        case truncated
        /// The data is corrupt or the image cannot be decoded for another reason.
        case decodeFailed = "decode-failed"
        /// Resizing, cropping or converting the decoded image failed (a libvips failure after a
        /// good decode).
        case renderFailed = "render-failed"
        /// The request itself is wrong: a member size or destination that cannot work.
        case invalidRequest = "invalid-request"
        /// libvips could not be started.
        case libraryUnavailable = "library-unavailable"
    }

    /// The kind of failure.
    public let code: Code
    /// What went wrong, in one sentence.
    public let message: String
    /// The source concerned: its file path, or the name given with in-memory bytes; `nil` when
    /// the failure concerns no source.
    public let path: String?
    /// libvips' own text (its error buffer, and warnings it logged during the failing call), when
    /// there was any.
    public let cause: String?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: the kind of failure.
    ///   - message: what went wrong.
    ///   - path: the source concerned.
    ///   - cause: libvips' text, if any.
    public init(_ code: Code, _ message: String, path: String? = nil, cause: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.cause = cause.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `path: code: message (libvips: cause)`.
    public var description: String {
        var text = ""
        if let path { text += "\(path): " }
        text += "\(code.rawValue): \(message)"
        if let cause { text += " (libvips: \(cause))" }
        return text
    }
}
