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
}
