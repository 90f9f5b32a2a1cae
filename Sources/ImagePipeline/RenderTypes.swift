import Foundation
import ImageTableCore

/// Where a source image's bytes come from.
public enum ImageSource: Sendable {
    /// A file, read whole into memory when rendering starts (so a file changed or truncated
    /// meanwhile cannot crash the decoder through a memory map).
    case file(String)
    /// Bytes already in memory (the runtime cache's case); `name` identifies them in errors.
    case data(Data, name: String)

    /// The path or name errors report.
    public var name: String {
        switch self {
        case .file(let path): path
        case .data(_, let name): name
        }
    }
}


/// What rendering one member produced.
public struct MemberResult: Sendable, Equatable {
    /// The part of the slot the image covers: the whole slot except for ``Fit/inside``, where it
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

/// What one ``ImageRenderer/render(_:into:)`` call did.
public struct RenderReport: Sendable, Equatable {
    /// One result per target, in the order given.
    public var members: [MemberResult]
    /// How many times this call decoded the source's pixels: 1 (a call never decodes twice).
    public var decodes: Int
    /// Facts about the source.
    public var source: SourceInfo
}
