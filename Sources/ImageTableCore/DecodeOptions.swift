/// How strictly decoders treat damaged data: libvips' `fail_on`. Levels stricter than
/// ``error`` reject more real-world files; ``truncated`` is the most lenient that still refuses
/// files that end early (libvips' own default, `none`, renders their missing part grey and is not
/// offered).
public enum FailLevel: String, Sendable, CaseIterable, Codable {
    /// Fail only on truncated data.
    case truncated
    /// Fail on truncated data and on decoder errors. The default.
    case error
    /// Fail on anything the decoder warns about, too (for example extraneous bytes in a JPEG).
    case warning
}

/// The limits and strictness a renderer applies to untrusted sources, before and while it
/// decodes them. Not part of a table's format: they decide which sources are accepted, never the
/// pixels of one that is.
public struct DecodeOptions: Sendable, Hashable, Codable {
    /// The most pixels (width × height, read from the header before decoding) a source may have;
    /// more is refused with `too-many-pixels`. Default 268,402,689 (0x3FFF², sharp's default).
    public var maxPixels: Int
    /// The largest source in bytes; larger is refused with `source-too-large` from its size,
    /// before any byte is read. A worker holds a source in memory while decoding it, so this
    /// bounds its memory. Default 256 MiB (``defaultMaxSourceBytes``).
    public var maxSourceBytes: Int
    /// How strictly decoders treat damaged data; ``FailLevel/error`` by default.
    public var failOn: FailLevel

    /// sharp's default pixel limit, 0x3FFF².
    public static let defaultMaxPixels = 268_402_689
    /// 256 MiB: more than any JPEG, PNG or WebP of ``defaultMaxPixels`` an encoder writes in
    /// practice, and a bound on a worker's memory far below what a hostile 1 GiB file took.
    public static let defaultMaxSourceBytes = 256 << 20

    /// Creates options.
    ///
    /// - Parameters:
    ///   - maxPixels: the pixel limit; ``defaultMaxPixels`` by default.
    ///   - maxSourceBytes: the byte limit; ``defaultMaxSourceBytes`` by default.
    ///   - failOn: the decoder strictness; ``FailLevel/error`` by default.
    public init(maxPixels: Int = DecodeOptions.defaultMaxPixels, maxSourceBytes: Int = DecodeOptions.defaultMaxSourceBytes,
                failOn: FailLevel = .error) {
        self.maxPixels = maxPixels
        self.maxSourceBytes = maxSourceBytes
        self.failOn = failOn
    }
}
