import Foundation

/// A format at one scale: everything that decides one table's file name, layout and pixels.
///
/// This is the one model of a table format. The manifest produces these (one per format and
/// scale), the bake renders and opens tables with them, the runtime cache serves them, and the
/// tools describe them. The table's header records its ``parametersHash``: a table on disk whose
/// hash differs from the format it is opened with holds other pixels, and is rebuilt empty. Since
/// every party derives the hash from this one type, a field cannot be added on one side only.
public struct TableFormat: Sendable, Hashable {
    /// The format's name: 1 … 63 UTF-8 bytes, no `@`, `/` or NUL; the base of the file name.
    public var name: String
    /// The family the format belongs to: formats whose tables share their source images.
    public var family: String
    /// The scale the pixel size was made for (2 for `@2x`); part of the file name, not of the hash.
    public var scale: Int
    /// Slot width in pixels.
    public var width: Int
    /// Slot height in pixels.
    public var height: Int
    /// The pixel style of every slot.
    public var style: PixelStyle
    /// The table's capacity: FastImageCache's `maximumCount`, a hard cap.
    public var capacity: Int
    /// Who may read the file.
    public var protection: ProtectionMode
    /// How a source is drawn into a slot: fit, crop, background, corner radius, upscaling.
    public var rendering: RenderingOptions
    /// The version of the drawing code the pixels come from; see ``pipelineRenderingVersion``.
    public var renderingVersion: Int

    /// The rendering version of the pixel pipeline compiled into this build. Bumped whenever a
    /// change makes the pipeline draw different pixels for the same source and format, so that
    /// tables drawn by the old code are rebuilt rather than mixed with new pixels. Bakes refuse
    /// workers compiled with another version.
    public static let pipelineRenderingVersion = 9

    /// Creates a format.
    ///
    /// - Parameters:
    ///   - name: the format's name.
    ///   - family: the family's name; empty by default.
    ///   - width: slot width in pixels.
    ///   - height: slot height in pixels.
    ///   - style: the pixel style.
    ///   - capacity: the maximum number of entries.
    ///   - protection: who may read the file; `.none` (0644) by default.
    ///   - scale: the scale the pixel size is for; 1 by default.
    ///   - rendering: how sources are drawn; the defaults by default.
    ///   - renderingVersion: the drawing code's version; this build's pipeline by default.
    public init(name: String, family: String = "", width: Int, height: Int, style: PixelStyle, capacity: Int,
                protection: ProtectionMode = .none, scale: Int = 1, rendering: RenderingOptions = RenderingOptions(),
                renderingVersion: Int = TableFormat.pipelineRenderingVersion) {
        self.name = name
        self.family = family
        self.scale = scale
        self.width = width
        self.height = height
        self.style = style
        self.capacity = capacity
        self.protection = protection
        self.rendering = rendering
        self.renderingVersion = renderingVersion
    }

    /// What requests and file names call the format: `name` at scale 1, `name@2x` at scale 2, as
    /// Apple names image assets. Names cannot contain `@`, so identifiers never collide.
    public var id: String { scale == 1 ? name : "\(name)@\(scale)x" }

    /// The table file's name: ``id`` + `.imagetable`.
    public var fileName: String { id + ".imagetable" }

    /// The rendering signature of `docs/FORMAT.md`: the rendering version and every rendering
    /// option, as in `pipeline=1;fit=cover;crop=centre;background=#ffffffff;radius=0;upscale=0`.
    public var renderingSignature: String { "pipeline=\(renderingVersion);" + rendering.signatureFields }

    /// The canonical parameter string of `docs/FORMAT.md`, "Parameter hash".
    public var canonicalParameters: String {
        "imagetable/1\nname=\(name)\nfamily=\(family)\nwidth=\(width)\nheight=\(height)\n"
            + "style=\(style.rawValue)\ncapacity=\(capacity)\nprotection=\(protection.rawValue)\n"
            + "rendering=\(renderingSignature)\n"
    }

    /// The first 16 bytes of the SHA-1 of ``canonicalParameters``: what the header records.
    public var parametersHash: [UInt8] {
        Array(SHA1.digest(Array(canonicalParameters.utf8)).prefix(16))
    }

    /// The layout this format implies at a page size.
    ///
    /// - Parameter pageSize: slot alignment; this machine's page size by default.
    /// - Throws: ``ImageTableError`` (`invalidLayout`) when the size or capacity is out of range.
    public func layout(pageSize: Int = TableLayout.systemPageSize) throws(ImageTableError) -> TableLayout {
        try TableLayout(width: width, height: height, style: style, capacity: capacity, pageSize: pageSize)
    }

    /// `150x150 32BitBGRA max 400 none`: the fields a table header records, for messages.
    public var summary: String { "\(width)x\(height) \(style.rawValue) max \(capacity) \(protection.rawValue)" }

    /// Checks the names and scale; ``layout(pageSize:)`` checks the rest.
    ///
    /// - Throws: ``ImageTableError`` (`invalidArgument`).
    public func validate() throws(ImageTableError) {
        guard (1...TableLimits.maxNameBytes).contains(name.utf8.count) else {
            throw ImageTableError(.invalidArgument, "format name must be 1…\(TableLimits.maxNameBytes) UTF-8 bytes")
        }
        guard family.utf8.count <= TableLimits.maxNameBytes else {
            throw ImageTableError(.invalidArgument, "family name must be at most \(TableLimits.maxNameBytes) UTF-8 bytes")
        }
        // A line break would let two formats share one canonical parameter string.
        guard !name.utf8.contains(where: { $0 == 0 || $0 == 0x0A }), !family.utf8.contains(where: { $0 == 0 || $0 == 0x0A }) else {
            throw ImageTableError(.invalidArgument, "names must not contain NUL or line breaks")
        }
        guard !name.contains("@"), !name.contains("/") else {
            throw ImageTableError(.invalidArgument, "format name '\(PrintableText.escaped(name))' must not contain '@' or '/'")
        }
        guard (1...64).contains(scale) else {
            throw ImageTableError(.invalidArgument, "scale \(scale) is outside 1…64")
        }
        guard rendering.cornerRadius.isFinite, rendering.cornerRadius >= 0 else {
            throw ImageTableError(.invalidArgument, "corner radius \(rendering.cornerRadius) is not a finite number ≥ 0")
        }
    }
}
