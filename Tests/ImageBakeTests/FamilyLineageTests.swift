import Foundation
import ImageTableCore
import TestSupport
import Testing
@testable import ImageBake

/// A format's pixels depend on its family's other formats (one decode, at the size that covers
/// the largest member): a table baked over a change of its siblings must end as a fresh bake of
/// the manifest makes it. It kept its entries, a few levels off, for good.
struct FamilyLineageTests {
    static let small = "      small: {size: 32x32, style: 32BitBGR, maximumCount: 10}\n"
    static let large = "      large: {size: 300x300, style: 32BitBGR, maximumCount: 10}\n"

    static func project() throws -> BakeProject {
        let project = try BakeProject(formats: small)
        for (i, photo) in ["Landscape_1", "Landscape_5"].enumerated() {
            try project.add("p\(i).jpg", from: Corpus.photo(photo))
            project.setModified("p\(i).jpg", secondsAgo: 100 - i)
        }
        return project
    }

    /// The small table's entries after baking the manifest as it is now into an empty directory.
    static func fresh(_ project: BakeProject) throws -> [String: String] {
        let other = project.root + "/fresh"
        let result = try run(Products.imagetable, ["bake", project.manifestPath, "--output", other, "--no-progress"])
        #expect(result.status == 0, "\(result.stderr)")
        return Dictionary(uniqueKeysWithValues: try ImageTableReader(path: other + "/small.imagetable").entries().map {
            ($0.key, "\($0.sourceUUID) \($0.pixelChecksum)")
        })
    }

    static func bake(_ project: BakeProject, _ extra: [String] = []) throws -> ProcessResult {
        let result = try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress"] + extra)
        #expect([0, 3].contains(result.status), "\(result.stderr)")
        return result
    }

    @Test func addingALargerFormatDrawsTheSmallOneAgainAsAFreshBakeWould() throws {
        let project = try Self.project()
        _ = try Self.bake(project)
        let before = try #require(try project.entries()["small.imagetable"])
        try project.editManifest { $0 + Self.large }
        let dry = try Self.bake(project, ["--dry-run"])
        #expect(dry.stdout.contains("2 decoded, 0 unchanged"), "\(dry.stdout)")
        let bake = try Self.bake(project)
        #expect(bake.stdout.contains("2 decoded, 0 unchanged"), "\(bake.stdout)")
        let notice = "small.imagetable: note: the family's formats changed (added 300x300 fit=cover crop=centre upscale=0); "
            + "its 2 entries are drawn again"
        #expect(dry.stderr.contains(notice) && bake.stderr.contains(notice), "\(dry.stderr)\n\(bake.stderr)")
        let after = try #require(try project.entries()["small.imagetable"])
        #expect(after != before, "the decode at the larger size gives other pixels; else this test shows nothing")
        #expect(after == (try Self.fresh(project)))
        // Once drawn, nothing more to do; and taking the format out draws them as before.
        #expect(try Self.bake(project).stdout.contains("0 decoded, 2 unchanged"))
        try project.editManifest { $0.replacingOccurrences(of: Self.large, with: "") }
        let removed = try Self.bake(project)
        #expect(removed.stderr.contains("(removed 300x300 fit=cover crop=centre upscale=0)"), "\(removed.stderr)")
        #expect(try project.entries()["small.imagetable"] == before)
    }

    /// What is drawn per member after resizing (style, background, corners), a name or a scale
    /// whose pixel size another member has already leaves the siblings' pixels as they are.
    @Test func changesThatDrawNothingDifferentLeaveTheSiblingsAlone() throws {
        let project = try Self.project()
        try project.editManifest { $0 + Self.large }
        _ = try Self.bake(project)
        try project.editManifest {
            $0.replacingOccurrences(of: "large: {size: 300x300, style: 32BitBGR,", with: "big: {size: 300x300, style: 8BitGrayscale, cornerRadius: 8,")
        }
        let bake = try Self.bake(project)
        #expect(bake.stdout.contains("2 decoded, 0 unchanged") && !bake.stderr.contains("drawn again"), "\(bake.stdout)\(bake.stderr)")
        #expect(try project.entries()["small.imagetable"] == (try Self.fresh(project)))
    }

    /// A bake that draws only some entries again (others deferred by `--min-age`) leaves the
    /// table's old signature, so the next bake draws them all (the deferred ones included).
    @Test func aPartialRedrawIsFinishedByTheNextBake() throws {
        let project = try Self.project()
        _ = try Self.bake(project)
        try project.editManifest { $0 + Self.large }
        try project.add("p2.jpg", from: Corpus.photo("Landscape_2"))
        let partial = try Self.bake(project, ["--min-age", "60"])
        #expect(partial.stdout.contains("2 decoded, 0 unchanged") && partial.stdout.contains("1 deferred"), "\(partial.stdout)")
        let rest = try Self.bake(project)
        #expect(rest.stdout.contains("3 decoded, 0 unchanged") && rest.stderr.contains("drawn again"), "\(rest.stdout)\(rest.stderr)")
        #expect(try project.entries()["small.imagetable"] == (try Self.fresh(project)))
        #expect(try Self.bake(project).stdout.contains("0 decoded, 3 unchanged"))
    }

    /// An export of a table drawn for other siblings than the manifest's is refused, as one of
    /// other parameters is; once baked, it is the same bytes as a fresh bake's export.
    @Test func anExportOfATableDrawnForOtherSiblingsIsStale() throws {
        let project = try Self.project()
        try project.editManifest { $0 + Self.large }
        _ = try Self.bake(project)
        try project.editManifest { $0.replacingOccurrences(of: Self.large, with: "") }
        let environment = ["SOURCE_DATE_EPOCH": "1"]
        let stale = try run(Products.imagetable, ["export", project.manifestPath, "--to", project.root + "/e1"], environment: environment)
        #expect(stale.status == 1 && stale.stderr.contains("small.imagetable: error: the table's entries were drawn beside other formats "
                + "than its family has now (removed 300x300 fit=cover crop=centre upscale=0), which changes their pixels; bake the "
                + "manifest first [stale-table]"), "\(stale.stderr)")
        _ = try Self.bake(project)
        let e1 = try run(Products.imagetable, ["export", project.manifestPath, "--to", project.root + "/e1"], environment: environment)
        _ = try Self.fresh(project)
        let e2 = try run(Products.imagetable, ["export", project.manifestPath, "--output", project.root + "/fresh", "--to", project.root + "/e2"],
                         environment: environment)
        #expect(e1.status == 0 && e2.status == 0, "\(e1.stderr)\(e2.stderr)")
        #expect(FileManager.default.contents(atPath: project.root + "/e1/small.imagetable")
                == FileManager.default.contents(atPath: project.root + "/e2/small.imagetable"))
    }

    @Test func theSignatureIgnoresNamesStylesAndRepeats() throws {
        let a = TableFormat(name: "a", width: 32, height: 32, style: .bgr32, capacity: 1)
        var b = a
        b.name = "b"
        b.style = .grayscale8
        b.rendering.cornerRadius = 4
        #expect(FamilyLineage.signature(of: [a]) == FamilyLineage.signature(of: [a, b]))
        var c = a
        c.rendering.fit = .contain
        #expect(FamilyLineage.signature(of: [a]) != FamilyLineage.signature(of: [a, c]))
        #expect(FamilyLineage.change(from: FamilyLineage.signature(of: [a, c]), to: FamilyLineage.signature(of: [a]))
                == "removed 32x32 fit=contain crop=centre upscale=0")
    }
}
