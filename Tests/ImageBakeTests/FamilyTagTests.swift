import Foundation
import ImageTableCore
import TestSupport
import Testing
@testable import ImageBake

/// A format's pixels depend on its family's other formats (one decode, at the size that covers
/// the largest member): a table baked over a change of its siblings must end as a fresh bake of
/// the manifest makes it, whatever happened on the way. It kept its entries, a few levels off,
/// for good. Each entry records the family it was drawn for (`FamilyTag`).
struct FamilyTagTests {
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

    static let notice = "2 entries were drawn beside other formats than its family has now (one added, removed or resized since), "
        + "which changes their pixels;"

    @Test func addingALargerFormatDrawsTheSmallOneAgainAsAFreshBakeWould() throws {
        let project = try Self.project()
        _ = try Self.bake(project)
        let before = try #require(try project.entries()["small.imagetable"])
        try project.editManifest { $0 + Self.large }
        let dry = try Self.bake(project, ["--dry-run"])
        #expect(dry.stdout.contains("2 decoded, 0 unchanged") && dry.stderr.contains(Self.notice + " would draw 2 again"),
                "\(dry.stdout)\(dry.stderr)")
        let bake = try Self.bake(project)
        #expect(bake.stdout.contains("2 decoded, 0 unchanged") && bake.stdout.contains("small.imagetable        2")
                && bake.stderr.contains(Self.notice + " drew 2 again"), "\(bake.stdout)\(bake.stderr)")
        let after = try #require(try project.entries()["small.imagetable"])
        #expect(after != before, "the decode at the larger size gives other pixels; else this test shows nothing")
        #expect(after == (try Self.fresh(project)))
        // Once drawn, nothing more to do; and taking the format out draws them as before.
        #expect(try Self.bake(project).stdout.contains("0 decoded, 2 unchanged"))
        try project.editManifest { $0.replacingOccurrences(of: Self.large, with: "") }
        #expect(try Self.bake(project).stderr.contains(Self.notice))
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
        #expect(bake.stdout.contains("2 decoded, 0 unchanged") && !bake.stderr.contains("drawn beside"), "\(bake.stdout)\(bake.stderr)")
        #expect(try project.entries()["small.imagetable"] == (try Self.fresh(project)))
    }

    /// Entry by entry: a redraw cut short (sources deferred by `--min-age`) leaves the rest for
    /// the next bake, which draws only those; going back to the old family then draws again the
    /// ones drawn for the new one. Neither a deferred source nor the bake state decides it.
    @Test func aRedrawCutShortIsFinishedEntryByEntry() throws {
        let project = try Self.project()
        _ = try Self.bake(project)
        try project.add("p2.jpg", from: Corpus.photo("Landscape_2"))
        _ = try Self.bake(project)
        project.setModified("p2.jpg", secondsAgo: 0)
        try project.editManifest { $0 + Self.large }
        try FileManager.default.removeItem(atPath: project.tables + "/" + BakeState.fileName)
        let partial = try Self.bake(project, ["--min-age", "60"])
        #expect(partial.stdout.contains("2 decoded, 0 unchanged") && partial.stdout.contains("1 deferred"), "\(partial.stdout)")
        let rest = try Self.bake(project)
        #expect(rest.stdout.contains("small.imagetable        1"), "only the deferred entry: \(rest.stdout)")
        #expect(try project.entries()["small.imagetable"] == (try Self.fresh(project)))
        try project.editManifest { $0.replacingOccurrences(of: Self.large, with: "") }
        let back = try Self.bake(project, ["--min-age", "0"])
        #expect(back.stdout.contains("small.imagetable        3") && back.stderr.contains("3 entries were drawn beside"), "\(back.stdout)")
        #expect(try project.entries()["small.imagetable"] == (try Self.fresh(project)))
    }

    /// A source that fails while its entry is drawn again keeps the old entry, still marked as
    /// drawn for the old family, and the next bake that can decode it draws it.
    @Test func anEntryWhoseRedrawFailedIsDrawnByTheNextBake() throws {
        let project = try Self.project()
        _ = try Self.bake(project)
        try project.editManifest { $0 + Self.large }
        let failing = try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress", "--max-pixels", "1000"])
        #expect(failing.status == 3 && failing.stdout.contains("2 failed"), "\(failing.stdout)")
        let next = try Self.bake(project)
        #expect(next.stdout.contains("2 decoded") && next.stderr.contains(Self.notice), "\(next.stdout)\(next.stderr)")
        #expect(try project.entries()["small.imagetable"] == (try Self.fresh(project)))
    }

    /// An entry whose source is gone cannot be drawn again: the notice says so, and how it goes,
    /// where it said every entry was drawn, bake after bake.
    @Test func anEntryWhoseSourceIsGoneIsSaidToStay() throws {
        let project = try Self.project()
        _ = try Self.bake(project)
        try FileManager.default.removeItem(atPath: project.sources + "/p1.jpg")
        try project.editManifest { $0 + Self.large }
        let bake = try Self.bake(project)
        #expect(bake.stderr.contains("2 entries were drawn beside other formats than its family has now (one added, removed or resized "
                + "since), which changes their pixels; drew 1 again; 1 cannot be (its source is gone, deferred or failing) and stays "
                + "until it is baked or pruned (bake --prune)"), "\(bake.stderr)")
        let pruned = try Self.bake(project, ["--prune"])
        #expect(pruned.stdout.contains("small.imagetable        0        0       1"), "\(pruned.stdout)")
        #expect(!(try Self.bake(project).stderr.contains("drawn beside")))
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
        #expect(stale.status == 1 && stale.stderr.contains("small.imagetable: error: 2 of its entries were drawn beside other formats "
                + "than its family has now (one added, removed or resized since), which changes their pixels; bake the manifest first (and "
                + "with --prune, for entries whose sources are gone) [stale-table]"), "\(stale.stderr)")
        _ = try Self.bake(project)
        let e1 = try run(Products.imagetable, ["export", project.manifestPath, "--to", project.root + "/e1"], environment: environment)
        _ = try Self.fresh(project)
        let e2 = try run(Products.imagetable, ["export", project.manifestPath, "--output", project.root + "/fresh", "--to", project.root + "/e2"],
                         environment: environment)
        #expect(e1.status == 0 && e2.status == 0, "\(e1.stderr)\(e2.stderr)")
        #expect(FileManager.default.contents(atPath: project.root + "/e1/small.imagetable")
                == FileManager.default.contents(atPath: project.root + "/e2/small.imagetable"))
        // The export's entries keep the family's tag (they were written untagged), so a bake
        // into the exported tables still sees a later change of the family.
        let baked = Set(try ImageTableReader(path: project.tables + "/small.imagetable").entries().map(\.familyTag))
        let exported = try ImageTableReader(path: project.root + "/e1/small.imagetable").entries().map(\.familyTag)
        #expect(baked.count == 1 && !baked.contains(FamilyTag.unknown) && exported == [UInt16](repeating: baked.first!, count: 2), "\(exported)")
    }

    /// Two members whose resizes have the same area (300x200 and 200x300, both `fill`) and a
    /// smaller one resized from one of them: which one depended on the manifest's order of the
    /// formats (and on which of them a call drew), so a reordered manifest and a rebuilt sibling
    /// left the small format's pixels off a fresh bake's, under the same tag.
    @Test func theOrderOfFormatsAndWhichAreDrawnChangeNoPixel() throws {
        let a = "      a: {size: 300x200, fit: fill, style: 32BitBGRA, maximumCount: 10}\n"
        let b = "      b: {size: 200x300, fit: fill, style: 32BitBGRA, maximumCount: 10}\n"
        let c = "      c: {size: 50x50, style: 32BitBGRA, maximumCount: 10}\n"
        let project = try BakeProject(formats: a + b + c)
        try project.add("p0.jpg", from: Corpus.photo("Landscape_1"))
        try project.add("p1.jpg", from: Corpus.photo("Portrait_1"))
        _ = try Self.bake(project)
        let first = try #require(try project.entries()["c.imagetable"])
        try project.editManifest { $0.replacingOccurrences(of: a + b, with: b + a) }
        #expect(try Self.bake(project).stdout.contains("0 decoded, 2 unchanged"))
        // b rebuilt in another style: only b is drawn, a and c planned beside it.
        try project.editManifest { $0.replacingOccurrences(of: "b: {size: 200x300, fit: fill, style: 32BitBGRA", with: "b: {size: 200x300, fit: fill, style: 32BitBGR") }
        _ = try Self.bake(project)
        let other = project.root + "/fresh"
        #expect(try run(Products.imagetable, ["bake", project.manifestPath, "--output", other, "--no-progress"]).status == 0)
        let fresh = try project.entries()
        #expect(fresh["c.imagetable"] == first)
        for name in ["a.imagetable", "b.imagetable", "c.imagetable"] {
            let fromFresh = Dictionary(uniqueKeysWithValues: try ImageTableReader(path: other + "/" + name).entries().map {
                ($0.key, "\($0.sourceUUID) \($0.pixelChecksum)")
            })
            #expect(fresh[name] == fromFresh, "\(name)")
        }
    }

    /// Clears every committed record's family tag, as a build before tags wrote it (the record
    /// checksum made again).
    static func untag(_ path: String) throws {
        var bytes = try #require(FileManager.default.contents(atPath: path).map(Array.init))
        let layout = try ImageTableReader(path: path).layout
        for slot in 0..<layout.capacity {
            let o = layout.recordOffset(slot)
            guard bytes[o + 16] == 1 else { continue }
            bytes[o + 62] = 0
            bytes[o + 63] = 0
            let crc = CRC32.checksum(Array(bytes[(o + 24)..<(o + 256)]))
            for i in 0..<4 { bytes[o + 20 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Entries from a build before tags are taken as drawn for the family as it is, and tagged
    /// by the next bake, so that a later change of the family's formats draws them again: they
    /// stayed untagged, and were never drawn again.
    @Test func untaggedEntriesAreTaggedAndFollowLaterChanges() throws {
        let project = try Self.project()
        _ = try Self.bake(project)
        try Self.untag(project.tables + "/small.imagetable")
        #expect(try ImageTableReader(path: project.tables + "/small.imagetable").entries().map(\.familyTag) == [0, 0])
        #expect(try Self.bake(project).stdout.contains("0 decoded, 2 unchanged"))
        let tags = try ImageTableReader(path: project.tables + "/small.imagetable").entries().map(\.familyTag)
        #expect(tags.count == 2 && tags.allSatisfy { $0 != FamilyTag.unknown }, "\(tags)")
        // `inspect` shows them, as 4 hex digits.
        let inspect = try run(Products.imagetable, ["inspect", project.tables + "/small.imagetable", "--format", "json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(inspect.stdout.utf8)) as? [String: Any])
        let entries = try #require(((document["tables"] as? [[String: Any]])?.first)?["entries"] as? [[String: Any]])
        #expect(entries.map { $0["familyTag"] as? String } == tags.map { String(format: "%04x", $0) }, "\(entries)")
        try project.editManifest { $0 + Self.large }
        #expect(try Self.bake(project).stderr.contains(Self.notice + " drew 2 again"))
        #expect(try project.entries()["small.imagetable"] == (try Self.fresh(project)))
    }

    @Test func theTagIgnoresNamesStylesAndRepeats() throws {
        let a = TableFormat(name: "a", width: 32, height: 32, style: .bgr32, capacity: 1)
        var b = a
        b.name = "b"
        b.style = .grayscale8
        b.rendering.cornerRadius = 4
        #expect(FamilyTag.signature(of: [a]) == FamilyTag.signature(of: [a, b]) && FamilyTag.of([a]) == FamilyTag.of([b, a]))
        var c = a
        c.rendering.fit = .contain
        #expect(FamilyTag.signature(of: [a]) != FamilyTag.signature(of: [a, c]))
        #expect(FamilyTag.signature(of: [a, c]) == "pipeline=\(TableFormat.pipelineRenderingVersion)\n"
                + "32x32 fit=contain crop=centre upscale=0\n32x32 fit=cover crop=centre upscale=0")
        #expect(FamilyTag.of([a]) != FamilyTag.unknown)
    }
}
