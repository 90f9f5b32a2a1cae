import TestSupport
import Foundation
@testable import ImageManifest
#if canImport(Glibc)
import Glibc
#endif

/// Paths in the source tree: the tests read the corpus, the examples, the schema and the docs
/// where they are committed.
enum Repository {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized.path
    static let corpus = root + "/Tests/ImageManifestTests/Corpus"
    static let manifests = root + "/manifests"
    static let schema = root + "/schema/manifest.schema.json"
    static let manifestDoc = root + "/docs/MANIFEST.md"

    /// The example manifests, sorted.
    static var exampleManifests: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: manifests)) ?? [])
            .filter { $0.hasSuffix(".yaml") }.sorted().map { manifests + "/" + $0 }
    }
}

/// `line:column code` for every diagnostic: the compact form the rule tests compare.
func summary(_ report: ValidationReport) -> [String] {
    report.diagnostics.map { "\($0.line):\($0.column) \($0.code.rawValue)" }
}

/// Validates `yaml` as a manifest in a fresh directory that holds a `photos` directory.
func check(_ yaml: String, options: ValidationOptions = ValidationOptions()) throws -> ValidationReport {
    let dir = try TemporaryDirectory()
    try dir.makeDirectory("photos")
    let file = try dir.write("manifest.yaml", yaml)
    return ManifestValidator(options: options).validate(fileAt: file)
}

/// A valid manifest with one format whose body is `format` (indented 8 spaces): lines 1–7 are
/// fixed, so the format's first key is on line 8, column 9.
func manifest(format: String, extraFamilyKeys: String = "") -> String {
    """
    version: 1
    output: tables
    families:
      users:
        sources: photos\(extraFamilyKeys)
        formats:
          small:
    \(format.split(separator: "\n", omittingEmptySubsequences: false).map { "        " + $0 }.joined(separator: "\n"))

    """
}
