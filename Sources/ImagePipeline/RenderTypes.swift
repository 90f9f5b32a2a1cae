import Foundation
import ImageTableCore

/// What rendering one member produced.
public struct MemberResult: Sendable, Equatable {
    /// The part of the slot the image covers: the whole slot except for `Fit.inside`, where it
    /// is the rectangle the fitted image occupies (the rest is transparent or background). Store
    /// it in the entry's index record.
    public var contentRect: PixelRect
}

/// Facts about a source learnt while rendering it.
public struct SourceInfo: Sendable, Equatable {
    /// Width after EXIF auto-rotation, from the header.
    public var width: Int
    /// Height after EXIF auto-rotation, from the header.
    public var height: Int
    /// The libvips loader that read it, for example `jpegload_source`.
    public var loader: String
    /// The EXIF orientation, 1 … 8 (1 when absent).
    public var orientation: Int
    /// Whether the source has an alpha channel.
    public var hasAlpha: Bool
    /// Whether the source embeds an ICC profile (and was colour-managed to sRGB).
    public var hasICCProfile: Bool
    /// Whether the source is CMYK (and was transformed to sRGB).
    public var isCMYK: Bool
    /// The size of the decoded, shrunk-on-load image every member was derived from.
    public var decodedWidth: Int
    /// See ``decodedWidth``.
    public var decodedHeight: Int
}

/// What one ``ImageRenderer/render(_:into:planningWith:)`` call did.
public struct RenderReport: Sendable, Equatable {
    /// One result per target, in the order given.
    public var members: [MemberResult]
    /// How many times this call decoded the source's pixels: 1 (a call never decodes twice).
    public var decodes: Int
    /// Facts about the source.
    public var source: SourceInfo
    /// What the decoder warned about while rendering the source (libjpeg's "Corrupt JPEG data",
    /// libpng's CRC notices…), in order, without repeats; they also reach
    /// ``PipelineRuntime/setWarningHandler(_:)``.
    public var warnings: [String] = []
}
