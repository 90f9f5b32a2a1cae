import Foundation
import ImageTableCore
import TestSupport
import Testing

/// Paths whose names begin with a combining mark (U+0301), and directories spelt in NFC and in
/// NFD: two different files on Linux, and a slash that the mark follows still a slash. Through
/// Swift's Characters each of these went wrong (`PathBytes`).
@Suite struct CombiningMarkPathTests {
    static let accent = "\u{301}"
    static let (nfc, nfd) = ("caf\u{E9}", "cafe\u{301}")
    static let grey = "      grey:\n        size: 8x8\n        style: 8BitGrayscale\n        maximumCount: 8\n"

    /// A merge refuses an input below its output though the input's name begins with a mark:
    /// the merge replaces the output whole, and it deleted that input with it.
    @Test func aMergeKeepsAnInputBelowItsOutput() throws {
        let project = try BakeProject(formats: Self.grey)
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        #expect(try project.bake().decoded == 1)
        let merged = project.root + "/merged", inside = merged + "/" + Self.accent + "s"
        #expect(try MergeTests.merge(merged, [project.tables]).status == 0)
        try FileManager.default.copyItem(atPath: project.tables, toPath: inside)
        let refused = try MergeTests.merge(merged, [inside])
        #expect(refused.status != 0 && refused.stderr.contains("is inside the output directory, which the merge replaces whole"), "\(refused.stderr)")
        #expect(FileManager.default.fileExists(atPath: inside + "/grey.imagetable"))
        // Two directories spelt in NFC and NFD are two inputs, not one given twice, and an
        // output named with a leading mark is made beside its parent's other names.
        let (a, b) = (project.root + "/" + Self.nfc, project.root + "/" + Self.nfd)
        try FileManager.default.copyItem(atPath: project.tables, toPath: a)
        try FileManager.default.copyItem(atPath: project.tables, toPath: b)
        let out = project.root + "/mm/" + Self.accent + "x"
        try FileManager.default.createDirectory(atPath: project.root + "/mm", withIntermediateDirectories: true)
        let two = try MergeTests.merge(out, [a, b])
        #expect(two.status == 0, "\(two.stderr)")
        #expect(FileManager.default.fileExists(atPath: out + "/grey.imagetable"))
    }

    /// A link from `café` (NFC) into its sibling `cafe\u{301}` (NFD) leads outside the sources;
    /// one into `\u{301}sub/` below the sources does not.
    @Test func theOutsideCheckComparesBytes() throws {
        let project = try BakeProject(formats: Self.grey)
        let root = project.root
        for directory in [Self.nfc, Self.nfd, "src/" + Self.accent + "sub"] {
            try FileManager.default.createDirectory(atPath: root + "/" + directory, withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(atPath: Corpus.photo("Landscape_5"), toPath: root + "/" + Self.nfd + "/secret.jpg")
        try FileManager.default.createSymbolicLink(atPath: root + "/" + Self.nfc + "/link.jpg", withDestinationPath: "../" + Self.nfd + "/secret.jpg")
        try FileManager.default.copyItem(atPath: Corpus.photo("Landscape_6"), toPath: root + "/src/" + Self.accent + "sub/x.bin")
        try FileManager.default.createSymbolicLink(atPath: root + "/src/inside.jpg", withDestinationPath: Self.accent + "sub/x.bin")
        try project.editManifest {
            $0 + "  other:\n    sources: \(Self.nfc)\n    formats:\n      g2:\n        size: 8x8\n        style: 8BitGrayscale\n        maximumCount: 8\n"
        }
        let result = try run(Products.imagetable, ["bake", project.manifestPath, "--list", "--format", "json"])
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
        let states = Dictionary(uniqueKeysWithValues: (listed["sources"] as? [[String: String]] ?? []).map { ($0["key"]!, $0["status"]! + ($0["failure"].map { " " + $0 } ?? "")) })
        #expect(states == ["inside.jpg": "new", "link.jpg": "failed outside-sources"], "\(listed)")
    }

    /// A manifest whose name begins with a mark lies in its own directory, not in the one above.
    @Test func aManifestNamedWithALeadingMarkReadsItsOwnDirectory() throws {
        let scratch = try TemporaryDirectory()
        for directory in ["src", "proj/src"] {
            try FileManager.default.createDirectory(atPath: scratch.file(directory), withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(atPath: Corpus.photo("Landscape_0"), toPath: scratch.file("src/decoy.jpg"))
        try FileManager.default.copyItem(atPath: Corpus.photo("Landscape_3"), toPath: scratch.file("proj/src/a.jpg"))
        try ("version: 1\noutput: tables\nfamilies:\n  photos:\n    sources: src\n    formats:\n" + Self.grey)
            .write(toFile: scratch.file("proj/" + Self.accent + "m.yaml"), atomically: true, encoding: .utf8)
        // `proj/\u{301}m.yaml` was taken to lie in `proj`'s parent: the decoy was baked there.
        let result = try run(Products.imagetable, ["bake", "proj/" + Self.accent + "m.yaml", "--no-progress"], in: scratch.path)
        #expect(result.status == 0, "\(result.stderr)")
        let keys = try ImageTableReader(path: scratch.file("proj/tables/grey.imagetable")).entries().map(\.key)
        #expect(keys == ["a.jpg"] && !FileManager.default.fileExists(atPath: scratch.file("tables")), "\(keys)")
    }

    /// A source whose name begins with a mark that failed to decode is remembered as failed, as
    /// any other is, not decoded again at every bake.
    @Test func aFailureOfANameWithALeadingMarkIsRemembered() throws {
        let project = try BakeProject(formats: Self.grey)
        try FailedDecodeTests.addBroken(project, Self.accent + "bad.jpg")
        // Older than the state's margin for a file changed just before it was read.
        project.setModified(Self.accent + "bad.jpg", secondsAgo: 100)
        _ = try FailedDecodeTests.bake(project)
        let second = try FailedDecodeTests.bake(project)
        #expect(second.failures == ["truncated: the image data ends early " + FailedDecodeTests.remembered], "\(second.failures)")
    }
    /// A manifest in `café/` (NFC) may not read `../cafe\u{301}` (NFD), another directory, any
    /// more than `../other`; and an export goes to a directory whose name begins with a mark.
    @Test func aSiblingSpeltInNFDIsOutsideAndAnExportNamedWithAMarkIsMade() throws {
        let scratch = try TemporaryDirectory()
        for directory in [Self.nfc, Self.nfd] {
            try FileManager.default.createDirectory(atPath: scratch.file(directory), withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(atPath: Corpus.photo("Landscape_7"), toPath: scratch.file(Self.nfd + "/s.jpg"))
        let manifest = scratch.file(Self.nfc + "/m.yaml")
        try ("version: 1\noutput: tables\nfamilies:\n  photos:\n    sources: ../\(Self.nfd)\n    formats:\n" + Self.grey)
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        let validate = try run(Products.imagetable, ["validate", manifest])
        #expect(validate.status == 1 && (validate.stdout + validate.stderr).contains("[outside-path]"), "\(validate.stdout)\(validate.stderr)")

        let project = try BakeProject(formats: Self.grey)
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        #expect(try project.bake().decoded == 1)
        try FileManager.default.createDirectory(atPath: project.root + "/e", withIntermediateDirectories: true)
        let export = try run(Products.imagetable, ["export", project.manifestPath, "--to", project.root + "/e/" + Self.accent + "x"])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(FileManager.default.fileExists(atPath: project.root + "/e/" + Self.accent + "x/grey.imagetable"))
    }
}

