import Foundation
import ImageTableCore
import TestSupport
import Testing

/// Two manifests may share an output directory, but not a table: a format of the same name in
/// each made both bake one file, each rebuilding or pruning the other's entries at every run.
@Suite struct SharedTableTests {
    /// The other manifest of ``StateTests/otherManifest(_:include:style:)``, with its format
    /// named `name` and its family `family`, reading `src2` (one photo, `b.jpg`).
    static func otherManifest(_ project: BakeProject, format name: String, family: String = "drawings") throws -> String {
        let other = try StateTests.otherManifest(project, include: nil, style: "32BitBGRA")
        try String(contentsOfFile: other, encoding: .utf8).replacingOccurrences(of: "drawing:", with: name + ":")
            .replacingOccurrences(of: "drawings:", with: family + ":").replacingOccurrences(of: "sources: src", with: "sources: src2")
            .write(toFile: other, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: project.root + "/src2", withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: project.root + "/src2/b.jpg") {
            try FileManager.default.copyItem(atPath: Corpus.photo("Landscape_2"), toPath: project.root + "/src2/b.jpg")
        }
        return other
    }

    /// The bake of the manifest that did not bake the table last is refused before the table is
    /// opened (`shared-table`, exit 1), and the table keeps every entry: with another family it
    /// was rebuilt empty and every source decoded again at every bake; with the same family,
    /// `--prune` deleted the other manifest's entries. Renaming the format settles it.
    @Test(arguments: ["drawings", "photos"])
    func aTableAnotherManifestBakesIsRefused(family: String) throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 4}\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        #expect(try run(Products.imagetable, ["bake", project.manifestPath]).status == 0)
        let other = try Self.otherManifest(project, format: "thumb", family: family)
        let mine = URL(fileURLWithPath: project.manifestPath).resolvingSymlinksInPath().path
        for extra in [[], ["--prune"], ["--dry-run"]] {
            let refused = try run(Products.imagetable, ["bake", "other.yaml"] + extra, in: project.root)
            #expect(refused.status == 1 && refused.stderr == "tables/thumb.imagetable: error: \(mine) bakes this table too (format 'thumb' "
                    + "of its family 'photos') and baked it last; two manifests cannot share a table, as each bake would rebuild or prune "
                    + "the other's entries: rename the format 'thumb' in one of them, or give one its own output [shared-table]\n",
                    "\(extra): \(refused.stderr)")
        }
        let again = try run(Products.imagetable, ["bake", project.manifestPath])
        #expect(again.status == 0 && again.stdout.contains("0 decoded, 1 unchanged") && !again.stdout.contains("rebuilt"), "\(again.stdout)")
        #expect(try ImageTableReader(path: project.tables + "/thumb.imagetable").entries().map(\.key) == ["a.jpg"])
        // Its own name: both bake, every run.
        try String(contentsOfFile: other, encoding: .utf8).replacingOccurrences(of: "thumb:", with: "sketch:")
            .write(toFile: other, atomically: true, encoding: .utf8)
        #expect(try run(Products.imagetable, ["bake", other, "--prune"]).status == 0)
        #expect(try run(Products.imagetable, ["bake", project.manifestPath, "--prune"]).stdout.contains("0 decoded, 1 unchanged"))
    }

    /// A manifest that baked a table once is no claim when it no longer names the table, has
    /// gone, or the table itself has: each was refused for ever, where the last bake's record
    /// alone decided.
    @Test func aClaimEndsWithTheOtherManifestsFormatOrFile() throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 4}\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        #expect(try run(Products.imagetable, ["bake", project.manifestPath]).status == 0)
        // The format moved from the first manifest to the other: the other takes the table.
        try project.editManifest { $0.replacingOccurrences(of: "thumb:", with: "small:") }
        let other = try Self.otherManifest(project, format: "thumb")
        let moved = try run(Products.imagetable, ["bake", other])
        #expect(moved.status == 0 && moved.stdout.contains("rebuilt"), "\(moved.stdout)\(moved.stderr)")
        // The other manifest deleted: the first may take it back.
        try project.editManifest { $0.replacingOccurrences(of: "small:", with: "thumb:") }
        #expect(try run(Products.imagetable, ["bake", project.manifestPath]).status == 1)
        try FileManager.default.removeItem(atPath: other)
        #expect(try run(Products.imagetable, ["bake", project.manifestPath]).status == 0)
        // The table deleted: whoever bakes next makes it.
        _ = try Self.otherManifest(project, format: "thumb")
        #expect(try run(Products.imagetable, ["bake", other]).status == 1)
        try FileManager.default.removeItem(atPath: project.tables + "/thumb.imagetable")
        #expect(try run(Products.imagetable, ["bake", other]).status == 0)
    }

    /// The check compared the other manifest's own `output` with this bake's, so two bakes into
    /// one `--output` directory rebuilt each other's table unchecked; and an identical copy of
    /// a manifest (a second clone, a release's older copy) was refused, though neither bake
    /// rebuilds or prunes what the other made.
    @Test func theClaimHoldsUnderOutputAndNotForTheSameBake() throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 4}\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        #expect(try run(Products.imagetable, ["bake", "manifest.yaml", "--output", "shared"], in: project.root).status == 0)
        _ = try Self.otherManifest(project, format: "thumb")
        let refused = try run(Products.imagetable, ["bake", "other.yaml", "--output", "shared"], in: project.root)
        #expect(refused.status == 1 && refused.stderr.hasPrefix("shared/thumb.imagetable: error: ") && refused.stderr.hasSuffix("[shared-table]\n"),
                "\(refused.stderr)")
        try FileManager.default.copyItem(atPath: project.manifestPath, toPath: project.root + "/copy.yaml")
        #expect(try run(Products.imagetable, ["bake", "copy.yaml"], in: project.root).status == 0)
        for manifest in ["manifest.yaml", "copy.yaml"] {
            let same = try run(Products.imagetable, ["bake", manifest], in: project.root)
            #expect(same.status == 0 && same.stdout.contains("0 decoded, 1 unchanged"), "\(manifest): \(same.stdout)\(same.stderr)")
        }
    }

    /// A copy of a project (`cp -a`, a second CI workspace) bakes while the original is still
    /// there: the state copied with it named the original's manifests, which bake the
    /// original's tables, not the copy's, and the copy was refused (`shared-table`). The
    /// recorded paths are rebased onto the copy: each of its manifests bakes (a second one
    /// sharing the output too), another manifest is still held to the claim before the copy's
    /// own has baked, and a table the copy's manifest no longer names is its orphan.
    @Test func aCopyOfAProjectBakesBesideTheOriginal() throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 4}\n"
                                      + "      wide: {size: 8x4, style: 32BitBGRA, maximumCount: 4}\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        try "version: 1\noutput: tables\nfamilies:\n  icons:\n    sources: src\n    formats:\n      small: {size: 4x4, style: 8BitGrayscale, maximumCount: 4}\n"
            .write(toFile: project.root + "/second.yaml", atomically: true, encoding: .utf8)
        for manifest in ["manifest.yaml", "second.yaml"] {
            #expect(try run(Products.imagetable, ["bake", manifest], in: project.root).status == 0)
        }
        let copy = project.root + "-copy"
        try FileManager.default.copyItem(atPath: project.root, toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        // Before the copy's own manifest has baked there, another one is refused its table.
        let other = try Self.otherManifest(project, format: "thumb")
        let refused = try run(Products.imagetable, ["bake", other, "--output", copy + "/tables", "--allow-outside-paths"], in: project.root)
        #expect(refused.status == 1 && refused.stderr.hasSuffix("[shared-table]\n") && refused.stderr.contains("\(copy)/manifest.yaml"),
                "\(refused.stderr)")
        for (directory, manifest) in [(copy, "manifest.yaml"), (copy, "second.yaml"), (project.root, "manifest.yaml"), (project.root, "second.yaml"),
                                      (copy, "second.yaml"), (copy, "manifest.yaml")] {
            let again = try run(Products.imagetable, ["bake", manifest], in: directory)
            #expect(again.status == 0 && again.stdout.contains("0 decoded, 1 unchanged"), "\(directory) \(manifest): \(again.stdout)\(again.stderr)")
        }
        // The copy's manifest drops a format: the table is its orphan, not the original's.
        try String(contentsOfFile: copy + "/manifest.yaml", encoding: .utf8).replacingOccurrences(of: "      wide: {size: 8x4, style: 32BitBGRA, maximumCount: 4}\n", with: "")
            .write(toFile: copy + "/manifest.yaml", atomically: true, encoding: .utf8)
        let orphaned = try run(Products.imagetable, ["bake", "manifest.yaml"], in: copy)
        #expect(orphaned.status == 0 && orphaned.stderr.contains("wide.imagetable") && orphaned.stderr.contains("[orphan-table]"),
                "\(orphaned.stderr)")
    }

    /// Two bakes of one table at once: the second checked the record before the first had
    /// written it, waited for the first's locks, then rebuilt the table the first had just
    /// written, exit 0 both. The second now checks once it holds the locks.
    @Test func aBakeThatWaitedForTheLocksChecksTheClaimAfter() throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 4}\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        _ = try Self.otherManifest(project, format: "thumb")
        // At the first bake's plan (its locks held), the other manifest's bake starts, and has
        // time to reach the locks before the first goes on. Started with no descriptor of the
        // hook's (the hook runner waits for those to close).
        let hook = project.root + "/start-other"
        let command = "cd '\(project.root)' && '\(Products.imagetable)' bake other.yaml > other.out 2>&1; echo \\$? > other.status"
        try writeExecutable("""
            #!/bin/sh
            [ "$1" = planned ] && [ ! -e "\(project.root)/started" ] || exit 0
            touch "\(project.root)/started"
            python3 -c 'import subprocess, sys; subprocess.Popen(["sh", "-c", sys.argv[1]], close_fds=True, start_new_session=True, \
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)' "\(command)"
            sleep 1
            exit 0

            """, to: hook)
        let first = try run(Products.imagetable, ["bake", "manifest.yaml"], in: project.root, environment: ["IMAGETABLE_TEST_HOOK": hook])
        #expect(first.status == 0, "\(first.stderr)")
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: project.root + "/other.status") && Date() < deadline { usleep(20_000) }
        usleep(50_000)
        let status = try String(contentsOfFile: project.root + "/other.status", encoding: .utf8)
        let output = try String(contentsOfFile: project.root + "/other.out", encoding: .utf8)
        #expect(status == "1\n" && output.contains("[shared-table]"), "\(status) \(output)")
        #expect(try ImageTableReader(path: project.tables + "/thumb.imagetable").entries().map(\.key) == ["a.jpg"])
    }

    /// The first bakes of two manifests sharing a directory, run at once: each warned of the
    /// table the other was writing as one "no bake recorded which manifest made it". A table of
    /// no recorded manifest whose lock another process holds is said to be being written.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock"), "flock (util-linux) holds a lock"))
    func anUnrecordedTableBeingWrittenIsSaidToBe() throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 4}\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        let other = try StateTests.otherManifest(project, include: nil, style: "8BitGrayscale")
        #expect(try run(Products.imagetable, ["bake", other]).status == 0)
        _ = try StateTests.statePaths(project, running: "DELETE FROM formats WHERE table_file = 'manifest/drawing.imagetable'")
        let script = "flock '\(project.tables)/drawing.imagetable.lock' sleep 2 & sleep 0.3; "
            + "'\(Products.imagetable)' bake manifest.yaml; wait"
        let result = try run("/bin/sh", ["-c", script], in: project.root)
        #expect(result.stderr.contains("tables/drawing.imagetable: warning: no format of the manifest names this table, and another process "
                                       + "is writing it (another manifest's bake?); left alone [orphan-table]"), "\(result.stderr)")
    }
}
