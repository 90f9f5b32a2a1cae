import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Bakes that converge: each scenario of the converging-bake issue, as it is written there.
@Suite struct ConvergenceTests {
    /// Small, quick sources: PngSuite's basic images.
    static let pool = ["basn0g08", "basn2c08", "basn3p08", "basn4a08", "basn6a08", "basi0g08", "basi2c08", "basi3p08",
                       "basi4a08", "basi6a08", "bgai4a08", "bgbn4a08", "bggn4a16", "bgwn6a08", "bgyn6a16", "ccwn2c08",
                       "ccwn3p08", "cdfn2c08", "cdhn2c08", "cdsn2c08", "cdun2c08", "ch1n3p04", "ch2n3p08", "cm0n0g04"]

    static func add(_ project: BakeProject, _ key: String, _ image: Int, secondsAgo: Int) throws {
        try project.add(key, from: Corpus.png(pool[image % pool.count]))
        project.setModified(key, secondsAgo: secondsAgo)
    }

    @Test func eighteenSourcesIntoSeventeenSlotsSettle() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 17))
        for i in 0..<18 { try Self.add(project, "s\(i).png", i, secondsAgo: 100 + i) }
        let first = try project.bake()
        #expect(first.decoded == 17 && first.leftOut == 1 && first.failed.isEmpty)
        #expect(first.tables.allSatisfy { $0.entries == 17 && $0.leftOut == 1 && $0.evicted == 0 })
        let second = try project.bake()
        #expect(second.decoded == 0 && second.unchanged == 17 && second.leftOut == 1, "an over-full family must not churn")
        #expect(second.tables.allSatisfy { $0.written == 0 && $0.evicted == 0 })
        let held = try ImageTableReader(path: project.tables + "/bgra.imagetable").entries().map(\.key)
        #expect(!held.contains("s17.png"), "the least recently modified is the one left out")
    }

    /// Cap 5, sources a…e; remove d and e, add `0new1` and `0new2`: two decodes, and the two
    /// evictions take the entries of the removed sources, never an unchanged one.
    @Test func newKeysEvictOnlyEntriesWhoseSourceIsGone() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 5))
        for (i, key) in ["a", "b", "c", "d", "e"].enumerated() { try Self.add(project, key + ".png", i, secondsAgo: 50) }
        _ = try project.bake()
        try FileManager.default.removeItem(atPath: project.sources + "/d.png")
        try FileManager.default.removeItem(atPath: project.sources + "/e.png")
        try Self.add(project, "0new1.png", 7, secondsAgo: 10)
        try Self.add(project, "0new2.png", 8, secondsAgo: 10)
        let plan = try project.bake { $0.dryRun = true }
        #expect(plan.decoded == 2 && plan.tables.allSatisfy { $0.written == 2 && $0.evicted == 2 })
        #expect(plan.plan?.tables.allSatisfy { Set($0.evictions) == ["d.png", "e.png"] } == true)
        let bake = try project.bake()
        #expect(bake.decoded == 2 && bake.unchanged == 3 && bake.removed == 2)
        #expect(bake.tables.allSatisfy { $0.written == 2 && $0.evicted == 2 && $0.entries == 5 })
        let keys = Set(try ImageTableReader(path: project.tables + "/grey.imagetable").entries().map(\.key))
        #expect(keys == ["a.png", "b.png", "c.png", "0new1.png", "0new2.png"])
    }

    /// A small format beside a large one in a family (the small table keeps its rows apart from
    /// the family's index): it follows the newest sources, takes a changed one in both tables
    /// with one decode, and a touched one into itself alone, evicting the oldest it held.
    @Test func aSmallFormatBesideALargeOneFollowsTheNewestSources() throws {
        let formats = """
                  big:
                    size: 8x8
                    style: 8BitGrayscale
                    maximumCount: 20
                  small:
                    size: 6x6
                    style: 8BitGrayscale
                    maximumCount: 2

            """
        let project = try BakeProject(formats: formats)
        for i in 0..<12 { try Self.add(project, "s\(i).png", i, secondsAgo: 500 - 10 * i) }
        let first = try project.bake()
        #expect(first.decoded == 12 && first.failed.isEmpty)
        func keys(_ table: String) throws -> Set<String> {
            Set(try ImageTableReader(path: project.tables + "/\(table).imagetable").entries().map(\.key))
        }
        #expect(try keys("small") == ["s10.png", "s11.png"] && (try keys("big")).count == 12)
        let quiet = try project.bake()
        #expect(quiet.decoded == 0 && quiet.unchanged == 12 && quiet.leftOut == 0)

        try Self.add(project, "s11.png", 20, secondsAgo: 100)  // new bytes, still the newest
        let changed = try project.bake()
        #expect(changed.decoded == 1 && changed.tables.allSatisfy { $0.written == 1 && $0.evicted == 0 })
        #expect(changed.plan?.jobs.map(\.status) == [.changed] && changed.plan?.jobs.first?.tables.count == 2)

        project.setModified("s3.png", secondsAgo: 50)  // the same bytes, now the newest
        let touched = try project.bake()
        #expect(touched.decoded == 1 && touched.plan?.jobs.first?.source.key == "s3.png" && touched.plan?.jobs.first?.tables.count == 1)
        #expect(touched.tables.first { $0.format == "small" }.map { $0.written == 1 && $0.evicted == 1 } == true)
        #expect(touched.tables.first { $0.format == "big" }?.written == 0)
        #expect(try keys("small") == ["s3.png", "s11.png"] && (try keys("big")).count == 12)
    }

    @Test func pruneDeletesEntriesOfGoneSourcesAndTablesNoFormatNames() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        for i in 0..<3 { try Self.add(project, "s\(i).png", i, secondsAgo: 50) }
        _ = try project.bake()
        try FileManager.default.removeItem(atPath: project.sources + "/s1.png")
        let kept = try project.bake()
        #expect(kept.removed == 1 && kept.tables.allSatisfy { $0.entries == 3 && $0.pruned == 0 }, "no --prune: kept")
        // A format renamed: its old table is reported, and deleted only with --prune.
        try project.renameFormat("grey", to: "gray")
        let reported = try project.bake()
        #expect(reported.warnings.contains { $0.description.hasSuffix("grey.imagetable: warning: no format of the manifest names this table; bake --prune deletes it [orphan-table]") })
        let pruned = try project.bake { $0.prune = true }
        #expect(pruned.tables.filter { $0.format != "gray" }.allSatisfy { $0.pruned == 1 && $0.entries == 2 })
        #expect(pruned.prunedTables.count == 1 && !FileManager.default.fileExists(atPath: project.tables + "/grey.imagetable"))
        let after = try project.bake { $0.prune = true }
        #expect(after.decoded == 0 && after.tables.allSatisfy { $0.pruned == 0 })
    }

    /// `bake --prune` says which tables it deleted, in its text summary and its JSON.
    /// A bake with nothing to do leaves every table as it was, its modification time included
    /// (it moved at every bake, a store of an unchanged count dirtying the header's page, which
    /// defeats tools that sync by time), and a dry run or `--list` leaves no file behind (a
    /// read-only connection left the state's `-wal` and `-shm`).
    @Test func aBakeWithNothingToDoTouchesNothing() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        try Self.add(project, "s0.png", 0, secondsAgo: 50)
        _ = try project.bake()
        func stamps() throws -> [String: Date] {
            let names = try FileManager.default.contentsOfDirectory(atPath: project.tables).filter { !$0.hasSuffix(".lock") }
            return try Dictionary(uniqueKeysWithValues: names.map {
                ($0, try #require(try FileManager.default.attributesOfItem(atPath: project.tables + "/" + $0)[.modificationDate] as? Date))
            })
        }
        let before = try stamps()
        usleep(20_000)
        for extra in [["--dry-run"], ["--list"], []] {
            let run = try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress"] + extra)
            #expect(run.status == 0, "\(extra): \(run.stderr)")
            let after = try stamps()
            let tables = after.filter { $0.key.hasSuffix(".imagetable") }
            #expect(tables == before.filter { $0.key.hasSuffix(".imagetable") }, "\(extra): \(after) against \(before)")
            #expect(Set(after.keys) == Set(before.keys), "\(extra) left \(Set(after.keys).subtracting(before.keys))")
        }
    }

    /// A table restored `0644` for `protection: complete` is one the bake mends and bakes as it
    /// was; its dry run and listing said every source would be decoded, as if it could not be
    /// read, and now plan what the bake then does, changing no mode.
    @Test func aDryRunPlansALoosenedTableAsTheBakeBakesIt() throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 10, protection: complete}\n")
        try Self.add(project, "s0.png", 0, secondsAgo: 50)
        try Self.add(project, "s1.png", 1, secondsAgo: 40)
        _ = try project.bake()
        let table = project.tables + "/thumb.imagetable"
        func mode() throws -> Int? { try FileManager.default.attributesOfItem(atPath: table)[.posixPermissions] as? Int }
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: table)
        let dry = try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress", "--dry-run"])
        #expect(dry.status == 0 && dry.stdout.contains("0 decoded, 2 unchanged, 0 failed"), "\(dry.stdout)")
        #expect(dry.stderr.contains("note: permissions 0644 are looser than its protection 'complete' allows; would set them to 0600"),
                "\(dry.stderr)")
        let list = try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress", "--list"])
        #expect(list.status == 0 && list.stdout == "unchanged photos  s0.png\nunchanged photos  s1.png\n", "\(list.stdout)")
        #expect(try mode() == 0o644)
        let bake = try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress"])
        #expect(bake.status == 0 && bake.stdout.contains("0 decoded, 2 unchanged, 0 failed"), "\(bake.stdout)")
        #expect(try mode() == 0o600)
    }

    @Test func prunedTablesAreReported() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        try Self.add(project, "s0.png", 0, secondsAgo: 50)
        _ = try project.bake()
        try project.renameFormat("grey", to: "gray")
        let text = try run(Products.imagetable, ["bake", project.manifestPath, "--prune", "--no-progress"])
        #expect(text.status == 0 && text.stdout.contains("grey.imagetable: deleted: no format of the manifest names this table (--prune)\n"),
                "\(text.stdout)")
        try project.renameFormat("gray", to: "grayscale")
        // A dry run's document lists what the bake would delete, as the bake's lists what it did
        // (it had only a warning), and deletes nothing.
        let dry = try run(Products.imagetable, ["bake", project.manifestPath, "--prune", "--dry-run", "--format", "json"])
        let dryDocument = try #require(try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])
        #expect((dryDocument["prunedTables"] as? [String])?.map { $0.hasSuffix("gray.imagetable") } == [true], "\(dryDocument)")
        #expect(warningLines(dryDocument)?.isEmpty == true, "\(dryDocument)")
        #expect(FileManager.default.fileExists(atPath: project.tables + "/gray.imagetable"))
        let dryText = try run(Products.imagetable, ["bake", project.manifestPath, "--prune", "--dry-run", "--no-progress"])
        #expect(dryText.stdout.contains("gray.imagetable: would delete: no format of the manifest names this table (--prune)\n"), "\(dryText.stdout)")
        let json = try run(Products.imagetable, ["bake", project.manifestPath, "--prune", "--format", "json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let pruned = try #require(document["prunedTables"] as? [String])
        #expect(pruned.count == 1 && pruned[0].hasSuffix("gray.imagetable"), "\(pruned)")
        #expect(!FileManager.default.fileExists(atPath: project.tables + "/gray.imagetable"))
        // A table that some process is writing (a runtime cache's own format) is left, and said so.
        let held = project.tables + "/cached.imagetable"
        let writer = try ImageTableWriter(path: held, format: TableFormat(name: "cached", family: "photos", width: 4, height: 4, style: .grayscale8,
                                                                          capacity: 2))
        defer { writer.close() }
        let kept = try run(Products.imagetable, ["bake", project.manifestPath, "--prune", "--no-progress"])
        #expect(kept.status == 0 && kept.stderr.contains("cached.imagetable: warning: no format of the manifest names this table, but "
                                                         + "another process is writing it, so --prune leaves it [orphan-table]"), "\(kept.stderr)")
        #expect(FileManager.default.fileExists(atPath: held) && FileManager.default.fileExists(atPath: held + ".lock"))
        // One of no family of the manifest, which no bake recorded (a runtime cache's, another
        // manifest's from an earlier build), is never pruned.
        let foreign = project.tables + "/foreign.imagetable"
        try ImageTableWriter(path: foreign, format: TableFormat(name: "foreign", width: 4, height: 4, style: .grayscale8, capacity: 2)).close()
        let left = try run(Products.imagetable, ["bake", project.manifestPath, "--prune", "--no-progress"])
        #expect(left.stderr.contains("foreign.imagetable: warning: no format of the manifest names this table (the table has no family), "
                                     + "and no bake recorded which manifest made it; --prune leaves it (delete it by hand if no manifest "
                                     + "bakes it) [orphan-table]"), "\(left.stderr)")
        #expect(FileManager.default.fileExists(atPath: foreign))
    }

    @Test func aRebuildNamesTheOptionThatChanged() throws {
        let project = try BakeProject(formats: "      thumb:\n        size: 8x8\n        style: 32BitBGRA\n        maximumCount: 4\n")
        try Self.add(project, "a.png", 0, secondsAgo: 50)
        _ = try project.bake()
        try project.editManifest { $0.replacingOccurrences(of: "maximumCount: 4", with: "maximumCount: 4\n        fit: contain\n        cornerRadius: 2") }
        let rebuilt = try project.bake()
        let notice = try #require(rebuilt.tables.first?.notices.first)
        #expect(rebuilt.tables.first?.reset == true && rebuilt.decoded == 1)
        #expect(notice.contains("fit: cover → contain") && notice.contains("corner radius in pixels: 0 → 2"), "\(notice)")
    }

    /// The state is a cache: deleting it costs one re-read of every source and changes no entry.
    @Test func deletingTheStateChangesNoEntry() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        for i in 0..<4 { try Self.add(project, "s\(i).png", i, secondsAgo: 50) }
        _ = try project.bake()
        let before = try project.entries()
        let state = project.tables + "/.imagetable-state.sqlite"
        #expect(FileManager.default.fileExists(atPath: state))
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: state + suffix) }
        let again = try project.bake()
        #expect(again.decoded == 0 && again.unchanged == 4)
        #expect(try project.entries() == before)
        #expect(FileManager.default.fileExists(atPath: state))
    }

    /// A source rewritten in place (same device and inode) and given its old modification time
    /// back with `touch -r`: its status change time still differs and, in the first case, its
    /// size. In the second the two images have the same size, so the change time is all that
    /// tells it (docs/BAKE.md, "What the stat fast path cannot see"). Either way it is read
    /// again and, its bytes being new, baked again.
    @Test(arguments: [("basn0g08", "basi0g08", false), ("basn0g04", "basn2c08", true)])
    func aModificationBehindAPreservedMtimeIsSeen(_ old: String, _ new: String, sameSize: Bool) throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        try project.add("a.png", from: Corpus.png(old))
        project.setModified("a.png", secondsAgo: 50)
        _ = try project.bake()
        let baked = try #require(try project.entries()["bgra.imagetable"]?["a.png"])
        let path = project.sources + "/a.png"
        let reference = project.root + "/reference"
        _ = FileManager.default.createFile(atPath: reference, contents: nil)
        #expect(try run("/usr/bin/touch", ["-r", path, reference]).status == 0)
        let before = try #require(FileStat(path: path))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: try Data(contentsOf: URL(fileURLWithPath: Corpus.png(new))))
        try handle.close()
        #expect(try run("/usr/bin/touch", ["-r", reference, path]).status == 0)
        let after = try #require(FileStat(path: path))
        #expect(after.device == before.device && after.inode == before.inode && after.modifiedNs == before.modifiedNs)
        #expect((after.size == before.size) == sameSize && after.changedNs != before.changedNs, "\(before) \(after)")
        let again = try project.bake()
        #expect(again.decoded == 1 && again.unchanged == 0 && again.tables.allSatisfy { $0.written == 1 && $0.evicted == 0 })
        #expect(try project.entries()["bgra.imagetable"]?["a.png"] != baked, "the entry is the new image's")
    }

    /// The over-full rule depends on the files alone: baked with `--jobs 1` and with `--jobs 3`,
    /// the same sources leave out the same ones and fill the tables with the same entries. Three
    /// sources share each modification time, so the ties (by key) decide too.
    @Test func theOverFullSelectionIsTheSameWhateverTheJobs() throws {
        let newest = Date().addingTimeInterval(-100)
        var tables: [[String: [String: String]]] = []
        for jobs in [1, 3] {
            let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 7))
            for i in 0..<12 {
                try Self.add(project, "s\(i).png", i, secondsAgo: 0)
                try FileManager.default.setAttributes([.modificationDate: newest.addingTimeInterval(Double(-10 * (i % 4)))],
                                                      ofItemAtPath: project.sources + "/s\(i).png")
            }
            let summary = try project.bake(jobs: jobs)
            #expect(summary.decoded == 7 && summary.leftOut == 5 && summary.failed.isEmpty, "--jobs \(jobs)")
            #expect(summary.plan?.tables.allSatisfy { $0.leftOut == ["s11.png", "s2.png", "s3.png", "s6.png", "s7.png"] } == true,
                    "--jobs \(jobs): \(summary.plan?.tables.map(\.leftOut) ?? [])")
            tables.append(try project.entries())
        }
        // Newest first (s0 s4 s8, then s1 s5 s9), then the first of the third time by key (s10).
        let selected: Set = ["s0.png", "s4.png", "s8.png", "s1.png", "s5.png", "s9.png", "s10.png"]
        #expect(tables[0].count == 4 && tables[0].values.allSatisfy { Set($0.keys) == selected }, "\(tables[0])")
        #expect(tables[1] == tables[0], "the same keys, the same source UUIDs and pixels")
    }

    @Test func listingSaysNewChangedUnchangedAndRemoved() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        for key in ["same", "edit", "gone"] { try Self.add(project, key + ".png", 0, secondsAgo: 50) }
        _ = try project.bake()
        try FileManager.default.removeItem(atPath: project.sources + "/gone.png")
        try FileManager.default.removeItem(atPath: project.sources + "/edit.png")
        try Self.add(project, "edit.png", 3, secondsAgo: 5)
        try Self.add(project, "fresh.png", 4, secondsAgo: 5)
        let result = try run(Products.imagetable, ["bake", project.manifestPath, "--list"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(lines == [["changed", "photos", "edit.png"], ["new", "photos", "fresh.png"], ["removed", "photos", "gone.png"],
                          ["unchanged", "photos", "same.png"]])
        #expect(try project.entries().values.allSatisfy { $0.count == 3 }, "--list touches nothing")
    }

    /// Under the default `include`, a `README.txt` is not a source; under `**/*` it is taken, then
    /// skipped with a warning for not being an image, and the bake succeeds.
    @Test func filesThatAreNotImagesAreNotFailures() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        try Self.add(project, "a.PNG", 0, secondsAgo: 50)
        project.add("README.txt", bytes: Array("about these photos\n".utf8))
        let plain = try run(Products.imagetable, ["bake", project.manifestPath])
        #expect(plain.status == 0 && plain.stdout.contains("baked 1 source ") && !plain.stderr.contains("README"), "\(plain.stdout)\(plain.stderr)")
        let everything = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10), include: "**/*")
        try Self.add(everything, "a.png", 0, secondsAgo: 50)
        everything.add("README.txt", bytes: Array("about these photos\n".utf8))
        let all = try run(Products.imagetable, ["bake", everything.manifestPath])
        #expect(all.status == 0 && all.stderr.contains("README.txt: warning: not an image") && all.stdout.contains("1 skipped"),
                "\(all.stdout)\(all.stderr)")
    }

    @Test func validateWarnsAboutFamiliesLargerThanAFormat() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 2))
        for i in 0..<3 { try Self.add(project, "s\(i).png", i, secondsAgo: 50) }
        let result = try run(Products.imagetable, ["validate", project.manifestPath])
        #expect(result.status == 0)
        #expect(result.stdout.contains("warning: family 'photos' has 3 sources but format 'bgra' holds 2 (maximumCount)")
                && result.stdout.contains("[more-sources-than-slots]"), "\(result.stdout)")
        // The bake says how many its plan leaves out.
        let bake = try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress"])
        #expect(bake.stderr.contains("warning: family 'photos' has 3 sources but format 'bgra' holds 2 (maximumCount); the 1 least recently modified is left out"),
                "\(bake.stderr)")
    }
}
