import Foundation

/// Everything that decides a table's layout and pixels: what a writer asks for when it opens a
/// table, and what the header records.
///
/// Two descriptors with the same ``parametersHash`` describe interchangeable tables. A table on
/// disk whose hash differs from the descriptor it is opened with is rebuilt empty.
public struct FormatDescriptor: Sendable, Equatable {
    /// The format's name; also the table file's base name. 1 … 63 UTF-8 bytes.
    public var name: String
    /// The family the format belongs to. 0 … 63 UTF-8 bytes.
    public var family: String
    /// Slot width in pixels.
    public var width: Int
    /// Slot height in pixels.
    public var height: Int
    /// The pixel style.
    public var style: PixelStyle
    /// The table's capacity: FastImageCache's `maximumCount`, a hard cap.
    public var capacity: Int
    /// Who may read the file.
    public var protection: ProtectionMode
    /// The scale the pixel size was made for; informative (a reader's `UIImage.scale`).
    public var scale: Int
    /// An opaque string naming everything else that decides the pixels (fit, crop, background…).
    /// Changing it changes ``parametersHash``, so stale pixels are never reused.
    public var renderingSignature: String

    /// Creates a descriptor.
    ///
    /// - Parameters:
    ///   - name: the format's name.
    ///   - family: the family's name.
    ///   - width: slot width in pixels.
    ///   - height: slot height in pixels.
    ///   - style: the pixel style.
    ///   - capacity: the maximum number of entries.
    ///   - protection: who may read the file.
    ///   - scale: the scale the size was made for.
    ///   - renderingSignature: what else decides the pixels.
    public init(name: String, family: String = "", width: Int, height: Int, style: PixelStyle,
                capacity: Int, protection: ProtectionMode = .none, scale: Int = 1, renderingSignature: String = "") {
        self.name = name
        self.family = family
        self.width = width
        self.height = height
        self.style = style
        self.capacity = capacity
        self.protection = protection
        self.scale = scale
        self.renderingSignature = renderingSignature
    }

    /// The canonical parameter string of `docs/FORMAT.md`, "Parameter hash".
    public var canonicalParameters: String {
        "imagetable/1\nname=\(name)\nfamily=\(family)\nwidth=\(width)\nheight=\(height)\n"
            + "style=\(style.rawValue)\ncapacity=\(capacity)\nprotection=\(protection.rawValue)\n"
            + "rendering=\(renderingSignature)\n"
    }

    /// The first 16 bytes of the SHA-1 of ``canonicalParameters``.
    public var parametersHash: [UInt8] {
        Array(SHA1.digest(Array(canonicalParameters.utf8)).prefix(16))
    }

    /// The layout this descriptor implies on this machine.
    ///
    /// - Throws: ``TableError`` (`invalidLayout`) when the size or capacity is out of range.
    public func layout(pageSize: Int = TableLayout.systemPageSize) throws -> TableLayout {
        try TableLayout(width: width, height: height, style: style, capacity: capacity, pageSize: pageSize)
    }

    /// Checks the names and scale; the layout checks the rest.
    ///
    /// - Throws: ``TableError`` (`invalidArgument`).
    func validate() throws {
        guard (1...TableLimits.maxNameBytes).contains(name.utf8.count) else {
            throw TableError(.invalidArgument, "format name must be 1…\(TableLimits.maxNameBytes) UTF-8 bytes")
        }
        guard family.utf8.count <= TableLimits.maxNameBytes else {
            throw TableError(.invalidArgument, "family name must be at most \(TableLimits.maxNameBytes) UTF-8 bytes")
        }
        guard !name.utf8.contains(0), !family.utf8.contains(0) else {
            throw TableError(.invalidArgument, "names must not contain NUL")
        }
        guard (1...64).contains(scale) else {
            throw TableError(.invalidArgument, "scale \(scale) is outside 1…64")
        }
    }
}
