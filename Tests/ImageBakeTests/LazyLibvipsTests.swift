import Foundation
import TestSupport
import Testing

/// The worker opens libvips only for a source that needs it (docs/PIPELINE.md, "Loading
/// libvips"): plain JPEGs never pay for its hundred libraries, and a libvips that cannot be
/// opened fails those sources alone, saying why.
@Suite struct LazyLibvipsTests {
    static let hasLDD = FileManager.default.isExecutableFile(atPath: "/usr/bin/ldd")

    @Test(.enabled(if: hasLDD, "ldd lists what an executable links (Linux)"))
    func theWorkerDoesNotLinkLibvips() throws {
        let libraries = try run("/usr/bin/ldd", [Products.worker])
        #expect(libraries.status == 0 && libraries.stdout.contains("libjpeg"), "\(libraries.stdout)")
        #expect(!libraries.stdout.contains("libvips") && !libraries.stdout.contains("libglib"), "\(libraries.stdout)")
    }

    /// With `IMAGETABLES_LIBVIPS` naming no library, the plain JPEG is baked (it never needed
    /// libvips) and the PNG fails as `library-unavailable`, naming the variable and the reason.
    @Test func onlySourcesThatNeedLibvipsLoadIt() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 16, maximumCount: 4))
        try project.add("photo.jpg", from: Corpus.photo("Landscape_1"))
        try project.add("drawing.png", from: Corpus.png("basn2c08"))
        let missing = project.root + "/no-such-libvips.so"
        let result = try run(Products.imagetable, ["bake", project.manifestPath, "--format", "json"],
                             environment: ["IMAGETABLES_LIBVIPS": missing])
        #expect(result.status == 3, "\(result.stdout)\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let failures = try #require(json["failures"] as? [[String: Any]])
        #expect(failures.map { $0["key"] as? String } == ["drawing.png"], "\(failures)")
        #expect(failures.first?["code"] as? String == "library-unavailable")
        let cause = (failures.first?["cause"] as? String) ?? ""
        #expect(cause.contains("IMAGETABLES_LIBVIPS=\(missing)") && cause.contains("No such file"), "\(failures)")
        let sources = try #require(json["sources"] as? [String: Any])
        #expect(sources["decoded"] as? Int == 1)

        // With libvips found again, the PNG is baked on the next run.
        let again = try run(Products.imagetable, ["bake", project.manifestPath])
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
    }
}
