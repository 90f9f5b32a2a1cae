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
    /// The largest source in bytes; larger is refused with `source-too-large` before reading it.
    /// Default 1 GiB.
    public var maxSourceBytes: Int
    /// How strictly decoders treat damaged data; ``FailLevel/error`` by default.
    public var failOn: FailLevel

    /// sharp's default pixel limit, 0x3FFF².
    public static let defaultMaxPixels = 268_402_689

    /// Creates options.
    ///
    /// - Parameters:
    ///   - maxPixels: the pixel limit; ``defaultMaxPixels`` by default.
    ///   - maxSourceBytes: the byte limit; 1 GiB by default.
    ///   - failOn: the decoder strictness; ``FailLevel/error`` by default.
    public init(maxPixels: Int = DecodeOptions.defaultMaxPixels, maxSourceBytes: Int = 1 << 30, failOn: FailLevel = .error) {
        self.maxPixels = maxPixels
        self.maxSourceBytes = maxSourceBytes
        self.failOn = failOn
    }
}
