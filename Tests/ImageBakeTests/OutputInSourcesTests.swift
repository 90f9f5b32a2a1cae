import Foundation
import ImageBake
import TestSupport
import Testing

/// An output directory inside a family's sources is never scanned, so the tables are never taken
/// for sources. Images the patterns select there were dropped without a word (`--output photos/sub`
/// left its 15 images out of the family): the bake warns of them.
@Suite struct OutputInSourcesTests {
    @Test func imagesInTheOutputDirectoryAreNamedInAWarning() throws {
        let project = try BakeProject(formats: "      g:\n        size: 8x8\n        style: 8BitGrayscale\n        maximumCount: 10\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        try project.add("out/b.jpg", from: Corpus.photo("Landscape_2"))
        try project.add("out/deeper/c.png", from: Corpus.png("basn2c08"))
        let bake = try run(Products.imagetable, ["bake", "manifest.yaml", "--output", "src/out", "--format", "json"], in: project.root)
        #expect(bake.status == 0, "\(bake.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: bake.output) as? [String: Any])
        let warnings = try #require(document["warnings"] as? [[String: Any]])
        let warning = try #require(warnings.first { $0["code"] as? String == "output-holds-sources" }, "\(warnings)")
        let message = warning["message"] as? String ?? ""
        #expect(message.contains("holds 2 images its patterns select ('out/b.jpg', 'out/deeper/c.png')")
                    || message.contains("holds 2 images its patterns select ('out/deeper/c.png', 'out/b.jpg')"), "\(message)")
        #expect((document["sources"] as? [String: Any])?["decoded"] as? Int == 1, "a.jpg alone is a source")

        // Tables, their locks and the bake state are not images: no warning once those are all.
        try FileManager.default.removeItem(atPath: project.sources + "/out/b.jpg")
        try FileManager.default.removeItem(atPath: project.sources + "/out/deeper")
        let again = try run(Products.imagetable, ["bake", "manifest.yaml", "--output", "src/out"], in: project.root)
        #expect(again.status == 0 && !again.stderr.contains("output-holds-sources"), "\(again.stderr)")
        #expect(FileManager.default.fileExists(atPath: project.sources + "/out/g.imagetable"))
    }

    /// A link to an image in the output directory is an image the scan would have baked, and an
    /// output directory named like an image is still never scanned: it got a second warning
    /// that it "is scanned for sources, not baked", contradicting this one.
    @Test func linksCountAndAnOutputNamedLikeAnImageIsNotScanned() throws {
        let project = try BakeProject(formats: "      g:\n        size: 8x8\n        style: 8BitGrayscale\n        maximumCount: 10\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        try FileManager.default.createDirectory(atPath: project.sources + "/out.png", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: project.sources + "/out.png/linked.jpg", withDestinationPath: project.sources + "/a.jpg")
        let bake = try run(Products.imagetable, ["bake", "manifest.yaml", "--output", "src/out.png", "--format", "json"], in: project.root)
        #expect(bake.status == 0, "\(bake.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: bake.output) as? [String: Any])
        let warnings = try #require(document["warnings"] as? [[String: Any]])
        let codes = warnings.compactMap { $0["code"] as? String }
        #expect(codes == ["output-holds-sources"], "\(warnings)")
        let message = warnings.first?["message"] as? String ?? ""
        #expect(message.contains("holds 1 image its patterns select ('out.png/linked.jpg')"), "\(message)")
        #expect(!(bake.stdout + bake.stderr).contains("scanned for sources"), "\(bake.stdout)")
    }
}
