/// What the validator checks beyond the manifest itself.
public struct ValidationOptions: Sendable, Equatable {
    /// Allow `output` and `sources` to be absolute or to leave the manifest's directory.
    /// Off by default: a manifest from a pull request must not make CI read or write elsewhere.
    public var allowOutsidePaths: Bool
    /// Report every warning as an error.
    public var warningsAsErrors: Bool
    /// When set, a manifest whose tables may grow past this many bytes in total is invalid.
    public var maxDiskBytes: Int?
    /// The directory `output` and `sources` must stay inside (absolute, or relative to the
    /// working directory); `nil` for each manifest's own directory. Setting it to a repository's
    /// root lets `manifests/demo.yaml` read `../samples` while still keeping CI inside the checkout.
    public var root: String?
    /// List each family's sources and warn when a format's `maximumCount` is smaller than their
    /// number (`more-sources-than-slots`). `validate` does; a bake, which lists them anyway and
    /// warns itself, does not.
    public var countsSources: Bool

    /// Creates options; the defaults are the strict ones CI wants.
    ///
    /// - Parameters:
    ///   - allowOutsidePaths: allow paths outside the manifest's directory.
    ///   - warningsAsErrors: promote warnings to errors.
    ///   - maxDiskBytes: the disk budget for the manifest's tables, if any.
    ///   - root: the directory paths must stay inside; `nil` for the manifest's own directory.
    ///   - countsSources: list the sources and warn about formats smaller than their family.
    public init(allowOutsidePaths: Bool = false, warningsAsErrors: Bool = false, maxDiskBytes: Int? = nil, root: String? = nil,
                countsSources: Bool = false) {
        self.countsSources = countsSources
        self.allowOutsidePaths = allowOutsidePaths
        self.warningsAsErrors = warningsAsErrors
        self.maxDiskBytes = maxDiskBytes
        self.root = root
    }
}

/// The outcome of validating one manifest: every diagnostic, and the manifest when it is valid.
public struct ValidationReport: Sendable {
    /// The manifest's path as the caller named it.
    public let file: String
    /// Every problem, in file order.
    public let diagnostics: [Diagnostic]
    /// The validated manifest, present exactly when there are no errors.
    public let manifest: Manifest?
    /// The manifest as planned: ``manifest`` when it is valid, and also when its only error is
    /// the disk budget's (`--max-disk`), so that its plan can show which tables take the space.
    public private(set) var plannedManifest: Manifest? = nil

    /// Whether there are no errors (warnings allowed, unless promoted).
    public var isValid: Bool { manifest != nil }
    /// The number of errors.
    public var errorCount: Int { diagnostics.count { $0.severity == .error } }
    /// The number of warnings.
    public var warningCount: Int { diagnostics.count { $0.severity == .warning } }
}
