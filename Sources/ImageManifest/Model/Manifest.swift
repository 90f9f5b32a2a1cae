import ImageTableCore

/// A validated manifest: what to bake, from where, into which tables.
///
/// Only ``ManifestValidator`` creates one, and only when the file has no errors, so every value
/// is in range, every path is checked and every table's size is known. Paths are absolute.
public struct Manifest: Sendable {
    /// The manifest file's path as the caller named it.
    public let file: String
    /// The absolute directory the manifest's relative paths start from.
    public let directory: String
    /// The manifest format version; always 1.
    public let version: Int
    /// `output` as written.
    public let output: String
    /// The absolute directory the table files go to.
    public let outputPath: String
    /// The families, in manifest order.
    public let families: [Family]
    /// Every table, family by family, format by format, scale by scale.
    public let tables: [PlannedTable]

    /// Every format of every family, in manifest order.
    public var formats: [Format] { families.flatMap(\.formats) }

    /// The sum of every table's maximum size, at the plan's page size.
    public var totalMaxBytes: Int { tables.reduce(0) { $0 + $1.maxBytes } }

    /// A family: where its source images are, which files to take, and the formats each image
    /// is rendered in.
    public struct Family: Sendable {
        /// The family's name, unique in the manifest.
        public let name: String
        /// `sources` as written.
        public let sources: String
        /// The absolute directory of source images.
        public let sourcesPath: String
        /// Where `sources`' value is written, for the baker's errors about the directory.
        public let sourcesLocation: SourceLocation
        /// The patterns of files to take, relative to ``sourcesPath``; `["**/*"]` when not given.
        public let include: [GlobPattern]
        /// The patterns of files to leave out, even when included.
        public let exclude: [GlobPattern]
        /// The family's formats, in manifest order.
        public let formats: [Format]
        /// Where the family's name is written.
        public let location: SourceLocation

        /// Whether the baker takes the file at `relativePath` (below ``sourcesPath``, `/`-separated):
        /// it matches an `include` pattern and no `exclude` pattern. The baker still skips files
        /// libvips cannot load.
        ///
        /// - Parameter relativePath: the file's path relative to ``sourcesPath``.
        public func selects(_ relativePath: String) -> Bool {
            include.contains { $0.matches(relativePath) } && !exclude.contains { $0.matches(relativePath) }
        }
    }
}

/// One table the manifest makes: a format at one scale, with its layout.
///
/// Sizes come from ``TableLayout`` with a page size of ``ManifestLimits/planPageSize`` (4096), so
/// the plan is the same on every machine; on machines with larger pages slots are padded more.
public struct PlannedTable: Sendable {
    /// The format the table renders.
    public let format: Manifest.Format
    /// The scale of this table.
    public let scale: Int
    /// The table file's name, such as `small@2x.imagetable`.
    public let fileName: String
    /// The table file's absolute path.
    public let path: String
    /// The table file's path as a person would type it: the manifest's path as the caller
    /// named it, joined with `output` as written and the file name, `.` and `..` removed.
    public let displayPath: String
    /// What the baker opens the table with.
    public let descriptor: FormatDescriptor
    /// The table's layout at the plan's page size.
    public let layout: TableLayout

    /// The family's name.
    public var family: String { format.family }
    /// Slot width in pixels.
    public var pixelWidth: Int { layout.width }
    /// Slot height in pixels.
    public var pixelHeight: Int { layout.height }
    /// The pixel style.
    public var style: PixelStyle { layout.style }
    /// Bytes of one pixel row, padded to 64.
    public var bytesPerRow: Int { layout.bytesPerRow }
    /// Bytes one slot occupies in the file, padded to the page size.
    public var slotBytes: Int { layout.slotStride }
    /// The table's capacity.
    public var maximumCount: Int { layout.capacity }
    /// The file's size when every slot is used; it never grows beyond.
    public var maxBytes: Int { layout.maxFileBytes }
}
