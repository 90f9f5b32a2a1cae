/// The stable identifier of each kind of manifest problem.
///
/// Raw values are kebab-case and appear in every output (`[unknown-style]` in text, `"code"` in
/// JSON, the annotation title on GitHub), so CI scripts may match on them; they never change
/// meaning. Each is documented, with an example, in `docs/MANIFEST.md`, "Diagnostics".
public enum DiagnosticCode: String, Sendable, CaseIterable, Codable {
    // MARK: The file and its YAML

    /// The file does not exist, is a directory, or cannot be read.
    case fileUnreadable = "file-unreadable"
    /// The file is larger than ``ManifestLimits/maxFileBytes``.
    case fileTooLarge = "file-too-large"
    /// The file holds no YAML document: it is empty, blank or only comments.
    case emptyFile = "empty-file"
    /// The file is not UTF-8 (the position is the first offending byte).
    case invalidUTF8 = "invalid-utf8"
    /// libyaml rejected the text; the position is where the mistake is (an unclosed quote or
    /// bracket, a missing `:`), libyaml's own when no rule places it better.
    case yamlSyntax = "yaml-syntax"
    /// Warning: a form libyaml accepts that YAML 1.2 forbids (`"out"# c`, `[-]`, a quoted or
    /// flow value continued at column 1), which other tools refuse.
    case laxYAML = "lax-yaml"
    /// A second document (`---`) follows the first.
    case multipleDocuments = "multiple-documents"
    /// Collections nest deeper than ``ManifestLimits/maxDepth``, aliases expanded.
    case tooDeep = "too-deep"
    /// The document has more than ``ManifestLimits/maxNodes`` nodes.
    case tooManyNodes = "too-many-nodes"
    /// Expanding aliases would exceed ``ManifestLimits/maxNodes`` nodes (a "billion laughs").
    case aliasExpansion = "alias-expansion"
    /// A scalar is longer than ``ManifestLimits/maxScalarBytes``.
    case scalarTooLarge = "scalar-too-large"
    /// An alias names an anchor that was never defined.
    case undefinedAlias = "undefined-alias"
    /// An alias refers to a collection that contains it.
    case recursiveAlias = "recursive-alias"
    /// A tag other than the standard `!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!map`, `!!seq`.
    case unsupportedTag = "unsupported-tag"
    /// A mapping key that is itself a mapping or sequence.
    case complexKey = "complex-key"
    /// The same key twice in one mapping; the message names both positions.
    case duplicateKey = "duplicate-key"

    // MARK: The manifest's structure

    /// A key the manifest does not define here; the message suggests the nearest known key.
    case unknownKey = "unknown-key"
    /// A required key is absent.
    case missingKey = "missing-key"
    /// A value has the wrong YAML type (a string where a number belongs, and so on).
    case wrongType = "wrong-type"
    /// A list or mapping that must have entries is empty.
    case emptyCollection = "empty-collection"
    /// `version` is not `1`.
    case unsupportedVersion = "unsupported-version"
    /// A family or format name is not a safe file name (see `docs/MANIFEST.md`, "Names").
    case invalidName = "invalid-name"
    /// A format name is used twice anywhere in the manifest, so two tables would share a file.
    case duplicateFormat = "duplicate-format"

    // MARK: Values

    /// A `size` that does not parse or is not positive.
    case invalidSize = "invalid-size"
    /// A pixel size (points × scale) over ``ManifestLimits/maxPixelDimension``.
    case sizeTooLarge = "size-too-large"
    /// A scale outside ``ManifestLimits/scales``.
    case invalidScale = "invalid-scale"
    /// The same scale twice in `scales`.
    case duplicateScale = "duplicate-scale"
    /// A `style` that is not one of the four pixel styles.
    case unknownStyle = "unknown-style"
    /// A `fit` that is not `cover`, `contain`, `fill` or `inside`.
    case unknownFit = "unknown-fit"
    /// A `crop` that is not `centre`, `attention` or `entropy`.
    case unknownCrop = "unknown-crop"
    /// `failOn` is not `truncated`, `error` or `warning`.
    case unknownFailLevel = "unknown-fail-level"
    /// A `protection` that is not one of the three modes.
    case unknownProtection = "unknown-protection"
    /// Warning: `crop` is set but `fit` is not `cover`, so it has no effect.
    case cropWithoutCover = "crop-without-cover"
    /// A `cornerRadius` that is negative or not a finite number.
    case invalidCornerRadius = "invalid-corner-radius"
    /// A `cornerRadius` larger than half the smaller side.
    case cornerRadiusTooLarge = "corner-radius-too-large"
    /// A colour that is not `#rgb`, `#rgba`, `#rrggbb` or `#rrggbbaa`.
    case invalidColor = "invalid-color"
    /// Warning: the background has alpha but the style is opaque, so the alpha is ignored.
    case backgroundAlphaIgnored = "background-alpha-ignored"
    /// Warning: a `background` on a style that keeps alpha (`32BitBGRA`), where nothing is
    /// painted with it.
    case backgroundUnused = "background-unused"
    /// `maximumCount` outside 1 … ``ManifestLimits/maxCapacity``.
    case maximumCountOutOfRange = "maximum-count-out-of-range"
    /// A table's maximum size exceeds ``ManifestLimits/maxTableBytes`` (or overflows).
    case tableTooLarge = "table-too-large"
    /// The manifest's total exceeds the `--max-disk` budget.
    case diskBudgetExceeded = "disk-budget-exceeded"

    // MARK: Paths and globs

    /// A path that is empty or contains a NUL character.
    case invalidPath = "invalid-path"
    /// `output` or `sources` is absolute or leaves the manifest's directory (after `..` and
    /// symlinks), without `--allow-outside-paths`.
    case outsidePath = "outside-path"
    /// Warning: a family's `sources` directory does not exist (yet).
    case missingSources = "missing-sources"
    /// A family has more sources than a format's `maximumCount`: the least recently modified
    /// are left out of that format's table (a warning; `validate` only, which lists the sources).
    case moreSourcesThanSlots = "more-sources-than-slots"
    /// Warning: a family's `sources` directory holds no file that its `include` and `exclude`
    /// select, so its tables stay empty.
    case noSources = "no-sources"
    /// `output` or `sources` exists but is not a directory, or lies below a file.
    case notADirectory = "not-a-directory"
    /// `output` is a family's `sources` directory: the tables and the bake state would lie among
    /// the source images.
    case outputIsSources = "output-is-sources"
    /// Warning: images a family selects lie in the `output` directory, inside its `sources`,
    /// which a bake never scans: they are not baked.
    case outputHoldsSources = "output-holds-sources"
    /// An `include` or `exclude` pattern that is not a valid glob.
    case invalidGlob = "invalid-glob"

    /// The manifest has more than ``ManifestLimits/maxDiagnostics`` problems; the rest are not listed.
    case tooManyProblems = "too-many-problems"

    /// The severity this kind of problem has unless `--warnings-as-errors` promotes it.
    public var defaultSeverity: Severity {
        switch self {
        case .cropWithoutCover, .backgroundAlphaIgnored, .backgroundUnused, .missingSources, .noSources, .moreSourcesThanSlots, .outputHoldsSources, .laxYAML: .warning
        default: .error
        }
    }
}
