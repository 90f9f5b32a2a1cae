import ImageTableCore

/// The documented bounds of a manifest (`docs/MANIFEST.md`, "Limits").
///
/// The YAML bounds exist because manifests arrive in pull requests: a hostile file must fail
/// fast with a diagnostic, never exhaust memory, time or stack. Real manifests are a few
/// kilobytes, a depth of 6 and a few hundred nodes, far inside every bound.
public enum ManifestLimits {
    /// Largest manifest file: 1 MiB.
    public static let maxFileBytes = 1 << 20
    /// Deepest nesting of mappings and sequences, counting the root as 1 and aliases expanded.
    public static let maxDepth = 32
    /// Most nodes in the document with every alias expanded; bounds "billion laughs" documents.
    public static let maxNodes = 50_000
    /// Longest scalar, in UTF-8 bytes; paths and globs fit comfortably.
    public static let maxScalarBytes = 4096
    /// Most problems listed for one manifest; a file with more is not a manifest with typos.
    public static let maxDiagnostics = 200
    /// Largest width or height in pixels (points × scale): the table format's bound.
    public static let maxPixelDimension = TableLimits.maxDimension
    /// Largest `maximumCount`: the table format's bound.
    public static let maxCapacity = TableLimits.maxCapacity
    /// Longest family or format name, in UTF-8 bytes: the table header's bound.
    public static let maxNameBytes = TableLimits.maxNameBytes
    /// The scales a format may list.
    public static let scales = 1...8
    /// Largest maximum size of one table: 16 TiB, the largest file ext4 holds with 4 KiB blocks.
    /// Bigger is almost surely a typo in `size` or `maximumCount`. Tables are allocated as they
    /// fill, so a large limit costs nothing until it is used: ten million 150×150 thumbnails
    /// take about 1 TB.
    public static let maxTableBytes = 16 << 40
    /// The page size the plan assumes, so the sizes it reports are the same on every machine.
    /// Tables on machines with larger pages (16 KiB on Apple silicon) are somewhat larger.
    public static let planPageSize = 4096
}
