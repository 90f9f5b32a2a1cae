import ImageManifest
import ImageTableCore
import RenderModel

/// One format the cache serves: a table of fixed-size slots and how a source is drawn into it.
/// FastImageCache's `FICImageFormat`, at one scale.
///
/// Build it in code, or take it from a manifest (``init(_:scale:)``, ``init(_:)``), which gives
/// exactly the descriptor the bake opens the table with, so the cache and `imagetable bake`
/// share tables.
public struct CacheFormat: Sendable, Hashable {
    /// The format's name; the table file's base name.
    public let name: String
    /// The family: formats drawn from the same source image, decoded once for all of them.
    public let family: String
    /// The scale the pixel size is for; 1 unless the format comes from a manifest with scales.
    public let scale: Int
    /// Pixel size, style and drawing options (fit, crop, background, corner radius, upscale).
    public let spec: MemberSpec
    /// The table's capacity: a hard cap; the least recently used entry makes room.
    public let maximumCount: Int
    /// Who may read the table file.
    public let protection: ProtectionMode

    /// Creates a format.
    ///
    /// - Parameters:
    ///   - name: the format's name: 1…63 UTF-8 bytes, no `@`, `/` or NUL.
    ///   - family: the family it belongs to.
    ///   - spec: pixel size, style and drawing options.
    ///   - maximumCount: the table's capacity.
    ///   - protection: who may read the file; `.none` (0644) by default.
    ///   - scale: the scale `spec`'s pixel size is for; 1 by default.
    public init(name: String, family: String, spec: MemberSpec, maximumCount: Int,
                protection: ProtectionMode = .none, scale: Int = 1) {
        self.name = name
        self.family = family
        self.spec = spec
        self.maximumCount = maximumCount
        self.protection = protection
        self.scale = scale
    }

    /// The format a manifest defines, at one of its scales.
    ///
    /// - Parameters:
    ///   - format: a validated manifest format.
    ///   - scale: one of `format.scales`.
    public init(_ format: Manifest.Format, scale: Int) {
        self.init(name: format.name, family: format.family, spec: format.memberSpec(scale: scale),
                  maximumCount: format.maximumCount, protection: format.protection, scale: scale)
    }

    /// The format of one planned table of a manifest.
    ///
    /// - Parameter table: a table of `Manifest.tables`.
    public init(_ table: PlannedTable) {
        self.init(table.format, scale: table.scale)
    }

    /// What requests name the format by: `name` at scale 1, `name@2x` at scale 2, as the table
    /// files are named.
    public var id: String { scale == 1 ? name : "\(name)@\(scale)x" }

    /// The table file's name: ``id`` + `.imagetable`, as the bake names it.
    public var fileName: String { id + ".imagetable" }

    /// The descriptor the table is opened with. Equal to the bake's for manifest formats: the
    /// rendering signature puts every drawing option and the pipeline version into the table's
    /// parameter hash, so a change to any of them rebuilds the table instead of serving pixels
    /// drawn another way.
    public var descriptor: FormatDescriptor {
        FormatDescriptor(name: name, family: family, width: spec.width, height: spec.height, style: spec.style,
                         capacity: maximumCount, protection: protection, scale: scale,
                         renderingSignature: spec.renderingSignature)
    }

    /// Checks what the table core would only find when opening the table, with a clearer message.
    func validate() throws(CacheError) {
        guard !name.isEmpty, !name.contains("@"), !name.contains("/"), !name.utf8.contains(0) else {
            throw CacheError(.invalidRequest, "format name '\(name)' must be non-empty without '@', '/' or NUL", format: name)
        }
        guard maximumCount > 0 else {
            throw CacheError(.invalidRequest, "maximumCount must be positive, not \(maximumCount)", format: id)
        }
    }
}
