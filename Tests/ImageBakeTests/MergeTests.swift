import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `imagetable merge`: what it keeps, what it refuses, and that its output is the old set or the
/// new one whenever it is killed.
@Suite struct MergeTests {
    static let formats = """
              thumb:
                size: 12x12
                style: 32BitBGRA
                maximumCount: 40
              grey:
                size: 8x6
                style: 8BitGrayscale
                maximumCount: 40

        """

    /// A project of `count` tile sources, baked as `shards` shards into `root/shard-K`.
    static func shardedProject(sources count: Int, shards: Int, formats: String = MergeTests.formats) throws -> BakeProject {
        let project = try BakeProject(formats: formats)
        for (i, tile) in PhotoTiles.first(count).enumerated() {
            try project.add("t\(i).jpg", from: tile)
            project.setModified("t\(i).jpg", secondsAgo: 1000 + 7 * i)
        }
        for k in 0..<shards {
            let bake = try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "\(k)/\(shards)", "--output",
                                                     project.root + "/shard-\(k)", "--no-progress", "--jobs", "1"])
            #expect(bake.status == 0, "\(bake.stderr)")
        }
        return project
    }

    /// Merges the project's shards into `merged/`, bakes every source once into its own tables,
    /// and expects each table of both to hold exactly `keys`.
    static func expectMergeSelectsOneBake(_ project: BakeProject, shards: Int, keys: Set<String>,
                                          sourceLocation: SourceLocation = #_sourceLocation) throws {
        let merged = try merge(project.root + "/merged", (0..<shards).map { project.root + "/shard-\($0)" })
        #expect(merged.status == 0, "\(merged.stderr)", sourceLocation: sourceLocation)
        let single = try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress"])
        #expect(single.status == 0, "\(single.stderr)", sourceLocation: sourceLocation)
        for name in ["thumb.imagetable", "grey.imagetable"] {
            let fromMerge = Set(try ImageTableReader(path: project.root + "/merged/" + name).entries().map(\.key))
            let one = Set(try ImageTableReader(path: project.tables + "/" + name).entries().map(\.key))
            #expect(one == keys, "\(name): one bake", sourceLocation: sourceLocation)
            #expect(fromMerge == one, "\(name): the merge selects what one bake does", sourceLocation: sourceLocation)
        }
    }

    static func merge(_ output: String, _ inputs: [String], _ extra: [String] = []) throws -> ProcessResult {
        try run(Products.imagetable, ["merge", output] + inputs + extra)
    }

    /// Every table file's bytes, by name: equal sets of tables are equal byte for byte.
    static func tableBytes(_ directory: String) -> [String: Data] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".imagetable") }
        return Dictionary(uniqueKeysWithValues: names.map { ($0, FileManager.default.contents(atPath: directory + "/" + $0) ?? Data()) })
    }

    /// A merge holds two descriptors per input table: under a low soft limit (1024 is usual,
    /// 500 shard tables), it failed "Too many open files" though the hard limit allowed more.
    /// The tool raises its soft limit to the hard one.
    @Test func aMergeOfManyTablesRaisesItsOpenFileLimit() throws {
        let shards = 12
        let project = try Self.shardedProject(sources: 4, shards: shards)
        let inputs = (0..<shards).map { project.root + "/shard-\($0)" }
        let merged = try run("/bin/sh", ["-c", "ulimit -S -n 40 && exec \"$@\"", "sh", Products.imagetable, "merge", project.root + "/merged"] + inputs)
        #expect(merged.status == 0, "\(merged.stderr)")
    }

    @Test func shardsMergeInAnyOrderIntoIdenticalTables() throws {
        let project = try Self.shardedProject(sources: 24, shards: 3)
        let shards = (0..<3).map { project.root + "/shard-\($0)" }
        let a = try Self.merge(project.root + "/a", shards)
        #expect(a.status == 0, "\(a.stderr)")
        #expect(a.stdout.hasPrefix("\(project.root)/a: merged 3 shards in "))
        #expect(a.stdout.contains("  \(project.root)/a/thumb.imagetable    24/40         0           0        0\n"), "\(a.stdout)")
        let b = try Self.merge(project.root + "/b", [shards[2], shards[0], shards[1]])
        #expect(b.status == 0)
        let tablesA = Self.tableBytes(project.root + "/a")
        #expect(tablesA.count == 2 && tablesA == Self.tableBytes(project.root + "/b"), "merging in another order gave other bytes")
        let reader = try ImageTableReader(path: project.root + "/a/thumb.imagetable")
        #expect(reader.entries().map(\.key) == (0..<24).map { "t\($0).jpg" }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        #expect(TableVerifier.verify(path: project.root + "/a/thumb.imagetable").isValid)
        // Merging again replaces the output whole, with the same bytes.
        #expect(try Self.merge(project.root + "/a", shards).status == 0)
        #expect(Self.tableBytes(project.root + "/a") == tablesA)
        // A name of one character, made and then replaced: Foundation's parent of "M" was SIGILL.
        for _ in 0..<2 {
            let short = try run(Products.imagetable, ["merge", "M"] + shards, in: project.root)
            #expect(short.status == 0 && short.stdout.hasPrefix("M: merged 3 shards in "), "\(short.status) \(short.stderr)")
        }
        #expect(Self.tableBytes(project.root + "/M") == tablesA)
    }

    /// More entries than a table holds: the merge keeps the most recently modified sources, as
    /// a bake of all of them on one machine does, whichever shards they come from.
    @Test func anOverFullMergeKeepsWhatOneBakeWouldKeep() throws {
        let small = Self.formats.replacingOccurrences(of: "maximumCount: 40", with: "maximumCount: 10")
        let project = try Self.shardedProject(sources: 24, shards: 4, formats: small)
        let merged = try Self.merge(project.root + "/merged", (0..<4).map { project.root + "/shard-\($0)" }, ["--format", "json"])
        #expect(merged.status == 0, "\(merged.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(merged.stdout.utf8)) as? [String: Any])
        let tables = try #require(doc["tables"] as? [[String: Any]])
        #expect(tables.map { $0["leftOut"] as? Int } == [14, 14] && tables.map { $0["entries"] as? Int } == [10, 10])
        #expect(doc["shards"] as? Int == 4 && doc["ok"] as? Bool == true)
        // The ten most recently modified: t0 … t9 (each source is 7 s older than the one before).
        let single = try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress"])
        #expect(single.status == 0)
        for name in ["thumb.imagetable", "grey.imagetable"] {
            let keys = try ImageTableReader(path: project.root + "/merged/" + name).entries().map(\.key)
            #expect(Set(keys) == Set((0..<10).map { "t\($0).jpg" }))
            #expect(Set(keys) == Set(try ImageTableReader(path: project.tables + "/" + name).entries().map(\.key)))
        }
    }

    /// A source touched without changing, so that it is now among the most recently modified:
    /// its shard's re-bake decodes nothing but records the new time in its entries, and the
    /// merge selects it as one bake of every source does (it ranked by the time of its first
    /// bake, and the merge kept another source in its place).
    @Test func aTouchedSourceRanksByItsNewTimeInAnOverFullMerge() throws {
        let small = Self.formats.replacingOccurrences(of: "maximumCount: 40", with: "maximumCount: 10")
        let project = try Self.shardedProject(sources: 24, shards: 4, formats: small)
        // t0 … t9 are the ten newest; t20, 140 s older than t0, becomes the newest of all.
        project.setModified("t20.jpg", secondsAgo: 10)
        for k in 0..<4 {
            let bake = try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "\(k)/4", "--output", project.root + "/shard-\(k)",
                                                     "--no-progress", "--jobs", "1", "--format", "json"])
            #expect(bake.status == 0, "\(bake.stderr)")
            let doc = try #require(try JSONSerialization.jsonObject(with: Data(bake.stdout.utf8)) as? [String: Any])
            #expect((doc["sources"] as? [String: Any])?["decoded"] as? Int == 0, "shard \(k) decodes nothing")
        }
        try Self.expectMergeSelectsOneBake(project, shards: 4, keys: Set(["t20.jpg"] + (0..<9).map { "t\($0).jpg" }))
    }

    /// The newest source deleted, the shards re-baked without `--prune`: its shard keeps the
    /// entry, which records no time, so the over-full merge ranks it after every present source
    /// and selects what one bake does (it ranked by the deleted file's time, and kept it over a
    /// present source).
    @Test func aGoneSourceRanksLastInAnOverFullMerge() throws {
        let small = Self.formats.replacingOccurrences(of: "maximumCount: 40", with: "maximumCount: 10")
        let project = try Self.shardedProject(sources: 24, shards: 4, formats: small)
        try FileManager.default.removeItem(atPath: project.sources + "/t0.jpg")
        for k in 0..<4 {
            let bake = try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "\(k)/4", "--output", project.root + "/shard-\(k)",
                                                     "--no-progress", "--jobs", "1"])
            #expect(bake.status == 0, "\(bake.stderr)")
        }
        let held = try (0..<4).flatMap { k in
            try ImageTableReader(path: project.root + "/shard-\(k)/thumb.imagetable").entries().filter { $0.key == "t0.jpg" }
        }
        #expect(held.count == 1 && held.first?.sourceModifiedNs == 0, "its shard keeps the entry, with no time: \(held)")
        try Self.expectMergeSelectsOneBake(project, shards: 4, keys: Set((1...10).map { "t\($0).jpg" }))
    }

    @Test func directoriesThatDoNotGoTogetherAreRefused() throws {
        let project = try Self.shardedProject(sources: 8, shards: 2)
        let s0 = project.root + "/shard-0", s1 = project.root + "/shard-1", out = project.root + "/out"
        // Another manifest: the same tables, one of them drawn another way.
        let other = try BakeProject(formats: Self.formats.replacingOccurrences(of: "size: 12x12", with: "size: 12x12\n        cornerRadius: 3"))
        for (i, tile) in PhotoTiles.first(8).enumerated() { try other.add("t\(i).jpg", from: tile) }
        let o1 = other.root + "/shard-1"
        #expect(try run(Products.imagetable, ["bake", other.manifestPath, "--shard", "1/2", "--output", o1, "--no-progress"]).status == 0)
        let mixed = try Self.merge(out, [s0, o1])
        #expect(mixed.status == 1)
        let hash = { (path: String) in (try? ImageTableReader(path: path))?.header.parametersHash.map { String(format: "%02x", $0) }.joined() ?? "" }
        #expect(mixed.stderr == "\(o1)/thumb.imagetable: error: was made with other parameters than \(s0)/thumb.imagetable "
                + "(parameter hash \(hash(o1 + "/thumb.imagetable")) ≠ \(hash(s0 + "/thumb.imagetable"))): the directories were not baked "
                + "from one manifest [manifest-mismatch]\n")
        #expect(!FileManager.default.fileExists(atPath: out), "nothing is written")
        let missing = try Self.merge(out, [s0])
        #expect(missing.status == 1 && missing.stderr == "\(s0): error: 1 of the 2 shards of its split is missing: 1/2 [shard-mismatch]\n",
                "\(missing.stderr)")
        let twice = try Self.merge(out, [s0, s1, s0])
        #expect(twice.status == 1 && twice.stderr.contains("given twice") && twice.stderr.contains("[shard-mismatch]"))
        // An output that is not a merge's is never replaced.
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: out + "/notes.txt"))
        let occupied = try Self.merge(out, [s0, s1])
        #expect(occupied.status == 1 && occupied.stderr.contains("was not made by imagetable merge") && occupied.stderr.contains("[output-failed]"))
        #expect(FileManager.default.contents(atPath: out + "/notes.txt") == Data("keep".utf8))
        try FileManager.default.removeItem(atPath: s1 + "/grey.imagetable")
        let lacking = try Self.merge(project.root + "/out2", [s0, s1])
        #expect(lacking.status == 1 && lacking.stderr == "\(s1): error: has no grey.imagetable, which \(s0) has: the directories were not "
                + "baked from one manifest [manifest-mismatch]\n")
        #expect(try Self.merge(s0, [s0]).status == 1)
        // A table that is a directory is said to be one, as inspect says it.
        try FileManager.default.createDirectory(atPath: s1 + "/grey.imagetable", withIntermediateDirectories: false)
        let directory = try Self.merge(project.root + "/out3", [s0, s1])
        #expect(directory.status == 1 && directory.stderr == "\(s1)/grey.imagetable: error: is a directory, not an image table [is-a-directory]\n")
    }

    /// Whole bakes of parts of a collection (no shards) may overlap: a key two of them hold keeps
    /// the entry made from the more recently modified source. A damaged entry is left out.
    @Test func overlappingBakesKeepTheNewerSourceAndDamageIsLeftOut() throws {
        let first = try BakeProject(formats: Self.formats), second = try BakeProject(formats: Self.formats)
        let tiles = PhotoTiles.first(6)
        for i in 0..<4 { try first.add("t\(i).jpg", from: tiles[i]); first.setModified("t\(i).jpg", secondsAgo: 500) }
        for i in 2..<6 { try second.add("t\(i).jpg", from: tiles[5 - i]); second.setModified("t\(i).jpg", secondsAgo: 100) }
        _ = try first.bake()
        _ = try second.bake()
        let out = first.root + "/merged"
        let merged = try Self.merge(out, [first.tables, second.tables])
        #expect(merged.status == 0, "\(merged.stderr)")
        let reader = try ImageTableReader(path: out + "/thumb.imagetable")
        #expect(reader.entries().map(\.key) == (0..<6).map { "t\($0).jpg" })
        let newer = try ImageTableReader(path: second.tables + "/thumb.imagetable")
        for key in ["t2.jpg", "t3.jpg"] { #expect(reader.entry(forKey: key)?.sourceUUID == newer.entry(forKey: key)?.sourceUUID) }
        #expect(merged.stdout.contains("6/40         0           2        0"), "\(merged.stdout)")

        let slot = try #require(newer.entry(forKey: "t4.jpg")?.slot)
        try invertByte(in: second.tables + "/thumb.imagetable", at: newer.layout.slotOffset(slot) + 5)
        let damaged = try Self.merge(out, [first.tables, second.tables])
        #expect(damaged.status == 3)
        #expect(damaged.stderr == "\(second.tables)/thumb.imagetable: warning: slot \(slot) ('t4.jpg'): pixel checksum mismatch; "
                + "left out of the merge [pixel-checksum-mismatch]\n")
        #expect(try ImageTableReader(path: out + "/thumb.imagetable").entries().count == 5)
        // In JSON, as a bake's warnings are: the input table, the code, the message.
        let json = try Self.merge(out, [first.tables, second.tables], ["--format", "json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let warnings = try #require(document["warnings"] as? [[String: String]], "\(json.stdout)")
        #expect(warnings == [["path": "\(second.tables)/thumb.imagetable", "code": "pixel-checksum-mismatch",
                              "message": "slot \(slot) ('t4.jpg'): pixel checksum mismatch; left out of the merge"]])

        // A damaged winner of a key both inputs hold gives way to the sound copy, where the key
        // was dropped whole.
        let older = try ImageTableReader(path: first.tables + "/thumb.imagetable")
        let t3 = try #require(newer.entry(forKey: "t3.jpg")?.slot)
        try invertByte(in: second.tables + "/thumb.imagetable", at: newer.layout.slotOffset(t3) + 5)
        let fallback = try Self.merge(out, [first.tables, second.tables])
        #expect(fallback.status == 3 && fallback.stderr.contains("('t3.jpg'): pixel checksum mismatch"), "\(fallback.stderr)")
        let kept = try ImageTableReader(path: out + "/thumb.imagetable")
        #expect(kept.entries().count == 5 && kept.entry(forKey: "t3.jpg")?.sourceUUID == older.entry(forKey: "t3.jpg")?.sourceUUID)
        #expect(try kept.withImage(forKey: "t3.jpg") { Array($0.bytes) } == (try older.withImage(forKey: "t3.jpg") { Array($0.bytes) }))
    }

    /// Two spellings of one name (NFC and NFD) are one key to a merge, as to a bake (which keeps
    /// one and reports the other `ambiguous-name`): the spelling a bake keeps (NFC) wins, though
    /// the other's source is newer, so that a bake of the same sources agrees and a lookup of
    /// the NFC spelling finds it. A merge that took them for two keys (comparing bytes) kept
    /// both, and a later bake pruned one; one that kept the newer spelling had it replaced.
    @Test func canonicallyEqualSpellingsAreOneKey() throws {
        let (nfc, nfd) = ("caf\u{E9}.jpg", "cafe\u{301}.jpg")
        #expect(Array(nfc.utf8) != Array(nfd.utf8))
        let first = try BakeProject(formats: Self.formats), second = try BakeProject(formats: Self.formats)
        let tiles = PhotoTiles.first(3)
        try first.add(nfc, from: tiles[0])
        first.setModified(nfc, secondsAgo: 500)
        try second.add(nfd, from: tiles[1])
        second.setModified(nfd, secondsAgo: 100)
        try second.add("cafz.jpg", from: tiles[2])
        _ = try first.bake()
        _ = try second.bake()
        let merged = try Self.merge(first.root + "/merged", [first.tables, second.tables])
        #expect(merged.status == 0, "\(merged.stderr)")
        let entries = try ImageTableReader(path: first.root + "/merged/thumb.imagetable").entries()
        // Written in byte order: `cafz` (z, 0x7A) before `café` (é, 0xC3 0xA9).
        #expect(entries.map { Array($0.key.utf8) } == [Array("cafz.jpg".utf8), Array(nfc.utf8)], "\(entries.map(\.key))")
        let older = try ImageTableReader(path: first.tables + "/thumb.imagetable")
        #expect(entries.last?.sourceUUID == older.entry(forKey: nfc)?.sourceUUID)
    }

    /// A table file whose name is not UTF-8 is named by its bytes and refused (`name-not-utf8`):
    /// Foundation's listing decoded it to U+FFFD, so the merge said a file that is there was
    /// `not-found`, and made a lock file under the mangled name in the input.
    @Test func aTableFileNamedOutsideUTF8IsRefusedByItsBytes() throws {
        let project = try BakeProject(formats: Self.formats)
        try project.add("a.jpg", from: PhotoTiles.first(1)[0])
        _ = try project.bake()
        let input = project.root + "/in"
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: project.tables + "/thumb.imagetable", toPath: input + "/thumb.imagetable")
        let odd = Array((input + "/x").utf8) + [0xFF] + Array(".imagetable".utf8) + [0]
        #expect(odd.withUnsafeBufferPointer { link(project.tables + "/thumb.imagetable", UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self)) } == 0)
        let merged = try Self.merge(project.root + "/merged", [input])
        #expect(merged.status == 1 && merged.stderr.contains("/in/x\\xFF.imagetable: error: a table file whose name is not UTF-8"), "\(merged.stderr)")
        #expect(merged.stderr.hasSuffix("[name-not-utf8]\n"), "\(merged.stderr)")
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: input)).contains { $0.contains("\u{FFFD}") && $0.hasSuffix(".lock") })
    }

    /// A record whose key is not its entity's, its checksum made over the forged key, is left
    /// out with a warning (exit 3): the merge copied it, and `verify` failed the merged table.
    @Test func aRecordWhoseKeyIsNotItsEntitysIsLeftOut() throws {
        let project = try Self.shardedProject(sources: 6, shards: 2)
        let shards = (0..<2).map { project.root + "/shard-\($0)" }
        let table = shards[0] + "/thumb.imagetable"
        let reader = try ImageTableReader(path: table)
        let victim = try #require(reader.entries().first)
        let forged = "x" + victim.key.dropFirst()
        try forgeRecord(in: table, at: reader.layout.recordOffset(victim.slot)) { record in
            record.replaceSubrange(96..<96 + forged.utf8.count, with: Array(forged.utf8))
        }
        let merged = try Self.merge(project.root + "/merged", shards)
        #expect(merged.status == 3, "\(merged.stderr)")
        #expect(merged.stderr.contains("slot \(victim.slot) ('\(forged)'): key does not match entity UUID; left out of the merge [damaged-record]"),
                "\(merged.stderr)")
        let keys = Set(try ImageTableReader(path: project.root + "/merged/thumb.imagetable").entries().map(\.key))
        #expect(!keys.contains(forged) && !keys.contains(victim.key) && keys.count == 5, "\(keys.sorted())")
        #expect(try run(Products.imagetable, ["verify", project.root + "/merged/thumb.imagetable"]).status == 0)
    }

    /// An over-full merge whose selected entry is damaged admits the next source in rank, where
    /// it left the slot empty.
    @Test func aDamagedEntryOfAnOverFullMergeGivesItsPlaceToTheNext() throws {
        let small = Self.formats.replacingOccurrences(of: "maximumCount: 40", with: "maximumCount: 10")
        let project = try Self.shardedProject(sources: 24, shards: 2, formats: small)
        let shards = (0..<2).map { project.root + "/shard-\($0)" }
        // t0 … t9 are the ten newest; damage t0's pixels, wherever it is.
        let holder = try #require(shards.first { (try? ImageTableReader(path: $0 + "/thumb.imagetable").entry(forKey: "t0.jpg")) != nil })
        let reader = try ImageTableReader(path: holder + "/thumb.imagetable")
        try invertByte(in: holder + "/thumb.imagetable", at: reader.layout.slotOffset(try #require(reader.entry(forKey: "t0.jpg")).slot) + 5)
        let merged = try Self.merge(project.root + "/merged", shards)
        #expect(merged.status == 3, "\(merged.stderr)")
        let keys = Set(try ImageTableReader(path: project.root + "/merged/thumb.imagetable").entries().map(\.key))
        #expect(keys == Set((1...10).map { "t\($0).jpg" }), "\(keys.sorted())")
    }

    /// From a review: inputs inside the output are refused (the merge replaced them, with the
    /// output); a shard whose bake still holds its tables is waited for, then refused (`locked`),
    /// never merged half done; a damaged record is a warning and exit 3 (it was dropped in
    /// silence); a table that cannot be opened is named with its path.
    @Test func inputsInsideTheOutputLockedShardsAndDamagedRecordsAreNotMergedSilently() throws {
        let project = try Self.shardedProject(sources: 12, shards: 2)
        let shards = (0..<2).map { project.root + "/shard-\($0)" }
        let nest = project.root + "/nest"
        #expect(try Self.merge(nest, shards).status == 0)
        let inside = nest + "/shards"
        try FileManager.default.createDirectory(atPath: inside, withIntermediateDirectories: true)
        for (k, shard) in shards.enumerated() { try FileManager.default.copyItem(atPath: shard, toPath: inside + "/\(k)") }
        let nested = try Self.merge(nest, [inside + "/0", inside + "/1"])
        #expect(nested.status == 1 && nested.stderr.contains("is inside the output directory, which the merge replaces whole"), "\(nested.stderr)")
        #expect(FileManager.default.fileExists(atPath: inside + "/0/thumb.imagetable"), "the inputs are untouched")

        let writer = try ImageTableWriter(path: shards[1] + "/grey.imagetable", format: try project.manifest().formats[1],
                                          options: .init(lockTimeout: 1, durability: .processCrashOnly))
        let locked = try Self.merge(project.root + "/while-baking", shards, ["--lock-timeout", "0.2"])
        writer.close()
        #expect(locked.status == 1 && locked.stderr.contains("[locked]"), "\(locked.stderr)")
        #expect(!FileManager.default.fileExists(atPath: project.root + "/while-baking"))

        let table = shards[0] + "/thumb.imagetable"
        let reader = try ImageTableReader(path: table)
        let entry = try #require(reader.entries().first)
        try invertByte(in: table, at: reader.layout.recordOffset(entry.slot) + 100)
        let damaged = try Self.merge(project.root + "/damaged", shards)
        #expect(damaged.status == 3 && damaged.stderr.contains("[damaged-record]"), "\(damaged.status) \(damaged.stderr)")

        // OUT a symbolic link: the merge would put a directory in place of the link.
        #expect(symlink(project.root + "/damaged", project.root + "/link") == 0)
        let linked = try Self.merge(project.root + "/link", shards)
        #expect(linked.status == 1 && linked.stderr.contains("\(project.root)/link: error: is a symbolic link, which the merge would replace "
                                                              + "with a directory; give the directory it points to (\(project.root)/damaged)"),
                "\(linked.stderr)")
        // With a trailing slash, which makes lstat follow the link.
        let slashed = try Self.merge(project.root + "/link/", shards)
        #expect(slashed.status == 1 && slashed.stderr.contains("is a symbolic link"), "\(slashed.stderr)")
        var st = stat()
        #expect(lstat(project.root + "/link", &st) == 0 && st.st_mode & S_IFMT == S_IFLNK)

        // A bake killed mid-write leaves a record with an odd generation: refused, as export
        // refuses it (it was merged without the entry, exit 0 and no warning).
        let other = shards[1] + "/thumb.imagetable"
        let slot = try #require(try ImageTableReader(path: other).entries().first?.slot)
        try Self.setLowBit(in: other, at: ImageTableReader(path: other).layout.recordOffset(slot))
        let interrupted = try Self.merge(project.root + "/interrupted", shards)
        #expect(interrupted.status == 1 && interrupted.stderr.contains("\(other): error: 1 interrupted write of a bake that was stopped, "
                                                                        + "slot \(slot) first; bake that directory again, which completes it, "
                                                                        + "before merging [interrupted-write]"), "\(interrupted.stderr)")
        #expect(!FileManager.default.fileExists(atPath: project.root + "/interrupted"))

        try Data("not a table".utf8).write(to: URL(fileURLWithPath: shards[1] + "/grey.imagetable"))
        let broken = try Self.merge(project.root + "/broken", shards)
        #expect(broken.status == 1 && broken.stderr.hasPrefix(shards[1] + "/grey.imagetable: error: "), "\(broken.stderr)")
        // The fatal JSON names the inputs it was given.
        let json = try Self.merge(project.root + "/broken", shards, ["--format", "json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(json.status == 1 && document["inputs"] as? [String] == shards && document["fatal"] != nil, "\(document)")
    }

    /// An entry a shard's table holds but does not serve (its slot cut off the file) is left out
    /// of the merge, and the warning names its key, where it named only the slot: the merged set
    /// lacks that source.
    @Test func anEntryLeftOutIsNamedByItsKey() throws {
        let project = try Self.shardedProject(sources: 6, shards: 2)
        let shards = (0..<2).map { project.root + "/shard-\($0)" }
        let table = shards[0] + "/thumb.imagetable"
        let reader = try ImageTableReader(path: table)
        let last = try #require(reader.entries().max { $0.slot < $1.slot })
        #expect(truncate(table, off_t(reader.layout.slotOffset(last.slot))) == 0)
        let merged = try Self.merge(project.root + "/merged", shards)
        #expect(merged.status == 3 && merged.stderr.contains("\(table): warning: slot \(last.slot) ('\(last.key)'): slot lies beyond the end "
                                                           + "of the file; left out of the merge [damaged-record]"), "\(merged.stderr)")
    }

    /// An earlier merge's output is replaced whole, so it may hold only what merges and bakes put
    /// there: a file or directory of someone else's in it was deleted with the old set, exit 0.
    @Test func anOutputHoldingAnythingButTablesAndABakeStateIsNotReplaced() throws {
        let project = try Self.shardedProject(sources: 6, shards: 2)
        let shards = (0..<2).map { project.root + "/shard-\($0)" }
        let out = project.root + "/site"
        #expect(try Self.merge(out, shards).status == 0)
        // A bake into the output (its state, its tables' locks): still a merge's to replace.
        let bake = try run(Products.imagetable, ["bake", project.manifestPath, "--output", out, "--no-progress"])
        #expect(bake.status == 0 && FileManager.default.fileExists(atPath: out + "/.imagetable-state.sqlite"), "\(bake.stderr)")
        #expect(try Self.merge(out, shards).status == 0)
        let before = Self.tableBytes(out)

        for (name, make) in [("NOTES.txt", { try Data("release notes".utf8).write(to: URL(fileURLWithPath: out + "/NOTES.txt")) }),
                             ("other", { try FileManager.default.createDirectory(atPath: out + "/other", withIntermediateDirectories: false) }),
                             ("old.imagetable", { try FileManager.default.createDirectory(atPath: out + "/old.imagetable", withIntermediateDirectories: false) })]
            as [(String, () throws -> Void)] {
            try make()
            let refused = try Self.merge(out, shards)
            #expect(refused.status == 1 && refused.stderr == "\(out): error: holds '\(name)', which is no table of a merge's and would be "
                    + "deleted with the set it replaces; move it, or give another directory [output-failed]\n", "\(refused.stderr)")
            #expect(FileManager.default.fileExists(atPath: out + "/" + name) && Self.tableBytes(out).filter { $0.key != name } == before,
                    "\(name): nothing replaced")
            try FileManager.default.removeItem(atPath: out + "/" + name)
        }
        // Another manifest's table baked there (`--output`): the marker lists the merge's own.
        try Data("another manifest's".utf8).write(to: URL(fileURLWithPath: out + "/other.imagetable"))
        let other = try Self.merge(out, shards)
        #expect(other.status == 1 && other.stderr.contains("holds 'other.imagetable', which is no table of a merge's"), "\(other.stderr)")
        #expect(FileManager.default.fileExists(atPath: out + "/other.imagetable"))
        // A marker that lists no tables (a build's before the list, or damaged) vouches for none;
        // and a name equal to a listed one only as Strings (KELVIN SIGN for K) is not that table.
        for text in ["{\"version\": 1, \"inputs\": 2, \"shards\": 2}\n", "not json", "{\"tables\": \"other.imagetable\"}"] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: out + "/.imagetable-merge"))
            #expect(try Self.merge(out, shards).status == 1, "\(text)")
        }
        try FileManager.default.moveItem(atPath: out + "/other.imagetable", toPath: out + "/thumb\u{212A}.imagetable")
        try Data("{\"version\": 1, \"tables\": [\"thumbK.imagetable\"]}".utf8).write(to: URL(fileURLWithPath: out + "/.imagetable-merge"))
        #expect(try Self.merge(out, shards).status == 1)
        try FileManager.default.removeItem(atPath: out + "/thumb\u{212A}.imagetable")
        #expect(try Self.merge(out, shards).status == 0)
        let marker = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/.imagetable-merge"))) as? [String: Any])
        #expect(marker["tables"] as? [String] == ["grey.imagetable", "thumb.imagetable"] && marker["shards"] as? Int == 2, "\(marker)")
    }

    /// What appears in the output while the merge waits for a writer of it is checked too, under
    /// the writers' locks: it was checked only as the merge began, and went with the old set.
    @Test func anOutputIsCheckedAgainOnceItsWritersAreGone() throws {
        let project = try Self.shardedProject(sources: 6, shards: 2)
        let shards = (0..<2).map { project.root + "/shard-\($0)" }
        let out = project.root + "/site"
        #expect(try Self.merge(out, shards).status == 0)
        let reader = try ImageTableReader(path: out + "/thumb.imagetable")
        let writer = try TableWriterLock(tablePath: out + "/thumb.imagetable", protection: reader.header.protection, timeout: 1)
        let merge = Process()
        merge.executableURL = URL(fileURLWithPath: Products.imagetable)
        merge.arguments = ["merge", out] + shards + ["--lock-timeout", "60"]
        let errors = Pipe()
        merge.standardOutput = FileHandle.nullDevice
        merge.standardError = errors
        try merge.run()
        // Until it waits for the lock: its staging directory is complete by then, or nearly.
        usleep(1_500_000)
        try Data("release notes".utf8).write(to: URL(fileURLWithPath: out + "/NOTES.txt"))
        writer.release()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        merge.waitUntilExit()
        #expect(merge.terminationStatus == 1 && stderr.contains("holds 'NOTES.txt'"), "\(merge.terminationStatus): \(stderr)")
        #expect(FileManager.default.fileExists(atPath: out + "/NOTES.txt"))
    }

    /// Whether this machine lets the tests mount a tmpfs (root with the capability).
    static let canMount: Bool = {
        let point = NSTemporaryDirectory() + "mount-probe-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: point) }
        guard (try? run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "none", point]))?.status == 0 else { return false }
        _ = try? run("/bin/umount", [point])
        return true
    }()

    /// An output that is a mount point (a volume) cannot be swapped by a rename: refused before
    /// any work, saying to give a directory inside it (it failed after the whole merge with
    /// `renameat2 (exchange) failed: Device or resource busy`).
    @Test(.enabled(if: canMount, "needs to mount a tmpfs"))
    func aMountPointOutputIsRefusedAtOnceWithWhatToDo() throws {
        let project = try Self.shardedProject(sources: 4, shards: 2)
        let volume = project.root + "/volume"
        try FileManager.default.createDirectory(atPath: volume, withIntermediateDirectories: true)
        #expect(try run("/bin/mount", ["-t", "tmpfs", "-o", "size=8m", "none", volume]).status == 0)
        defer { _ = try? run("/bin/umount", [volume]) }
        let shards = (0..<2).map { project.root + "/shard-\($0)" }
        let refused = try Self.merge(volume, shards)
        #expect(refused.status == 1 && refused.stderr.contains("is a mount point, which the merge cannot replace in one step; "
                                                                + "give a directory inside it, such as \(volume)/tables"), "\(refused.stderr)")
        let inside = try Self.merge(volume + "/tables", shards)
        #expect(inside.status == 0, "\(inside.stderr)")
        #expect(try Self.merge(volume + "/tables", shards).status == 0, "and again, replacing it")
    }

    /// A disk that holds the merged tables but not the marker written after them (a tmpfs with
    /// inodes for the directories and the tables alone) is `no-space` in the system's words,
    /// naming the output; it was `output-failed`, "There isn't enough space", naming the staging
    /// directory the merge had already deleted (from a review's kill soak).
    @Test(.enabled(if: canMount, "needs to mount a tmpfs"))
    func aMarkerTheDiskCannotHoldIsNoSpace() throws {
        let project = try Self.shardedProject(sources: 4, shards: 2)
        let shards = (0..<2).map { project.root + "/shard-\($0)" }
        let tables = Self.tableBytes(shards[0]).count
        let volume = project.root + "/volume"
        try FileManager.default.createDirectory(atPath: volume, withIntermediateDirectories: true)
        // The volume's root, `in`, the staging directory and the tables.
        #expect(try run("/bin/mount", ["-t", "tmpfs", "-o", "size=64m,nr_inodes=\(3 + tables)", "none", volume]).status == 0)
        defer { _ = try? run("/bin/umount", [volume]) }
        try FileManager.default.createDirectory(atPath: volume + "/in", withIntermediateDirectories: false)
        let out = volume + "/in/out"
        let full = try Self.merge(out, shards)
        #expect(full.status == 1 && full.stderr.hasPrefix("\(out): error: cannot write the merge marker: create failed: No space left on device; "
                                                          + "free some disk space and try again [no-space]"), "\(full.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out) && MergeCrashTests.leftovers(of: out).isEmpty)
    }

    /// Makes the byte at `offset` odd: a record's generation, a write in progress.
    static func setLowBit(in path: String, at offset: Int) throws {
        let fd = open(path, O_RDWR)
        defer { close(fd) }
        var byte: UInt8 = 0
        #expect(pread(fd, &byte, 1, off_t(offset)) == 1)
        byte |= 1
        #expect(pwrite(fd, &byte, 1, off_t(offset)) == 1)
    }

}
