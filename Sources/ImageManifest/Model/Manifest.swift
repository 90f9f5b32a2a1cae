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
    /// Whether ``output`` was typed on a command line (`--output`), relative to the working
    /// directory rather than to the manifest's.
    var outputFromCommandLine = false

    /// Every table the manifest makes, one format at one scale each: family by family, format by
    /// format, scale by scale.
    public var formats: [TableFormat] { families.flatMap(\.formats) }

    /// The sum of every table's maximum size, at the plan's page size.
    public var totalMaxBytes: Int { formats.reduce(0) { $0 + (Self.planLayout(of: $1)?.maxFileBytes ?? 0) } }

    /// A table's layout as the plan sizes it: at a page size of ``ManifestLimits/planPageSize``
    /// (4096), so the plan is the same on every machine; on machines with larger pages slots are
    /// padded more. `nil` for a format out of range, which a validated manifest never has.
    ///
    /// - Parameter format: a format.
    public static func planLayout(of format: TableFormat) -> TableLayout? {
        try? format.layout(pageSize: ManifestLimits.planPageSize)
    }

    /// The same manifest writing its tables to `path` instead of its `output`: a bake's
    /// `--output`, such as one directory per shard.
    ///
    /// - Parameters:
    ///   - path: the absolute directory.
    ///   - display: the directory as a person typed it, for messages.
    /// - Returns: the manifest with `outputPath` and `output` replaced.
    public func writing(to path: String, display: String) -> Manifest {
        Manifest(file: file, directory: directory, version: version, output: display, outputPath: path, families: families,
                 outputFromCommandLine: true)
    }

    /// The absolute path of a format's table file.
    ///
    /// - Parameter format: one of ``formats``.
    public func tablePath(of format: TableFormat) -> String { outputPath + "/" + format.fileName }

    /// A format's table file as a person would type it: the manifest's path as the caller named
    /// it, joined with `output` as written and the file name, `.` and `..` removed.
    ///
    /// - Parameter format: one of ``formats``.
    public func displayPath(of format: TableFormat) -> String {
        PathResolver.normalize(displayOutput + "/" + format.fileName)
    }

    /// The output directory as a person would type it: `--output` as given, or the manifest's
    /// path as the caller named it joined with `output` as written.
    public var displayOutput: String { Self.displayOutput(output, manifest: file, fromCommandLine: outputFromCommandLine) }

    /// An output directory as a person would type it (``displayOutput``), before there is a
    /// manifest: `validate` names it so in the warnings it shares with `bake`.
    ///
    /// - Parameters:
    ///   - output: `output` as written, or `--output` as given.
    ///   - manifest: the manifest's path as the caller named it.
    ///   - fromCommandLine: whether `output` is `--output`'s, which is not relative to the manifest.
    static func displayOutput(_ output: String, manifest: String, fromCommandLine: Bool = false) -> String {
        if PathBytes.isAbsolute(output) || fromCommandLine { return PathResolver.normalize(output) }
        let base = PathBytes.lastSlash(manifest).map { String($0.directory) } ?? "."
        return PathResolver.normalize((base.isEmpty ? "/" : base) + "/" + output)
    }

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
        /// The patterns of files to take, relative to ``sourcesPath``; the image file names
        /// (``GlobPattern/images``) when not given.
        public let include: [GlobPattern]
        /// The patterns of files to leave out, even when included.
        public let exclude: [GlobPattern]
        /// How strictly the decoders treat damaged data in this family's sources (libvips'
        /// `fail_on`); `FailLevel.error` when not given.
        public let failOn: FailLevel
        /// The family's formats at each of their scales, in manifest order.
        public let formats: [TableFormat]
        /// Where the family's name is written.
        public let location: SourceLocation
        /// The names of the formats whose `maximumCount` is a cap by design (`capped: true`): a
        /// family with more sources than their slots bakes the most recently modified, as any
        /// does, but is not warned of (`more-sources-than-slots`). Not a table parameter.
        public var cappedFormats: Set<String> = []

        /// Whether the baker takes the file at `relativePath` (below ``sourcesPath``, `/`-separated):
        /// it matches an `include` pattern and no `exclude` pattern. The baker still skips files
        /// libvips cannot load.
        ///
        /// - Parameter relativePath: the file's path relative to ``sourcesPath``.
        public func selects(_ relativePath: String) -> Bool {
            include.contains { $0.matches(relativePath) } && !exclude.contains { $0.matches(relativePath) }
        }

        /// Whether the directory at `relativePath` may hold a file the baker takes: an `include`
        /// pattern may match below it (``GlobPattern/mayMatch(below:)``; `exclude` patterns are
        /// not asked).
        ///
        /// - Parameter relativePath: the directory's path relative to ``sourcesPath``.
        public func mayHoldSources(below relativePath: String) -> Bool {
            include.contains { $0.mayMatch(below: relativePath) }
        }

        /// The path the patterns would take for `relativePath` if its extension were spelt
        /// another way (`IMG.JPG` against `**/*.jpg`, `a.jpeg` against `**/*.jpg`): phone photos
        /// end in `.JPG`, and a pattern matches case exactly, so they were left out without a
        /// word. `nil` when the patterns take the file, an `exclude` pattern names it, or no
        /// other spelling of its extension is taken either.
        ///
        /// - Parameter relativePath: the file's path relative to ``sourcesPath``.
        public func selectedSpelling(of relativePath: String) -> String? {
            let nameStart = PathBytes.lastSlash(relativePath)?.name.startIndex ?? relativePath.startIndex
            guard let dot = relativePath[nameStart...].lastIndex(of: "."), dot > nameStart,
                  !include.contains(where: { $0.matches(relativePath) }), !exclude.contains(where: { $0.matches(relativePath) }) else { return nil }
            let stem = relativePath[..<dot], written = String(relativePath[relativePath.index(after: dot)...])
            guard let group = Self.extensionSpellings.first(where: { $0.contains(written.lowercased()) }) else { return nil }
            for spelling in group.flatMap({ [$0, $0.uppercased()] }) where spelling != written {
                let candidate = stem + "." + spelling
                if selects(candidate) { return candidate }
            }
            return nil
        }

        /// The spellings of one image format's extension.
        static let extensionSpellings: [[String]] = [["jpg", "jpeg", "jpe"], ["tif", "tiff"], ["heic", "heif"], ["png"], ["gif"], ["webp"], ["avif"]]

        /// Whether `relativePath` names a hidden image file (its name starts with `.` and ends
        /// like an image, such as `..jpg`) that the baker would take if wildcards matched hidden
        /// names. The baker skips it, as shells do, but says so rather than losing it silently.
        ///
        /// - Parameter relativePath: the file's path relative to ``sourcesPath``.
        public func selectsHiddenImage(_ relativePath: String) -> Bool {
            let name = PathBytes.components(relativePath).last ?? ""
            guard PathBytes.isHidden(name), !selects(relativePath) else { return false }
            return GlobPattern.images.matches(relativePath, revealingHiddenFile: true)
                && include.contains { $0.matches(relativePath, revealingHiddenFile: true) }
                && !exclude.contains { $0.matches(relativePath, revealingHiddenFile: true) }
        }
    }
}
