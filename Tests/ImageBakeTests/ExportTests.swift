import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing

/// `imagetable export`: the bytes it writes depend on the sources and the manifest alone.
@Suite struct ExportTests {
    static let formats = BakeProject.fourStyles(size: 24, maximumCount: 50) + """
              inside:
                size: 30x20
                style: 32BitBGRA
                maximumCount: 50
                fit: inside
              few:
                size: 16x16
                style: 16BitBGR
                maximumCount: 7

        """
    static let epoch: UInt64 = 1_700_000_000

    /// Nine photos (the direct JPEG path) and three PNGs (libvips, one with alpha), each with its
    /// own modification time, so that the 7-slot format leaves the same ones out in every copy.
    static func project() throws -> BakeProject {
        let project = try BakeProject(formats: formats)
        var sources = (0...8).map { ("photos/l\($0).jpg", Corpus.photo("Landscape_\($0)")) }
        sources += ["basn6a08", "basn2c08", "tbrn2c08"].map { ("png/\($0).png", Corpus.png($0)) }
        for (i, (key, path)) in sources.enumerated() {
            try project.add(key, from: path)
            project.setModified(key, secondsAgo: 100 + i * 10)
        }
        return project
    }

    /// Runs `imagetable` with `SOURCE_DATE_EPOCH` set to `epoch`, or unset when `nil`.
    private func imagetable(_ arguments: [String], in directory: String, epoch: UInt64? = ExportTests.epoch) throws -> ProcessResult {
        guard let epoch else {
            return try run("/usr/bin/env", ["-u", "SOURCE_DATE_EPOCH", Products.imagetable] + arguments, in: directory)
        }
        return try run(Products.imagetable, arguments, in: directory, environment: ["SOURCE_DATE_EPOCH": "\(epoch)"])
    }

    private func files(in directory: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            out[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        }
        return out
    }

    @Test func bakesWithOneAndEightJobsInTwoDirectoriesExportTheSameBytes() throws {
        let (a, b) = (try Self.project(), try Self.project())
        for (project, jobs) in [(a, "1"), (b, "8")] {
            let bake = try imagetable(["bake", "--jobs", jobs, "manifest.yaml"], in: project.root)
            #expect(bake.status == 0, "\(bake.stderr)")
            let export = try imagetable(["export", "manifest.yaml", "--to", "out"], in: project.root)
            #expect(export.status == 0, "\(export.stderr)")
        }
        let (left, right) = (try files(in: a.root + "/out"), try files(in: b.root + "/out"))
        #expect(Set(left.keys) == ["index.json", "bgra.imagetable", "bgr.imagetable", "rgb555.imagetable", "grey.imagetable",
                                   "inside.imagetable", "few.imagetable"])
        for (name, bytes) in left {
            #expect(right[name] == bytes, "\(name) differs between the -j 1 and the -j 8 export")
        }
        // The index's digests are what sha256sum computes.
        let index = try #require(ExportIndex.read(directory: a.root + "/out"))
        #expect(index.sourceDateEpoch == Self.epoch && index.tables.count == 6)
        let sums = try run("/usr/bin/env", ["sha256sum"] + index.tables.map(\.file), in: a.root + "/out")
        #expect(sums.stdout == index.tables.map { "\($0.sha256)  \($0.file)\n" }.joined())
        #expect(index.tables.first { $0.file == "few.imagetable" }?.entries == 7)
        #expect(index.tables.first { $0.file == "bgra.imagetable" }?.entries == 12)
    }

    @Test func anExportedTableIsCanonical() throws {
        let project = try Self.project()
        _ = try project.bake(jobs: 4)
        let export = try imagetable(["export", "manifest.yaml", "--to", "out", "--format", "json"], in: project.root)
        #expect(export.status == 0, "\(export.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: export.output) as? [String: Any])
        #expect(document["ok"] as? Bool == true && document["sourceDateEpoch"] as? Int == Int(Self.epoch))
        for name in ["bgra", "inside", "few"] {
            let path = project.root + "/out/\(name).imagetable"
            let original = try ImageTableReader(path: project.tables + "/\(name).imagetable")
            let reader = try ImageTableReader(path: path)
            #expect(reader.header.createdAt == Self.epoch)
            #expect(reader.clock == UInt64(reader.count) && reader.changeCount == UInt64(reader.count))
            let entries = reader.entries()
            #expect(entries.map(\.key) == original.entries().map(\.key).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
            #expect(entries.map(\.slot) == Array(0..<entries.count))
            #expect(entries.map(\.recency) == (1...UInt64(entries.count)).map { $0 })
            #expect(entries.allSatisfy { $0.writtenAt == Self.epoch })
            for entry in entries {
                let before = try #require(original.entry(forKey: entry.key))
                #expect(entry.sourceUUID == before.sourceUUID && entry.contentRect == before.contentRect)
                let same = try original.withImage(forKey: entry.key) { old in
                    try reader.withImage(forKey: entry.key) { new in
                        (0..<old.height).allSatisfy { Array(old.row($0)) == Array(new.row($0)) }
                    }
                }
                #expect(same == .some(.some(true)), "\(name): \(entry.key)")
            }
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect(attributes[.size] as? Int == reader.layout.slotOffset(entries.count))
            #expect((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 == Double(Self.epoch))
            #expect(TableVerifier.verify(path: path).isValid)
        }
        // Without SOURCE_DATE_EPOCH every time is 0.
        let again = try imagetable(["export", "manifest.yaml", "--to", "out"], in: project.root, epoch: nil)
        #expect(again.status == 0)
        #expect(try ImageTableReader(path: project.root + "/out/bgra.imagetable").header.createdAt == 0)
    }

    /// A destination below a file names the file, as the bake does ("lstat failed: Not a
    /// directory [not-found]" said nothing of which part, and nothing was missing).
    @Test func aDestinationBelowAFileNamesIt() throws {
        let project = try Self.project()
        _ = try project.bake()
        let result = try imagetable(["export", "manifest.yaml", "--to", "manifest.yaml/exp"], in: project.root)
        #expect(result.status == 1 && result.stderr == "manifest.yaml/exp: error: cannot create the directory: manifest.yaml exists "
                + "and is not a directory [not-a-directory]\n", "\(result.stderr)")
    }

    @Test func aDirectoryOfOtherFilesIsNeverReplaced() throws {
        let project = try Self.project()
        _ = try project.bake()
        let before = try files(in: project.tables)
        let intoTables = try imagetable(["export", "manifest.yaml", "--to", "tables"], in: project.root)
        #expect(intoTables.status == 1)
        #expect(intoTables.stderr.hasPrefix("tables: error: is not an earlier export") && intoTables.stderr.hasSuffix("[not-an-export]\n"))
        #expect(try files(in: project.tables) == before)
        // An earlier export with a file added is not one any more.
        #expect(try imagetable(["export", "manifest.yaml", "--to", "out"], in: project.root).status == 0)
        #expect(FileManager.default.createFile(atPath: project.root + "/out/notes.txt", contents: Data("mine".utf8)))
        let extra = try imagetable(["export", "manifest.yaml", "--to", "out"], in: project.root)
        #expect(extra.status == 1 && extra.stderr == "out: error: holds 'notes.txt', which the export there did not write, so it is not replaced [not-an-export]\n")
        #expect(FileManager.default.fileExists(atPath: project.root + "/out/notes.txt"))
        // Nothing is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: project.root).filter { $0.hasPrefix(".out.") }.isEmpty)
    }

    /// An export that something read under its tables' locks (a merge of it, `export --output`
    /// of it, a cache) holds their lock files: it is still an export and is replaced; a name its
    /// index lists that is a directory is not the export's, and it is never replaced with it.
    @Test func lockFilesGoWithTheSetAndAListedDirectoryIsNotTheExports() throws {
        let project = try Self.project()
        _ = try project.bake()
        #expect(try imagetable(["export", "manifest.yaml", "--to", "out"], in: project.root).status == 0)
        let merged = try imagetable(["merge", "combined", "out"], in: project.root)
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(FileManager.default.fileExists(atPath: project.root + "/out/few.imagetable.lock"))
        let again = try imagetable(["export", "manifest.yaml", "--to", "out"], in: project.root)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(!FileManager.default.fileExists(atPath: project.root + "/out/few.imagetable.lock"))
        // A lock that is held is a writer in the set (a runtime cache): not replaced under it.
        do {
            let held = try TableLock(tablePath: project.root + "/out/few.imagetable", timeout: 0)
            defer { held.release() }
            var before = stat()
            stat(project.root + "/out", &before)
            let locked = try imagetable(["export", "manifest.yaml", "--to", "out", "--lock-timeout", "0"], in: project.root)
            #expect(locked.status == 1 && locked.stderr.contains("[locked]"), "\(locked.stderr)")
            var after = stat()
            stat(project.root + "/out", &after)
            #expect(before.st_ino == after.st_ino, "the export replaced a set a writer holds")
        }
        // The index lists few.imagetable; a directory of that name holds someone's files.
        let table = project.root + "/out/few.imagetable"
        try FileManager.default.removeItem(atPath: table)
        try FileManager.default.createDirectory(atPath: table, withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: table + "/notes.txt", contents: Data("mine".utf8)))
        let directory = try imagetable(["export", "manifest.yaml", "--to", "out"], in: project.root)
        #expect(directory.status == 1 && directory.stderr == "out: error: holds 'few.imagetable', which is not a file, so it is not the "
                + "export's and the directory is not replaced [not-an-export]\n", "\(directory.stderr)")
        #expect(FileManager.default.contents(atPath: table + "/notes.txt") == Data("mine".utf8))
    }

    /// A link to a directory would be replaced itself, not the directory readers reach: refused,
    /// saying so (it was "exists and is not a directory").
    @Test func aLinkIsRefusedAsOne() throws {
        let project = try Self.project()
        _ = try project.bake()
        try FileManager.default.createDirectory(atPath: project.root + "/dist", withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: project.root + "/link", withDestinationPath: "dist")
        let link = try imagetable(["export", "manifest.yaml", "--to", "link"], in: project.root)
        #expect(link.status == 1 && link.stderr == "link: error: is a symbolic link, which an export would replace rather than the "
                + "directory it points to; give the directory it points to (dist) [not-an-export]\n", "\(link.stderr)")
        // A relative target is named from here, not from the link's directory.
        try FileManager.default.createDirectory(atPath: project.root + "/sub/dist", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: project.root + "/sub/link", withDestinationPath: "dist")
        let nested = try imagetable(["export", "manifest.yaml", "--to", "sub/link"], in: project.root)
        #expect(nested.status == 1 && nested.stderr.hasSuffix("give the directory it points to (sub/dist) [not-an-export]\n"), "\(nested.stderr)")
    }

    /// A mount point cannot be swapped by a rename: refused before any work (it failed at the
    /// end, "rename failed: Device or resource busy"); a staging directory that cannot be made
    /// is said of the destination as given, not of the staging directory's name of the run.
    @Test(.enabled(if: MergeTests.canMount, "needs to mount a tmpfs"))
    func aMountPointOrAReadOnlyParentIsSaidOfTheDestination() throws {
        let project = try Self.project()
        _ = try project.bake()
        let volume = project.root + "/volume"
        try FileManager.default.createDirectory(atPath: volume, withIntermediateDirectories: true)
        #expect(try run("/bin/mount", ["-t", "tmpfs", "-o", "size=8m", "none", volume]).status == 0)
        defer { _ = try? run("/bin/umount", [volume]) }
        let mounted = try imagetable(["export", "manifest.yaml", "--to", "volume"], in: project.root)
        #expect(mounted.status == 1 && mounted.stderr == "volume: error: is a mount point, which an export cannot replace in one step; "
                + "give a directory inside it, such as volume/tables, and point readers there [not-an-export]\n", "\(mounted.stderr)")
        #expect(try imagetable(["export", "manifest.yaml", "--to", "volume/tables"], in: project.root).status == 0)
        #expect(try run("/bin/mount", ["-o", "remount,ro", volume]).status == 0)
        let readOnly = try imagetable(["export", "manifest.yaml", "--to", "volume/dist"], in: project.root)
        #expect(readOnly.status == 1 && readOnly.stderr.hasPrefix("volume/dist: error: cannot make the export's staging directory "
                + "beside it (.dist.export-") && readOnly.stderr.contains(" in volume): mkdir failed: Read-only file system"), "\(readOnly.stderr)")
    }

    /// The project baked, then one byte of `few.imagetable`'s first entry flipped, at the offset
    /// `place` gives for the table's layout and the entry's slot; returns the project and the table.
    static func bakedWithAFlippedByte(at place: (TableLayout, Int) -> Int) throws -> (project: BakeProject, table: String) {
        let project = try Self.project()
        _ = try project.bake()
        let path = project.tables + "/few.imagetable"
        let reader = try ImageTableReader(path: path)
        let slot = try #require(reader.entries().first?.slot)
        try invertByte(in: path, at: place(reader.layout, slot))
        return (project, path)
    }

    /// A table whose pixels no longer match their checksum is not exported: exit 1, the code,
    /// and no destination.
    @Test func aDamagedTableIsRefused() throws {
        let (project, _) = try Self.bakedWithAFlippedByte { layout, slot in layout.slotOffset(slot) + 3 }
        let damaged = try imagetable(["export", "manifest.yaml", "--to", "out"], in: project.root)
        #expect(damaged.status == 1 && damaged.stderr.hasPrefix("tables/few.imagetable: error: ")
                && damaged.stderr.hasSuffix("[pixel-checksum-mismatch]\n"), "\(damaged.stderr)")
        #expect(!FileManager.default.fileExists(atPath: project.root + "/out"))
    }

    /// A damaged record, a FIFO or a directory where a table should be, is refused (exit 1, its code): the
    /// record was left out and the export exited 0, and the FIFO hung the export for ever while
    /// it held every table's lock.
    @Test func aDamagedRecordOrAFIFOIsRefused() throws {
        let (project, path) = try Self.bakedWithAFlippedByte { layout, slot in layout.recordOffset(slot) + 100 }
        let damaged = try imagetable(["export", "manifest.yaml", "--to", "out"], in: project.root)
        #expect(damaged.status == 1 && damaged.stderr.hasSuffix("[damaged-record]\n"), "\(damaged.stderr)")
        // It refuses the export; the reader's "skipped it" would say the record was left out.
        #expect(damaged.stderr.contains("nothing exported") && !damaged.stderr.contains("skipped it"), "\(damaged.stderr)")
        #expect(!FileManager.default.fileExists(atPath: project.root + "/out"))
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o644) == 0)
        let fifo = try run("/usr/bin/timeout", ["20", Products.imagetable, "export", "manifest.yaml", "--to", "out"], in: project.root,
                           environment: ["SOURCE_DATE_EPOCH": "\(Self.epoch)"])
        #expect(fifo.status == 1 && fifo.stderr.contains("[not-a-table]"), "\(fifo.status) \(fifo.stderr) \(fifo.stdout)")
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let directory = try imagetable(["export", "manifest.yaml", "--to", "out"], in: project.root)
        #expect(directory.status == 1 && directory.stderr.hasSuffix("is a directory, not an image table [is-a-directory]\n"), "\(directory.stderr)")
        #expect(!FileManager.default.fileExists(atPath: project.root + "/out"))
    }

    @Test func aMissingStaleOrLockedTableIsRefused() throws {
        let project = try Self.project()
        let missing = try imagetable(["export", "manifest.yaml", "--to", "out"], in: project.root)
        #expect(missing.status == 1)
        #expect(missing.stderr == "tables/bgra.imagetable: error: no such table; bake the manifest before exporting it [not-found]\n")
        _ = try project.bake()
        try project.editManifest { $0.replacingOccurrences(of: "maximumCount: 7", with: "maximumCount: 8") }
        let stale = try imagetable(["export", "manifest.yaml", "--to", "out"], in: project.root)
        #expect(stale.status == 1 && stale.stderr.hasPrefix("tables/few.imagetable: error: the table was made with other parameters"))
        #expect(stale.stderr.hasSuffix("[stale-table]\n"))
        #expect(stale.stderr.contains("(capacity '7', expected '8')"), "the header's field that differs: \(stale.stderr)")
        _ = try project.bake()
        // An option only the header's hash holds: named from what the last bake recorded.
        try project.editManifest { $0.replacingOccurrences(of: "maximumCount: 8", with: "maximumCount: 8\n        cornerRadius: 2") }
        let rounded = try imagetable(["export", "manifest.yaml", "--to", "out"], in: project.root)
        #expect(rounded.status == 1 && rounded.stderr.contains("(corner radius in pixels: 0 → 2); bake the manifest first [stale-table]"),
                "\(rounded.stderr)")
        try FileManager.default.removeItem(atPath: project.tables + "/.imagetable-state.sqlite")
        let unknown = try imagetable(["export", "manifest.yaml", "--to", "out"], in: project.root)
        #expect(unknown.status == 1 && unknown.stderr.contains("(how its images are drawn: fit, crop, background, corner radius"),
                "without the bake state: \(unknown.stderr)")
        _ = try project.bake()
        let writer = try ImageTableWriter(path: project.tables + "/grey.imagetable", format: try project.manifest().formats[3])
        let locked = try imagetable(["export", "manifest.yaml", "--to", "out", "--lock-timeout", "0.2"], in: project.root)
        // Named as the bake names it, relative (it was the absolute path), with the wait asked for.
        #expect(locked.status == 1 && locked.stderr.hasPrefix("tables/grey.imagetable: error: process \(getpid()) is writing this table")
                && locked.stderr.hasSuffix("gave up after 0.2 s. Wait for it to finish or raise --lock-timeout [locked]\n"), "\(locked.stderr)")
        writer.close()
        #expect(!FileManager.default.fileExists(atPath: project.root + "/out"))
        #expect(try imagetable(["export", "manifest.yaml", "--to", "out"], in: project.root).status == 0)
    }

    /// An invalid manifest's JSON document carries its diagnostics, as `bake`'s does: it gave
    /// only `invalid-manifest`, "the manifest has errors", so CI could not tell why.
    @Test func anInvalidManifestsJSONSaysWhy() throws {
        let project = try Self.project()
        try project.editManifest { $0.replacingOccurrences(of: "style: 16BitBGR", with: "style: 16BitRGB") }
        let result = try imagetable(["export", "manifest.yaml", "--to", "out", "--format", "json"], in: project.root)
        #expect(result.status == 1)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect((document["error"] as? [String: String])?["code"] == "invalid-manifest")
        let diagnostics = try #require(document["diagnostics"] as? [[String: Any]])
        let text = try String(contentsOfFile: project.manifestPath, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().filter { $0.element.contains("16BitRGB") }
        #expect(lines.count == 2)
        #expect(diagnostics.map { "\($0["file"]!):\($0["line"]!) \($0["code"]!)" } == lines.map { "manifest.yaml:\($0.offset + 1) unknown-style" },
                "\(diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: project.root + "/out"))
    }

    @Test(arguments: ["", "12a", "-5", "1.5", "99999999999999999999"])
    func aSourceDateEpochThatIsNotWholeSecondsIsBadUsage(_ value: String) throws {
        let project = try Self.project()
        let result = try run(Products.imagetable, ["export", "manifest.yaml", "--to", "out"], in: project.root,
                             environment: ["SOURCE_DATE_EPOCH": value])
        #expect(result.status == 64)
        #expect(result.stderr.contains("SOURCE_DATE_EPOCH must be a whole number of seconds since 1970, not '\(value)'."))
    }
}
