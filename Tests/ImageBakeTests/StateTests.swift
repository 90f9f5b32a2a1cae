import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The bake state's promises: an unchanged source costs one `stat` and no read; a file several
/// families share is read once; a bake killed inside the state's commit leaves a state the next
/// bake uses.
@Suite struct StateTests {
    /// The regular files under `directory` that a bake opened, from `strace -f` of it, with its
    /// exit status and standard output.
    static func filesOpened(under directory: String, by arguments: [String]) throws -> (status: Int32, files: [String], stdout: String) {
        let log = NSTemporaryDirectory() + "strace-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: log) }
        let result = try run("/usr/bin/strace", ["-f", "-qq", "-e", "trace=open,openat", "-o", log, Products.imagetable] + arguments)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        let files = lines.filter { !$0.contains("O_DIRECTORY") && !$0.contains("= -1") }.compactMap { line -> String? in
            guard let open = line.range(of: "\""), let close = line[open.upperBound...].range(of: "\"") else { return nil }
            let path = String(line[open.upperBound..<close.lowerBound])
            return path.hasPrefix(directory + "/") ? path : nil
        }
        return (result.status, files, result.stdout)
    }

    /// The `sources` counts of a `bake --format json` output.
    static func counts(_ stdout: String) throws -> [String: Int] {
        let json = try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any], "\(stdout)")
        return try #require(json["sources"] as? [String: Int])
    }

    /// Every table's entries as stored: its record (slot, recency, UUIDs, checksum, content
    /// rectangle, time written) and its pixel bytes.
    static func storedEntries(_ project: BakeProject) throws -> [String: [String: String]] {
        var all: [String: [String: String]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: project.tables) where name.hasSuffix(".imagetable") {
            let reader = try ImageTableReader(path: project.tables + "/" + name)
            for entry in reader.entries() {
                let pixels = try #require(try reader.withImage(forKey: entry.key) { Array($0.bytes) })
                all[name, default: [:]][entry.key] = "\(entry) \(pixels)"
            }
        }
        return all
    }

    static let hasStrace = FileManager.default.isExecutableFile(atPath: "/usr/bin/strace")

    @Test(.enabled(if: hasStrace, "make test installs strace"))
    func anUnchangedReBakeOpensNoSource() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 20))
        for i in 0..<6 { try ConvergenceTests.add(project, "s\(i).png", i, secondsAgo: 100) }
        let first = try Self.filesOpened(under: project.sources, by: ["bake", project.manifestPath, "--jobs", "2"])
        #expect(first.status == 0)
        // Each new source: a peek at its first bytes by the planner (is it an image?), then the one
        // read of the worker that decodes it and fingerprints exactly those bytes.
        #expect(first.files.count == 12 && Set(first.files).count == 6, "\(first.files)")
        let again = try Self.filesOpened(under: project.sources, by: ["bake", project.manifestPath, "--jobs", "2"])
        #expect(again.status == 0 && again.files.isEmpty, "\(again.files)")
    }

    /// Sources no bake decodes are not opened again while their stat holds: left out of a full
    /// table, failing to decode (remembered), not an image. Each was peeked at (its first bytes)
    /// by every unchanged re-bake, one open per file per run over a large ingest directory.
    @Test(.enabled(if: hasStrace, "make test installs strace"))
    func sourcesNoBakeDecodesAreNotOpenedAgain() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 2))
        for i in 0..<5 { try ConvergenceTests.add(project, "s\(i).png", i, secondsAgo: 100 + i) }
        let photo = try Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Portrait_1")))
        project.add("broken.jpg", bytes: Array(photo.prefix(4000)))
        project.add("notes.jpg", bytes: Array("not a picture".utf8))
        // The most recently modified: broken.jpg gets a slot, and fails to decode.
        for name in ["broken.jpg", "notes.jpg"] { project.setModified(name, secondsAgo: 10) }
        let first = try run(Products.imagetable, ["bake", project.manifestPath, "--format", "json"])
        #expect(first.status == 3, "broken.jpg fails: \(first.stderr)")
        // The second bake gives the failing source's slot to the next one, and settles.
        #expect(try run(Products.imagetable, ["bake", project.manifestPath]).status == 3)
        let again = try Self.filesOpened(under: project.sources, by: ["bake", project.manifestPath, "--format", "json"])
        #expect(again.status == 3 && again.files.isEmpty, "\(again.files)")
        let counts = try Self.counts(again.stdout)
        #expect(counts["decoded"] == 0 && counts["failed"] == 1 && counts["skipped"] == 1 && (counts["leftOut"] ?? 0) >= 2, "\(counts)")
        // A left-out source that changes is peeked at again, and a held one that is touched is
        // read (fingerprinted), not trusted by what a peek said.
        try ConvergenceTests.add(project, "s0.png", 9, secondsAgo: 50)
        let changed = try Self.filesOpened(under: project.sources, by: ["bake", project.manifestPath, "--format", "json"])
        #expect(changed.files.contains(project.sources + "/s0.png"), "\(changed.files)")
    }

    /// A recorded peek does not spare a file the size limit: with a lower `--max-source-size`
    /// a recorded file over it won a slot at every bake and failed in the worker, leaving a good
    /// source out. An empty file is refused by its listed size, unopened.
    @Test(.enabled(if: hasStrace, "make test installs strace"))
    func aRecordedPeekStillMeetsTheSizeLimit() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 1))
        try project.add("big.jpg", from: Corpus.photo("Landscape_0"))
        try project.add("old.jpg", from: Corpus.photo("Portrait_0"))
        try project.add("new.jpg", from: Corpus.photo("Portrait_1"))
        project.add("empty.jpg", bytes: [])
        for (name, age) in [("old.jpg", 300), ("big.jpg", 200), ("new.jpg", 100), ("empty.jpg", 100)] { project.setModified(name, secondsAgo: age) }
        _ = try run(Products.imagetable, ["bake", project.manifestPath, "-j", "1"])
        try FileManager.default.removeItem(atPath: project.sources + "/new.jpg")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: project.sources + "/big.jpg")[.size] as? Int)
        let limited = try Self.filesOpened(under: project.sources, by: ["bake", project.manifestPath, "-j", "1", "--format", "json",
                                                                         "--max-source-size", "\(size - 1)"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(limited.stdout.utf8)) as? [String: Any])
        let codes = ((json["failures"] as? [[String: Any]]) ?? []).map { "\($0["key"] ?? "") \($0["code"] ?? "")" }.sorted()
        #expect(codes == ["big.jpg source-too-large", "empty.jpg empty"], "\(codes)")
        #expect(try Self.counts(limited.stdout)["decoded"] == 1, "old.jpg takes the slot: \(limited.stdout)")
        #expect(!limited.files.contains(project.sources + "/empty.jpg") && !limited.files.contains(project.sources + "/big.jpg"),
                "\(limited.files)")
    }

    /// Writes `other.yaml` beside the project's manifest: the same output directory and sources,
    /// family `drawings` with one format, `drawing`; returns its path.
    static func otherManifest(_ project: BakeProject, include: String?, style: String) throws -> String {
        let other = project.root + "/other.yaml"
        try """
            version: 1
            output: tables
            families:
              drawings:
                sources: src
            \(include.map { "    include: [\"\($0)\"]\n" } ?? "")    formats:
                  drawing: {size: 8x8, style: \(style), maximumCount: 4}

            """.write(toFile: other, atomically: true, encoding: .utf8)
        return other
    }

    /// Two manifests sharing an output directory, each taking other files of one sources
    /// directory, keep each other's rows: each bake forgot the other's, and both read them again
    /// at every bake.
    @Test(.enabled(if: hasStrace, "make test installs strace"))
    func twoManifestsSharingAnOutputDirectorySettle() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 4), include: "*.jpg")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        try ConvergenceTests.add(project, "b.png", 0, secondsAgo: 100)
        project.setModified("a.jpg", secondsAgo: 100)
        // The same output directory and sources, other files, a table of its own.
        let other = try Self.otherManifest(project, include: "*.png", style: "32BitBGRA")
        for _ in 0..<2 {
            #expect(try run(Products.imagetable, ["bake", project.manifestPath]).status == 0)
            #expect(try run(Products.imagetable, ["bake", other]).status != 1)
        }
        let first = try Self.filesOpened(under: project.sources, by: ["bake", project.manifestPath])
        let second = try Self.filesOpened(under: project.sources, by: ["bake", other])
        #expect(first.files.isEmpty && second.files.isEmpty, "\(first.files) \(second.files)")
    }

    /// Two manifests sharing an output directory each warned of the other's tables as orphans at
    /// every bake, and `--prune` deleted them (the other bake then decoded everything again): a
    /// table is another manifest's while that manifest, which baked it last, exists.
    @Test func aSharedOutputDirectoryKeepsTheOtherManifestsTables() throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 4}\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        let other = try Self.otherManifest(project, include: nil, style: "8BitGrayscale")
        #expect(try run(Products.imagetable, ["bake", other]).status == 0)
        let bake = try run(Products.imagetable, ["bake", project.manifestPath, "--prune"])
        #expect(bake.status == 0 && !bake.stderr.contains("orphan-table") && !bake.stdout.contains("deleted"), "\(bake.stdout)\(bake.stderr)")
        #expect(FileManager.default.fileExists(atPath: project.tables + "/drawing.imagetable"))
        // A table no bake recorded the manifest of (made by an earlier build), of a family this
        // manifest lacks, is warned of but never pruned: likely another manifest's.
        _ = try Self.statePaths(project, running: "DELETE FROM formats WHERE table_file = 'manifest/drawing.imagetable'")
        let unclaimed = try run(Products.imagetable, ["bake", project.manifestPath, "--prune"])
        #expect(unclaimed.stderr.contains("tables/drawing.imagetable: warning: no format of the manifest names this table (the table's "
                                          + "family, 'drawings', is none of the manifest's), and no bake recorded which manifest made it; "
                                          + "--prune leaves it (delete it by hand if no manifest bakes it) [orphan-table]"), "\(unclaimed.stderr)")
        #expect(FileManager.default.fileExists(atPath: project.tables + "/drawing.imagetable"))
        #expect(try run(Products.imagetable, ["bake", other]).status == 0)
        // Once the other manifest is gone, its table is an orphan like any other.
        try FileManager.default.removeItem(atPath: other)
        let alone = try run(Products.imagetable, ["bake", project.manifestPath])
        #expect(alone.stderr.contains("tables/drawing.imagetable: warning: no format of the manifest names this table; "
                                      + "bake --prune deletes it [orphan-table]"), "\(alone.stderr)")
        let pruned = try run(Products.imagetable, ["bake", project.manifestPath, "--prune"])
        #expect(pruned.status == 0 && !FileManager.default.fileExists(atPath: project.tables + "/drawing.imagetable"), "\(pruned.stdout)")
    }

    /// A state made before peeks were recorded (schema 1) is read as it is, and stamped 2 by a
    /// bake, without a warning; a state whose tables do not read (a column gone) is started
    /// afresh with one, where every bake failed "no such column"; `--list` says so too.
    @Test func anEarlierStateIsReadAndADamagedSchemaIsStartedAfresh() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 20))
        try ConvergenceTests.add(project, "s0.png", 0, secondsAgo: 100)
        _ = try project.bake()
        _ = try Self.statePaths(project, running: "PRAGMA user_version = 1")
        let earlier = try run(Products.imagetable, ["bake", project.manifestPath])
        #expect(earlier.status == 0 && earlier.stderr.isEmpty, "\(earlier.stderr)")
        let script = "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA user_version').fetchone()[0])"
        #expect(try run("/usr/bin/env", ["python3", "-c", script, project.tables + "/.imagetable-state.sqlite"]).stdout == "2\n")
        _ = try Self.statePaths(project, running: "ALTER TABLE files DROP COLUMN checked_ns")
        let list = try run(Products.imagetable, ["bake", "--list", project.manifestPath])
        #expect(list.status == 0 && list.stderr.contains("[state-reset]"), "\(list.stderr)")
        let bake = try run(Products.imagetable, ["bake", project.manifestPath])
        #expect(bake.status == 0 && bake.stderr.contains("the bake state was damaged") && bake.stderr.contains("[state-reset]"), "\(bake.stderr)")
        #expect(try run(Products.imagetable, ["bake", project.manifestPath]).stderr.isEmpty)
    }

    /// A key a table holds is read to fingerprint it even when the state has only a peek's
    /// record of its file ("an image"): trusting that would make it changed, and decode it.
    @Test(.enabled(if: hasStrace, "make test installs strace"))
    func aHeldKeyWithAPeekRecordIsReadNotDecoded() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 4))
        try ConvergenceTests.add(project, "s0.png", 0, secondsAgo: 100)
        _ = try project.bake()
        _ = try Self.statePaths(project, running: "UPDATE files SET fingerprint = zeroblob(16)")
        let again = try Self.filesOpened(under: project.sources, by: ["bake", project.manifestPath, "--format", "json"])
        #expect(again.files == [project.sources + "/s0.png"], "\(again.files)")
        #expect(try Self.counts(again.stdout)["decoded"] == 0 && Self.counts(again.stdout)["unchanged"] == 1, "\(again.stdout)")
    }

    /// Deleting the state costs one read of each source, by the bake (to fingerprint it, its
    /// stat being untrusted now), and no decode: every entry stays as it was, record and pixels.
    @Test(.enabled(if: hasStrace, "make test installs strace"))
    func afterTheStateIsDeletedEachSourceIsReadOnceAndNoneDecoded() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 20))
        for i in 0..<6 { try ConvergenceTests.add(project, "s\(i).png", i, secondsAgo: 100) }
        _ = try project.bake()
        let before = try Self.storedEntries(project)
        let state = project.tables + "/.imagetable-state.sqlite"
        #expect(FileManager.default.fileExists(atPath: state))
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: state + suffix) }
        let again = try Self.filesOpened(under: project.sources, by: ["bake", project.manifestPath, "--format", "json"])
        #expect(again.status == 0)
        #expect(again.files.sorted() == (0..<6).map { project.sources + "/s\($0).png" }, "one open per source: \(again.files)")
        let counts = try Self.counts(again.stdout)
        #expect(counts["decoded"] == 0 && counts["unchanged"] == 6, "\(counts)")
        #expect(try Self.storedEntries(project) == before)
    }

    /// A damaged bake state is a cache lost, not a failure: the bake says so once, starts
    /// afresh, reads each source again and decodes none, and leaves a sound state behind.
    @Test func aDamagedStateIsReplacedWithAWarning() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 20))
        for i in 0..<4 { try ConvergenceTests.add(project, "s\(i).png", i, secondsAgo: 100) }
        _ = try project.bake()
        let before = try Self.storedEntries(project)
        let state = project.tables + "/.imagetable-state.sqlite"
        // Every page after the first (the header and the schema): the rows' pages.
        let size = try #require(try FileManager.default.attributesOfItem(atPath: state)[.size] as? Int)
        #expect(size > 4096 && !FileManager.default.fileExists(atPath: state + "-wal"), "the state is checkpointed into one file")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: state))
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: size - 4096))
        try handle.close()
        let damaged = try run(Products.imagetable, ["bake", project.manifestPath, "--format", "json"])
        #expect(damaged.status == 0, "\(damaged.stderr)")
        let counts = try Self.counts(damaged.stdout)
        #expect(counts["decoded"] == 0 && counts["unchanged"] == 4, "\(counts)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(damaged.stdout.utf8)) as? [String: Any])
        let warnings = try #require(warningLines(json))
        #expect(warnings.count == 1 && warnings[0].hasSuffix("[state-reset]")
                && warnings[0].contains(".imagetable-state.sqlite: warning: the bake state was damaged"), "\(warnings)")
        #expect(try Self.storedEntries(project) == before)
        let again = try run(Products.imagetable, ["bake", project.manifestPath, "--format", "json"])
        let json2 = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect(again.status == 0 && warningLines(json2) == [], "the new state is sound: \(again.stdout)")
    }

    /// `--rehash` trusts no stat: every source is read once more, though none changed, and since
    /// its bytes did not change either, none is decoded.
    @Test(.enabled(if: hasStrace, "make test installs strace"))
    func rehashReadsEverySourceAndDecodesNoneUnchanged() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 20))
        for i in 0..<6 { try ConvergenceTests.add(project, "s\(i).png", i, secondsAgo: 100) }
        _ = try project.bake()
        let trusted = try Self.filesOpened(under: project.sources, by: ["bake", project.manifestPath])
        #expect(trusted.status == 0 && trusted.files.isEmpty, "without --rehash the stats are trusted: \(trusted.files)")
        let before = try Self.storedEntries(project)
        let rehash = try Self.filesOpened(under: project.sources, by: ["bake", project.manifestPath, "--rehash", "--format", "json"])
        #expect(rehash.status == 0)
        #expect(rehash.files.sorted() == (0..<6).map { project.sources + "/s\($0).png" }, "one open per source: \(rehash.files)")
        let counts = try Self.counts(rehash.stdout)
        #expect(counts["decoded"] == 0 && counts["unchanged"] == 6, "\(counts)")
        #expect(try Self.storedEntries(project) == before)
    }

    /// Two families over one directory, every file touched (new stats, same bytes): each file is
    /// read once, and nothing is decoded.
    @Test(.enabled(if: hasStrace, "make test installs strace"))
    func aSourceSeveralFamiliesShareIsReadOnce() throws {
        let project = try BakeProject()
        try """
            version: 1
            output: tables
            families:
              one:
                sources: src
                formats:
                  a: {size: 6x6, style: 32BitBGRA, maximumCount: 10}
              two:
                sources: src
                formats:
                  b: {size: 5x5, style: 8BitGrayscale, maximumCount: 10}

            """.write(toFile: project.manifestPath, atomically: true, encoding: .utf8)
        for i in 0..<4 { try ConvergenceTests.add(project, "s\(i).png", i, secondsAgo: 100) }
        _ = try project.bake()
        for i in 0..<4 { project.setModified("s\(i).png", secondsAgo: 50) }
        let touched = try Self.filesOpened(under: project.sources, by: ["bake", project.manifestPath, "--format", "json"])
        #expect(touched.status == 0)
        #expect(touched.files.sorted() == (0..<4).map { project.sources + "/s\($0).png" }, "one read per file: \(touched.files)")
        let again = try run(Products.imagetable, ["bake", project.manifestPath])
        #expect(again.stdout.contains("0 decoded, 8 unchanged"), "\(again.stdout)")
    }

    /// A hook kills the bake inside the state's transaction: the tables keep what was published,
    /// the state keeps its previous commit, and the next bake completes without decoding again.
    @Test func aBakeKilledInsideTheStateCommitIsCompletedByTheNext() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 20))
        for i in 0..<5 { try ConvergenceTests.add(project, "s\(i).png", i, secondsAgo: 100) }
        let hook = project.root + "/hook"
        try writeExecutable("#!/bin/sh\n[ \"$1\" = state-commit ] && kill -9 \"$2\"\nexit 0\n", to: hook)
        let killed = Process()
        killed.executableURL = URL(fileURLWithPath: Products.imagetable)
        killed.arguments = ["bake", project.manifestPath]
        killed.environment = ProcessInfo.processInfo.environment.merging(["IMAGETABLE_TEST_HOOK": hook]) { $1 }
        killed.standardOutput = FileHandle.nullDevice
        killed.standardError = FileHandle.nullDevice
        try killed.run()
        killed.waitUntilExit()
        #expect(killed.terminationReason == .uncaughtSignal && killed.terminationStatus == SIGKILL)
        let next = try project.bake()
        #expect(next.decoded == 0 && next.unchanged == 5 && next.failed.isEmpty, "the entries were published before the state's commit")
        for name in ["bgra", "bgr", "rgb555", "grey"] {
            #expect(TableVerifier.verify(path: project.tables + "/\(name).imagetable").isValid)
        }
        // The state the next bake committed is whole: a third bake trusts every stat.
        if Self.hasStrace {
            let third = try Self.filesOpened(under: project.sources, by: ["bake", project.manifestPath])
            #expect(third.status == 0 && third.files.isEmpty, "\(third.files)")
        }
    }

    /// Bakes of several manifests that share an output directory may create its state at once.
    /// Switching a new database to WAL fails at once, without SQLite's busy handler, while
    /// another connection holds a write lock on it, so overlapping first bakes failed with
    /// `locked` (`scripts/soak.py` found it). Here another process holds that lock for a second
    /// and a half; the bake must wait for it, not fail.
    @Test func aBakeWaitsForAnotherWriterOfANewState() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 20))
        try ConvergenceTests.add(project, "s0.png", 0, secondsAgo: 100)
        try FileManager.default.createDirectory(atPath: project.tables, withIntermediateDirectories: true)
        let ready = project.root + "/writer-ready"
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        writer.arguments = ["python3", "-c", """
            import sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
            db.execute("PRAGMA user_version=1")
            open(sys.argv[2], "w").close()
            time.sleep(1.5)
            db.execute("COMMIT")
            """, project.tables + "/.imagetable-state.sqlite", ready]
        try writer.run()
        while !FileManager.default.fileExists(atPath: ready) && writer.isRunning { usleep(10_000) }
        #expect(FileManager.default.fileExists(atPath: ready), "the other writer never took its lock")
        let summary = try project.bake()
        writer.waitUntilExit()
        #expect(summary.decoded == 1 && summary.failed.isEmpty)
        #expect(try project.bake().unchanged == 1, "the state was written once the other writer let go")
    }

    /// A dry run and `--list` plan as the bake will over a damaged state: from none, with the
    /// warning (they exited 1, "fatal", where the bake goes on: a CI cache cut short).
    @Test func aDryRunOverADamagedStatePlansFromNone() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 20))
        for i in 0..<2 { try ConvergenceTests.add(project, "s\(i).png", i, secondsAgo: 100) }
        _ = try project.bake()
        let state = project.tables + "/.imagetable-state.sqlite"
        try Data("not a database, cut short".utf8).write(to: URL(fileURLWithPath: state))
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: state + suffix) }
        let dry = try run(Products.imagetable, ["bake", project.manifestPath, "--dry-run", "--format", "json"])
        #expect(dry.status == 0, "\(dry.stdout)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])
        #expect(warningLines(json)?.contains { $0.contains("the bake state is damaged") && $0.hasSuffix("[state-reset]") } == true, "\(json)")
        #expect(try Self.counts(dry.stdout)["decoded"] == 0, "the tables hold every source's bytes")
        let list = try run(Products.imagetable, ["bake", project.manifestPath, "--list"])
        #expect(list.status == 0 && list.stdout == "unchanged photos  s0.png\nunchanged photos  s1.png\n", "\(list.stdout) \(list.stderr)")
    }

    /// A state of another schema version is started afresh by a bake, with the warning: making
    /// the schema stamped the version before it was checked, so a bake trusted a state of any
    /// version (rows it may read otherwise) and stamped it as its own.
    @Test func aStateOfAnotherVersionIsStartedAfresh() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 20))
        for i in 0..<2 { try ConvergenceTests.add(project, "s\(i).png", i, secondsAgo: 100) }
        _ = try project.bake()
        _ = try Self.statePaths(project, running: "PRAGMA user_version = 7")
        let bake = try run(Products.imagetable, ["bake", project.manifestPath, "--format", "json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bake.stdout.utf8)) as? [String: Any])
        #expect(bake.status == 0 && warningLines(json)?.contains { $0.contains("schema version 7, not 2") && $0.hasSuffix("[state-reset]") } == true,
                "\(bake.stdout)")
        let script = "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA user_version').fetchone()[0])"
        let version = try run("/usr/bin/env", ["python3", "-c", script, project.tables + "/.imagetable-state.sqlite"])
        #expect(version.stdout == "2\n")
    }

    /// A project reached through a symbolic link keeps its paths relative to the manifest's
    /// directory (they were absolute, the link's target's, so a moved project was not warm).
    @Test func aProjectReachedThroughALinkStoresRelativePaths() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 20))
        try ConvergenceTests.add(project, "s0.png", 0, secondsAgo: 100)
        let link = try TemporaryDirectory()
        try FileManager.default.createSymbolicLink(atPath: link.file("project"), withDestinationPath: project.root)
        #expect(try run(Products.imagetable, ["bake", link.file("project") + "/manifest.yaml"]).status == 0)
        #expect(try Self.statePaths(project) == ["src/s0.png"])
    }

    /// The paths of the state's file rows, sorted, and runs `sql` on it first when given.
    static func statePaths(_ project: BakeProject, running sql: String = "") throws -> [String] {
        let script = """
            import json, sqlite3, sys
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            if sys.argv[2]: db.execute(sys.argv[2])
            print(json.dumps(sorted(row[0] for row in db.execute("SELECT path FROM files"))))
            """
        let result = try run("/usr/bin/env", ["python3", "-c", script, project.tables + "/.imagetable-state.sqlite", sql])
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String], "\(result.stderr)")
    }

    /// The state keeps a row for each source it read, forgets a source once it is gone (looked up
    /// in the sources by key, not by a path built for every source), and keeps rows outside every
    /// family's sources directory: another manifest's, sharing the output directory.
    @Test func aRemovedSourceLeavesTheStateAndRowsElsewhereStay() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 20))
        for i in 0..<3 { try ConvergenceTests.add(project, "s\(i).png", i, secondsAgo: 100) }
        #expect(try project.bake().decoded == 3)
        let rows = try Self.statePaths(project, running: """
            INSERT INTO files (path, device, inode, size, mtime_ns, ctime_ns, fingerprint, checked_ns)
            VALUES ('elsewhere/x.png', 1, 2, 3, 4, 5, zeroblob(16), 6)
            """)
        #expect(rows == ["elsewhere/x.png", "src/s0.png", "src/s1.png", "src/s2.png"])
        try FileManager.default.removeItem(atPath: project.sources + "/s1.png")
        let second = try project.bake()
        #expect(second.unchanged == 2 && second.removed == 1 && second.decoded == 0)
        #expect(try Self.statePaths(project) == ["elsewhere/x.png", "src/s0.png", "src/s2.png"])
        #expect(try project.bake().unchanged == 2, "the rows kept are trusted: nothing is read or decoded")
    }

    /// A bake whose scan lists every file the state knows skips the pass that forgets gone
    /// files; one that does not list a known file still forgets it once the file is deleted
    /// (a file the family's patterns stopped selecting is kept while it is there), and with a
    /// second family over the same directory listing other files.
    @Test func filesNoLongerListedAreForgottenWhenTheScanSkipsThem() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 20))
        for i in 0..<3 { try ConvergenceTests.add(project, "s\(i).png", i, secondsAgo: 100) }
        try project.add("p.jpg", from: Corpus.photo("Landscape_1"))
        try project.editManifest { $0 + "  others:\n    sources: src\n    include: [\"**/*.jpg\"]\n    formats:\n"
            + "      other:\n        size: 8x8\n        style: 8BitGrayscale\n        maximumCount: 20\n" }
        // p.jpg is a source of both families (the first takes every image): decoded once each.
        #expect(try project.bake().decoded == 5)
        #expect(try Self.statePaths(project) == ["src/p.jpg", "src/s0.png", "src/s1.png", "src/s2.png"])
        #expect(try project.bake().unchanged == 5, "everything listed: nothing forgotten")
        #expect(try Self.statePaths(project) == ["src/p.jpg", "src/s0.png", "src/s1.png", "src/s2.png"])
        // The first family's patterns stop selecting s2.png: listed by no family, its row stays
        // while the file is there (it may be another manifest's, sharing the output directory),
        // and goes with the file.
        try project.editManifest { $0.replacingOccurrences(of: "    sources: src\n    formats:", with: "    sources: src\n    exclude: [\"s2.png\"]\n    formats:") }
        #expect(try project.bake(configure: { $0.prune = true }).unchanged == 4)
        #expect(try Self.statePaths(project) == ["src/p.jpg", "src/s0.png", "src/s1.png", "src/s2.png"])
        try FileManager.default.removeItem(atPath: project.sources + "/s2.png")
        #expect(try project.bake().unchanged == 4)
        #expect(try Self.statePaths(project) == ["src/p.jpg", "src/s0.png", "src/s1.png"])
        try FileManager.default.removeItem(atPath: project.sources + "/p.jpg")
        #expect(try project.bake().unchanged == 2)
        #expect(try Self.statePaths(project) == ["src/s0.png", "src/s1.png"])
    }
}
