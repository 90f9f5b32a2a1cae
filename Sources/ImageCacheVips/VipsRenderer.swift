import ImageCache
import ImagePipeline
import ImageTableCore

/// The runtime cache's renderer on the libvips pipeline: the bake's own, so a cache and
/// `imagetable bake` draw the same pixels into the same tables (one decode per source, with
/// shrink-on-load, every member of the family from it).
///
/// Safe from any number of threads: the pipeline serialises what libvips needs serialised.
public struct VipsRenderer: Renderer {
    /// The pipeline, with its decode limits and strictness.
    public let pipeline: ImageRenderer

    /// Creates a renderer.
    ///
    /// - Parameter options: the limits and strictness applied to fetched sources.
    public init(options: DecodeOptions = DecodeOptions()) {
        pipeline = ImageRenderer(options: options)
    }

    /// Draws `source` into every target with one decode.
    ///
    /// - Parameters:
    ///   - source: the encoded image.
    ///   - targets: one per format.
    /// - Returns: each target's content rectangle.
    /// - Throws: the pipeline's `ImageTableError` (`truncated`, `unsupported-format`…).
    public func render(_ source: SourceImage, into targets: [RenderTarget]) throws(ImageTableError) -> [PixelRect] {
        try pipeline.render(source, into: targets).members.map(\.contentRect)
    }

    /// `true`: one decode for the whole family, at the size that covers its largest member.
    public var drawsWithFamily: Bool { true }

    /// Draws `source` into every target with one decode, shaped by the whole family as the
    /// bake's is: the pixels equal those of a render of every format of `family`.
    ///
    /// - Parameters:
    ///   - source: the encoded image.
    ///   - targets: one per format to fill.
    ///   - family: every format of the targets' family.
    /// - Returns: each target's content rectangle.
    /// - Throws: the pipeline's `ImageTableError` (`truncated`, `unsupported-format`…).
    public func render(_ source: SourceImage, into targets: [RenderTarget], family: [TableFormat]) throws(ImageTableError) -> [PixelRect] {
        try pipeline.render(source, into: targets, planningWith: family).members.map(\.contentRect)
    }
}
