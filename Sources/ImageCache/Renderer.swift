import ImageTableCore

/// Draws a source into table slots: what the cache runs on a miss.
///
/// `ImageCacheVips.VipsRenderer` is the libvips pipeline the bake uses (one decode, every member,
/// the bake's exact pixels). An application that decodes images itself (with the platform's
/// codecs, say) implements this instead, and then links neither libvips nor a YAML parser: the
/// `ImageCache` product depends on the table core alone.
///
/// The cache calls it on its render threads (never on Swift's cooperative pool), at most
/// `Configuration.renderThreads` at a time, each call with one source and one target per format
/// to fill.
public protocol Renderer: Sendable {
    /// Draws `source` into every target.
    ///
    /// Each target's memory holds `format.height` rows, `bytesPerRow` apart, to be filled with
    /// `format.width` pixels in `format.style` (`docs/FORMAT.md`, "Pixel styles"; the row padding
    /// set to zero), drawn as `format.rendering` says.
    ///
    /// - Parameters:
    ///   - source: the encoded image, as the ``SourceProvider`` handed it over.
    ///   - targets: one per format to fill.
    /// - Returns: each target's content rectangle, in order: the part of the slot the image
    ///   covers (the whole slot but for `inside` fits).
    /// - Throws: `ImageTableError` with a source code (`truncated`, `unsupported-format`…);
    ///   it reaches the request unchanged, and no entry is evicted for it.
    func render(_ source: SourceImage, into targets: [RenderTarget]) throws(ImageTableError) -> [PixelRect]

    /// Draws `source` into every target as when every format of its family is drawn.
    ///
    /// The cache draws only the formats of a family that lack a fresh entry (or, by
    /// `shouldProcessAllFormatsInFamily`, only those asked for). A renderer whose pixels for one
    /// format depend on the others it draws at once (the libvips pipeline decodes once, at the
    /// size that covers the largest member) lets `family` shape the decode, so that an entry
    /// does not come out a few levels different for having been drawn alone; the default calls
    /// ``render(_:into:)``, for renderers that draw each format on its own.
    ///
    /// - Parameters:
    ///   - source: the encoded image, as the ``SourceProvider`` handed it over.
    ///   - targets: one per format to fill.
    ///   - family: every format of the targets' family, the targets' own among them.
    /// - Returns: each target's content rectangle, in order.
    /// - Throws: as ``render(_:into:)``.
    func render(_ source: SourceImage, into targets: [RenderTarget], family: [TableFormat]) throws(ImageTableError) -> [PixelRect]

    /// Whether a format's pixels depend on the family's other formats, as the libvips pipeline's
    /// do: the cache then records the family's tag (`FamilyTag`) in each entry (a bake draws again
    /// an entry drawn beside other formats than its manifest's), else `FamilyTag.unknown`.
    /// `false` by default.
    var drawsWithFamily: Bool { get }
}

extension Renderer {
    /// Calls ``render(_:into:)``: a renderer that draws each format on its own needs no family.
    ///
    /// - Parameters:
    ///   - source: the encoded image.
    ///   - targets: one per format to fill.
    ///   - family: every format of the targets' family; not used.
    /// - Returns: each target's content rectangle, in order.
    /// - Throws: as ``render(_:into:)``.
    public func render(_ source: SourceImage, into targets: [RenderTarget], family: [TableFormat]) throws(ImageTableError) -> [PixelRect] {
        try render(source, into: targets)
    }

    /// `false`: each format drawn on its own.
    public var drawsWithFamily: Bool { false }
}
