import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing

/// `bake --shard K/N`: which sources a shard takes (a documented hash every machine computes
/// alike), how `auto` reads a job engine's environment, and the rule that an output directory
/// holds one shard or one whole bake, never a mix.
@Suite struct ShardTests {
    /// The hash is the one docs/SCALE.md gives: SHA-1 of the key in NFC, its first 8 bytes
    /// big-endian, modulo N, here computed by Python's hashlib and unicodedata for comparison.
    @Test func theShardOfAKeyIsTheDocumentedHash() throws {
        let keys = (0..<200).map { "dir\($0 % 7)/photo-\($0).jpg" } + ["", "ünï/😀.png", "a b.jpg", "caf\u{E9}.jpg", "cafe\u{301}.jpg",
                                                                   "\u{AC00}\u{11A8}.jpg", "\u{AC01}.jpg"]
        let dir = try TemporaryDirectory()
        let input = try dir.write("keys.json", Array(try JSONSerialization.data(withJSONObject: keys)))
        let script = "import hashlib, json, sys, unicodedata\nkeys = json.load(open(sys.argv[1]))\n"
            + "print(json.dumps([[int.from_bytes(hashlib.sha1(unicodedata.normalize('NFC', k).encode()).digest()[:8], 'big') % n "
            + "for n in (1, 2, 3, 4, 7, 1000)] for k in keys]))"
        let python = try run("/usr/bin/env", ["python3", "-c", script, input])
        let expected = try #require(try JSONSerialization.jsonObject(with: Data(python.stdout.utf8)) as? [[Int]], "\(python.stderr)")
        for (key, shards) in zip(keys, expected) {
            #expect([1, 2, 3, 4, 7, 1000].map { KeyShard.shard(of: key, count: $0) } == shards, "\(key)")
        }
        // One name in two normalizations: one shard, whose scan keeps one of them.
        #expect((1...64).allSatisfy { KeyShard.shard(of: "caf\u{E9}.jpg", count: $0) == KeyShard.shard(of: "cafe\u{301}.jpg", count: $0) })
        // Hangul with a final consonant apart, which Foundation's direct composition leaves so on Linux.
        #expect((1...64).allSatisfy { KeyShard.shard(of: "\u{AC00}\u{11A8}.jpg", count: $0) == KeyShard.shard(of: "\u{AC01}.jpg", count: $0) })
        // The example in docs/SCALE.md.
        #expect(KeyShard.shard(of: "photos/cat.jpg", count: 4) == 1 && KeyShard.shard(of: "photos/cat.jpg", count: 3) == 2)
        let spread = Dictionary(grouping: keys.prefix(200)) { KeyShard.shard(of: $0, count: 4) }.mapValues(\.count)
        #expect(spread.count == 4 && spread.values.allSatisfy { $0 > 30 }, "\(spread)")
    }

    @Test func shardsComeFromTheOptionOrTheJobEngine() throws {
        func parse(_ text: String, _ env: [String: String] = [:]) -> String {
            do { return "\(try ShardSelection.parse(text, environment: env))" } catch { return error.message }
        }
        #expect(parse("2/4") == "2/4" && parse("0/1") == "0/1")
        #expect(parse("4/4") == "shard 4/4 is not a shard: K/N needs 0 ≤ K < N ≤ 1000000")
        #expect(parse("two/4") == "the shard 'two' is not a whole number" && parse("2") == "'2' is not K/N, auto or auto/N")
        #expect(parse("-1/4") == "the shard '-1' is not a whole number")
        // Kubernetes Indexed Job: the index from the environment, the count from the option.
        #expect(parse("auto/8", ["JOB_COMPLETION_INDEX": "5"]) == "5/8")
        #expect(parse("auto", ["JOB_COMPLETION_INDEX": "5"]).hasPrefix("JOB_COMPLETION_INDEX gives the shard but not how many"))
        // Slurm: the task's index is the shard; the count from the option, or from an array that
        // is exactly 0 … N−1.
        #expect(parse("auto", ["SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4"]) == "3/4")
        #expect(parse("auto", ["SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "3",
                               "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_STEP": "1"]) == "3/4")
        // A task resubmitted alone (sbatch --array=7) is shard 7 still, and needs auto/N.
        let resubmitted = ["SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "7", "SLURM_ARRAY_TASK_MAX": "7",
                           "SLURM_ARRAY_TASK_COUNT": "1", "SLURM_ARRAY_TASK_STEP": "1"]
        #expect(parse("auto/16", resubmitted) == "7/16")
        #expect(parse("auto", resubmitted).hasPrefix("SLURM_ARRAY_TASK_ID gives the shard, but this array is not 0 … N−1"))
        // Task 0 resubmitted alone is the array 0 … 0: not a split in one (it baked every source).
        let first = ["SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "0",
                     "SLURM_ARRAY_TASK_COUNT": "1", "SLURM_ARRAY_TASK_STEP": "1"]
        #expect(parse("auto", first).hasPrefix("SLURM_ARRAY_TASK_ID gives the shard, but this array is not 0 … N−1"))
        #expect(parse("auto/16", first) == "0/16")
        #expect(parse("auto", ["SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4"])
                .hasPrefix("SLURM_ARRAY_TASK_ID gives the shard, but this array is not 0 … N−1"))
        #expect(parse("auto", ["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "4"])
                .hasPrefix("SLURM_ARRAY_TASK_ID gives the shard, but this array is not 0 … N−1"))
        #expect(parse("auto/4", ["SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "5"]).hasPrefix("shard 4/4 is not a shard"))
        // Both set: the Kubernetes index wins (a Slurm job does not set it).
        #expect(parse("auto/3", ["JOB_COMPLETION_INDEX": "1", "SLURM_ARRAY_TASK_ID": "2"]) == "1/3")
        #expect(parse("auto") == "neither JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) nor SLURM_ARRAY_TASK_ID (a Slurm job array) is set")
    }

    /// Four shards bake every source exactly once between them, each into its own directory,
    /// which says which shard it holds; a directory is never shared.
    @Test func shardsSplitTheSourcesAndKeepToTheirDirectories() throws {
        let project = try BakeProject(formats: "      thumb:\n        size: 12x12\n        style: 8BitGrayscale\n        maximumCount: 100\n")
        let tiles = PhotoTiles.first(24)
        for (i, tile) in tiles.enumerated() { try project.add("t\(i).jpg", from: tile) }
        var seen: [String] = []
        var identities: Set<String> = []
        for k in 0..<4 {
            let out = project.root + "/shard-\(k)"
            let bake = try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "\(k)/4", "--output", out, "--no-progress"])
            #expect(bake.status == 0, "\(bake.stderr)")
            let keys = try ImageTableReader(path: out + "/thumb.imagetable").entries().map(\.key)
            #expect(keys.allSatisfy { KeyShard.shard(of: $0, count: 4) == k })
            #expect(bake.stdout.hasPrefix("\(project.manifestPath): baked \(keys.count) sources of shard \(k)/4 in "), "\(bake.stdout)")
            seen += keys
            // And the manifest's split identity, one for every shard.
            let marker = try String(contentsOfFile: out + "/.imagetable-shard", encoding: .utf8)
            let prefix = "{\"version\": 1, \"shard\": \(k), \"count\": 4, \"manifest\": \""
            #expect(marker.hasPrefix(prefix) && marker.hasSuffix("\"}\n") && marker.count == prefix.count + 64 + 3, "\(marker)")
            identities.insert(String(marker.dropFirst(prefix.count).prefix(64)))
            #expect(FileManager.default.fileExists(atPath: out + "/.imagetable-state.sqlite"))
        }
        #expect(seen.sorted() == (0..<24).map { "t\($0).jpg" }.sorted())
        #expect(identities.count == 1 && identities.first?.allSatisfy(\.isHexDigit) == true, "\(identities)")

        let shard0 = project.root + "/shard-0"
        let wrong = try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "1/4", "--output", shard0, "--no-progress"])
        #expect(wrong.status == 1)
        #expect(wrong.stderr == "\(shard0): error: the output directory holds shard 0/4, not 1/4; give each shard its own --output [shard-mismatch]\n")
        let whole = try run(Products.imagetable, ["bake", project.manifestPath, "--output", shard0, "--no-progress", "--format", "json"])
        #expect(whole.status == 1 && whole.stdout.contains("\"code\" : \"shard-mismatch\""))
        #expect(try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress"]).status == 0)
        let intoWhole = try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "2/4", "--output", project.tables, "--no-progress"])
        #expect(intoWhole.status == 1 && intoWhole.stderr.contains("holds the tables of an unsharded bake"))
        let noOutput = try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "2/4"])
        #expect(noOutput.status == 64 && noOutput.stderr.contains("--shard needs --output"))
        // A shard baked again converges like any bake: nothing to do.
        let again = try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "0/4", "--output", shard0, "--no-progress"])
        #expect(again.status == 0 && again.stdout.contains(": 0 decoded, "), "\(again.stdout)")
    }

    /// A shard whose family's directory holds no one's sources (unmounted, emptied) says so, as
    /// an unsharded bake does: it baked nothing, exit 0, without a word, and `merge` took its
    /// empty tables with the rest. One whose share is empty while others' are not says nothing.
    @Test func aShardOverAnEmptyDirectoryWarns() throws {
        let project = try BakeProject(formats: "      thumb:\n        size: 12x12\n        style: 8BitGrayscale\n        maximumCount: 100\n")
        try project.add("a.jpg", from: PhotoTiles.first(1)[0])
        let owner = KeyShard.shard(of: "a.jpg", count: 2), other = 1 - owner
        let otherShard = try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "\(other)/2", "--output", project.root + "/s1",
                                                       "--no-progress"])
        #expect(otherShard.status == 0 && !otherShard.stderr.contains("no-sources"), "\(otherShard.stderr)")
        try FileManager.default.removeItem(atPath: project.sources + "/a.jpg")
        for k in [owner, other] {
            let empty = try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "\(k)/2", "--output", project.root + "/e\(k)",
                                                      "--no-progress"])
            #expect(empty.status == 0 && empty.stderr.contains("[no-sources]"), "\(empty.stderr)")
        }
    }

    /// A directory's problem (here a name that is not UTF-8) is found by every shard's scan and
    /// reported by one, the shard of its key: the shards' failures add up to the whole bake's
    /// (each shard reported it, and exited 3).
    @Test func aDirectorysProblemIsReportedByOneShard() throws {
        let project = try BakeProject(formats: "      thumb:\n        size: 12x12\n        style: 8BitGrayscale\n        maximumCount: 100\n")
        try project.add("a.jpg", from: PhotoTiles.first(1)[0])
        var name = Array((project.sources + "/bad").utf8CString.dropLast()) + [CChar(bitPattern: 0xFF), 0]
        #expect(mkdir(&name, 0o755) == 0)
        var failed: [Int] = []
        for k in 0..<3 {
            let out = project.root + "/shard-\(k)"
            let bake = try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "\(k)/3", "--output", out, "--format", "json"])
            let document = try #require(try JSONSerialization.jsonObject(with: Data(bake.stdout.utf8)) as? [String: Any], "\(bake.stderr)")
            failed.append((document["failures"] as? [[String: Any]] ?? []).count)
            #expect(bake.status == (failed.last == 1 ? 3 : 0))
        }
        #expect(failed.sorted() == [0, 0, 1], "\(failed)")
        let whole = try run(Products.imagetable, ["bake", project.manifestPath, "--format", "json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(whole.stdout.utf8)) as? [String: Any])
        #expect((document["failures"] as? [[String: Any]])?.map { $0["code"] as? String } == ["name-not-utf8"])
    }

    /// Two shards started at once with the same `--output` (a job engine misconfigured): the
    /// marker is claimed exclusively, so at most one of them bakes there; the other stops with
    /// `shard-mismatch`. Both used to succeed in about a third of such races, the second evicting
    /// the first one's entries.
    @Test func twoShardsGivenOneDirectoryAtOnceNeverBothBake() throws {
        let project = try BakeProject(formats: "      thumb:\n        size: 8x8\n        style: 8BitGrayscale\n        maximumCount: 100\n")
        for (i, tile) in PhotoTiles.first(8).enumerated() { try project.add("t\(i).jpg", from: tile) }
        // The marker itself: an exclusive write finds the other's and leaves it.
        let marked = project.root + "/marked"
        try FileManager.default.createDirectory(atPath: marked, withIntermediateDirectories: true)
        #expect(try ShardMarker(ShardSelection(index: 0, count: 2)).write(in: marked, exclusive: true))
        #expect(try !ShardMarker(ShardSelection(index: 1, count: 2)).write(in: marked, exclusive: true))
        #expect(try ShardMarker.read(in: marked) == ShardMarker(ShardSelection(index: 0, count: 2)))
        for round in 0..<8 {
            let out = project.root + "/race-\(round)"
            let bakes = (0..<2).map { k in
                let p = Process()
                p.executableURL = URL(fileURLWithPath: Products.imagetable)
                p.arguments = ["bake", project.manifestPath, "--shard", "\(k)/2", "--output", out, "--no-progress"]
                p.standardOutput = FileHandle.nullDevice
                p.standardError = FileHandle.nullDevice
                return p
            }
            for p in bakes { try p.run() }
            for p in bakes { p.waitUntilExit() }
            let statuses = bakes.map(\.terminationStatus)
            #expect(statuses.sorted() == [0, 1], "round \(round): \(statuses)")
            let winner = try #require(statuses.firstIndex(of: 0))
            let marker = try #require(try ShardMarker.read(in: out))
            #expect(marker.shard == winner && marker.count == 2)
        }
    }

    /// Shards of two manifests whose formats are equal (two projects, or one whose sources
    /// moved) are not one split: the merge refuses them, naming both. A shard baked again after
    /// its manifest changed records the new manifest, so shards all baked again merge, and so do
    /// shards whose markers predate the record.
    @Test func aMergeRefusesShardsOfTwoManifests() throws {
        let project = try MergeTests.shardedProject(sources: 6, shards: 2)
        let first = try #require(try ShardMarker.read(in: project.root + "/shard-0")?.manifest)
        let firstOfShard1 = try ShardMarker.read(in: project.root + "/shard-1")?.manifest
        #expect(first.count == 64 && firstOfShard1 == first)
        // The same formats over other sources, shard 1 baked again from it.
        try FileManager.default.createDirectory(atPath: project.root + "/other", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: project.sources + "/t0.jpg", toPath: project.root + "/other/t0.jpg")
        try project.editManifest { $0.replacingOccurrences(of: "sources: src", with: "sources: other") }
        let again = try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "1/2", "--output", project.root + "/shard-1", "--no-progress"])
        #expect(again.status == 0, "\(again.stderr)")
        let second = try #require(try ShardMarker.read(in: project.root + "/shard-1")?.manifest)
        #expect(second != first)
        let refused = try MergeTests.merge(project.root + "/merged", [project.root + "/shard-0", project.root + "/shard-1"])
        #expect(refused.status == 1 && refused.stderr.contains("shard-1: error: was baked from another manifest than ")
                && refused.stderr.contains("/shard-0 (their families' names, sources, patterns or formats differ); bake every shard "
                                           + "from one manifest, then merge [shard-mismatch]"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: project.root + "/merged"))
        // Shard 0 baked again from the same manifest: one split.
        let zero = try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "0/2", "--output", project.root + "/shard-0", "--no-progress"])
        #expect(zero.status == 0, "\(zero.stderr)")
        #expect(try MergeTests.merge(project.root + "/merged", [project.root + "/shard-0", project.root + "/shard-1"]).status == 0)
        // A marker written before the manifest was recorded merges with any.
        try ShardMarker(ShardSelection(index: 0, count: 2)).write(in: project.root + "/shard-0")
        try project.editManifest { $0.replacingOccurrences(of: "sources: other", with: "sources: src") }
        #expect(try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "1/2", "--output", project.root + "/shard-1",
                                              "--no-progress"]).status == 0)
        let old = try MergeTests.merge(project.root + "/merged2", [project.root + "/shard-0", project.root + "/shard-1"])
        #expect(old.status == 0, "\(old.stderr)")
    }

    /// A shard's bake from a changed manifest that fails before it has run (its table locked
    /// past `--lock-timeout`) leaves the marker pending, not naming the new manifest over the
    /// old one's tables: a merge refuses it until the shard is baked to the end.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock"), "flock (util-linux) holds a lock"))
    func aShardWhoseBakeFromAChangedManifestFailedIsNotMerged() throws {
        let project = try MergeTests.shardedProject(sources: 6, shards: 2)
        try FileManager.default.createDirectory(atPath: project.root + "/other", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: project.sources + "/t0.jpg", toPath: project.root + "/other/n0.jpg")
        try project.editManifest { $0.replacingOccurrences(of: "sources: src", with: "sources: other") }
        let shard0 = project.root + "/shard-0"
        let held = try run("/bin/sh", ["-c", "flock '\(shard0)/thumb.imagetable.lock' sleep 3 & sleep 0.3; '\(Products.imagetable)' bake "
                                       + "'\(project.manifestPath)' --shard 0/2 --output '\(shard0)' --lock-timeout 1 --no-progress; echo \"status $?\"; wait"])
        #expect(held.stdout.hasSuffix("status 1\n"), "\(held.stdout)\(held.stderr)")
        #expect(try ShardMarker.read(in: shard0)?.isPending == true)
        #expect(try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "1/2", "--output", project.root + "/shard-1",
                                              "--no-progress"]).status == 0)
        let refused = try MergeTests.merge(project.root + "/merged", [shard0, project.root + "/shard-1"])
        #expect(refused.status == 1 && refused.stderr.contains("shard-0: error: the last bake of shard 0/2 (its first, or one from a changed "
                                                              + "manifest) did not run to the end"), "\(refused.stderr)")
        #expect(try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "0/2", "--output", shard0, "--no-progress"]).status == 0)
        #expect(try ShardMarker.read(in: shard0)?.isPending == false)
        let merged = try MergeTests.merge(project.root + "/merged", [shard0, project.root + "/shard-1"])
        #expect(merged.status == 0, "\(merged.stderr)")
        // The old sources' entries stay (no --prune), beside the new one's.
        #expect(Set(try ImageTableReader(path: project.root + "/merged/thumb.imagetable").entries().map(\.key)).contains("n0.jpg"))
    }

    /// A shard's first bake that stops part-way (here `--strict` at a broken source) leaves its
    /// marker pending: it was final from the start, and a merge took the part of the shard with
    /// the others, its missing entries unsaid. Baked to the end, the shard merges.
    @Test func aShardWhoseFirstBakeStoppedIsNotMerged() throws {
        let project = try MergeTests.shardedProject(sources: 6, shards: 2)
        let shard0 = project.root + "/shard-0"
        try FileManager.default.removeItem(atPath: shard0)
        let keys = try FileManager.default.contentsOfDirectory(atPath: project.sources).filter { $0.hasSuffix(".jpg") }
        let first = try #require(keys.first { (try? ShardSelection.parse("0/2", environment: [:]))?.contains(key: $0) ?? false })
        let good = try Data(contentsOf: URL(fileURLWithPath: project.sources + "/" + first))
        project.add(first, bytes: Array(good.prefix(2000)))
        let stopped = try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "0/2", "--output", shard0, "--strict", "--no-progress"])
        let marker = try ShardMarker.read(in: shard0)
        #expect(stopped.status == 1 && marker?.isPending == true, "\(stopped.stderr)")
        let refused = try MergeTests.merge(project.root + "/merged", [shard0, project.root + "/shard-1"])
        #expect(refused.status == 1 && refused.stderr.contains("did not run to the end"), "\(refused.stderr)")
        project.add(first, bytes: Array(good))
        #expect(try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "0/2", "--output", shard0, "--no-progress"]).status == 0)
        #expect(try ShardMarker.read(in: shard0)?.isPending == false)
        #expect(try MergeTests.merge(project.root + "/merged", [shard0, project.root + "/shard-1"]).status == 0)
    }

    /// A merge of a shard whose bake has just begun saw some of its tables and not others, and
    /// blamed the shard as another manifest's (`manifest-mismatch`): a bake takes every table's
    /// lock before it makes the tables, and the merge waits for a lock whose table is not there
    /// yet, then reads the tables.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock"), "flock (util-linux) holds a lock"))
    func aMergeWaitsForAShardWhoseBakeHasJustBegun() throws {
        let project = try MergeTests.shardedProject(sources: 6, shards: 2)
        let shard = project.root + "/shard-0"
        try FileManager.default.moveItem(atPath: shard + "/grey.imagetable", toPath: project.root + "/grey.saved")
        // A bake that holds grey's lock and makes the table a moment later.
        let script = "flock '\(shard)/grey.imagetable.lock' sh -c 'sleep 1; mv \"\(project.root)/grey.saved\" \"\(shard)/grey.imagetable\"' & "
            + "sleep 0.3; '\(Products.imagetable)' merge '\(project.root)/merged' '\(shard)' '\(project.root)/shard-1'; echo \"status $?\"; wait"
        let result = try run("/bin/sh", ["-c", script])
        #expect(result.stdout.hasSuffix("status 0\n") && !result.stderr.contains("manifest-mismatch"), "\(result.stdout)\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: project.root + "/merged/grey.imagetable"))
    }
}
