import Foundation
import TestSupport
import Testing
@testable import ImageManifest

/// `output` and `sources`: where they lead, after `..` and symbolic links.
@Suite struct PathTests {
    private func yaml(output: String = "tables", sources: String = "photos") -> String {
        "version: 1\noutput: \(output)\nfamilies:\n  users:\n    sources: \(sources)\n    formats:\n      small: {size: 5x5, style: 32BitBGRA, maximumCount: 1}\n"
    }

    private func validate(_ dir: TemporaryDirectory, _ text: String, at name: String = "manifest.yaml",
                          options: ValidationOptions = ValidationOptions()) throws -> ValidationReport {
        ManifestValidator(options: options).validate(fileAt: try dir.write(name, text))
    }

    @Test func insidePathsResolveAbsolutely() throws {
        let dir = try TemporaryDirectory()
        try dir.makeDirectory("photos")
        let report = try validate(dir, yaml(sources: "photos/../photos/."))
        #expect(report.diagnostics.isEmpty)
        let real = try #require(PathResolver.realPath(dir.path))
        #expect(report.manifest?.outputPath == real + "/tables")
        #expect(report.manifest?.families.first?.sourcesPath == real + "/photos")
        #expect(report.manifest?.families.first?.sourcesLocation == SourceLocation(line: 5, column: 14))
        let manifest = try #require(report.manifest)
        #expect(manifest.tablePath(of: manifest.formats[0]) == real + "/tables/small.imagetable")
    }

    @Test func missingSourcesAreAWarningAndMissingOutputIsFine() throws {
        let dir = try TemporaryDirectory()
        let report = try validate(dir, yaml())
        #expect(summary(report) == ["5:14 missing-sources"])
        #expect(report.diagnostics.first?.severity == .warning)
        #expect(report.isValid)
    }

    @Test func filesWhereDirectoriesBelong() throws {
        let dir = try TemporaryDirectory()
        try dir.write("photos", "not a directory")
        try dir.write("tables", "not a directory")
        #expect(summary(try validate(dir, yaml())) == ["2:9 not-a-directory", "5:14 not-a-directory"])
    }

    /// A path below a file can never be made: `output: README.md/tables` passed, and the bake
    /// failed with Foundation's "NSCocoaErrorDomain error 512".
    @Test func aPathBelowAFileIsNotADirectory() throws {
        let dir = try TemporaryDirectory()
        try dir.makeDirectory("photos")
        try dir.write("README.md", "a file")
        let report = try validate(dir, yaml(output: "README.md/tables/x"))
        #expect(summary(report) == ["2:9 not-a-directory"])
        let real = try #require(PathResolver.realPath(dir.path))
        #expect(report.diagnostics.first?.message == "'README.md/tables/x' (\(real)/README.md/tables/x) lies below \(real)/README.md, "
                + "which is a file, not a directory")
    }

    @Test func dotDotOutOfTheDirectory() throws {
        let dir = try TemporaryDirectory()
        let report = try validate(dir, yaml(output: "../tables"), at: "sub/manifest.yaml")
        #expect(summary(report) == ["2:9 outside-path", "5:14 missing-sources"])
        #expect(report.diagnostics[0].message.contains("widen the boundary with --root DIR, or pass --allow-outside-paths"))
        let allowed = try validate(dir, yaml(output: "../tables"), at: "sub/manifest.yaml", options: ValidationOptions(allowOutsidePaths: true))
        #expect(summary(allowed) == ["5:14 missing-sources"])
    }

    @Test func rootWidensTheBoundary() throws {
        let dir = try TemporaryDirectory()
        try dir.makeDirectory("photos")
        let text = yaml(output: "../tables", sources: "../photos")
        #expect(summary(try validate(dir, text, at: "manifests/m.yaml")) == ["2:9 outside-path", "5:14 outside-path"])
        let widened = try validate(dir, text, at: "manifests/m.yaml", options: ValidationOptions(root: dir.path))
        #expect(widened.diagnostics.isEmpty)
        // Still a boundary: one more '..' leaves it.
        let beyond = try validate(dir, yaml(sources: "../../photos"), at: "manifests/m.yaml", options: ValidationOptions(root: dir.path))
        #expect(summary(beyond) == ["5:14 outside-path"])
        #expect(beyond.diagnostics[0].message.contains("outside the root"))
    }

    @Test func symbolicLinkOutOfTheDirectory() throws {
        let dir = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/photos", withDestinationPath: outside.path)
        let report = try validate(dir, yaml())
        #expect(summary(report) == ["5:14 outside-path"])
        #expect(report.diagnostics[0].message.contains("through a symbolic link"))
        // `..` climbs from where the link really leads, as the kernel does.
        try dir.makeDirectory("inner")
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/inner/up", withDestinationPath: outside.path)
        #expect(summary(try validate(dir, yaml(output: "inner/up/../x"))) == ["2:9 outside-path", "5:14 outside-path"])
    }

    @Test func symbolicLinkWithinTheDirectoryIsFine() throws {
        let dir = try TemporaryDirectory()
        try dir.makeDirectory("real/photos")
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/photos", withDestinationPath: "real/photos")
        let report = try validate(dir, yaml())
        #expect(report.diagnostics.isEmpty)
        #expect(report.manifest?.families.first?.sourcesPath.hasSuffix("/real/photos") == true)
    }

    @Test func danglingAndLoopingLinksAreRefused() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/tables", withDestinationPath: "/nonexistent/elsewhere")
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/photos", withDestinationPath: "photos")
        let report = try validate(dir, yaml())
        #expect(summary(report) == ["2:9 outside-path", "5:14 outside-path"])
        #expect(report.diagnostics[0].message.contains("cannot be resolved"))
    }

    @Test func absolutePaths() throws {
        let dir = try TemporaryDirectory()
        try dir.makeDirectory("photos")
        let text = yaml(output: dir.path + "/tables")
        #expect(summary(try validate(dir, text)) == ["2:9 outside-path"])
        #expect(try validate(dir, text, options: ValidationOptions(allowOutsidePaths: true)).diagnostics.isEmpty)
    }

    @Test func emptyPath() throws {
        let dir = try TemporaryDirectory()
        #expect(summary(try validate(dir, yaml(output: "\"\""))) == ["2:9 invalid-path", "5:14 missing-sources"])
    }
}
