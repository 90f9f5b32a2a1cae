import Foundation
import Synchronization
import TestSupport
import ImageManifest
import ImageTableCore
import Testing
@testable import ImageBake

/// The diff's sources as the planner reads them: the scan's files with a fingerprint and a
/// failure beside each, by position, so a file that vanished between the listing and the diff
/// must take its fingerprint and failure with it, and the state's known files are handed to the
/// diff once.
struct SourceDiffTests {
    /// Files listed, then some deleted before the diff reads them: the vanished ones leave the
    /// planner's list, and what the diff found of the others stays with them (a failure on the
    /// file after a vanished one is that file's, not its neighbour's).
    @Test func aVanishedFileTakesItsPlaceAndNothingElseWithIt() throws {
        let root = NSTemporaryDirectory() + "diff-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/src", withIntermediateDirectories: true)
        let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 0, count: 60))
        for name in ["a.jpg", "b.jpg", "c.jpg", "d.jpg", "e.jpg"] {
            #expect(FileManager.default.createFile(atPath: "\(root)/src/\(name)", contents: name == "c.jpg" ? Data("text".utf8) : jpeg))
        }
        let (files, _) = try SourceScanner(root: root + "/src", selects: { _ in true }).scan()
        #expect(files.map(\.key) == ["a.jpg", "b.jpg", "c.jpg", "d.jpg", "e.jpg"])
        for name in ["b.jpg", "e.jpg"] { try FileManager.default.removeItem(atPath: "\(root)/src/\(name)") }

        let state = try BakeState(directory: root, root: root, readOnly: false)
        let diff = SourceDiff(state: state, decoding: DecodeOptions(), rehash: false, jobs: 2)
        let result = diff.run([SourceDiff.Scanned(sources: files, held: FamilyHeld([], sharing: files))])
        let sources = result[0].sources
        #expect(result[0].vanished.map(\.key) == ["b.jpg", "e.jpg"])
        #expect(sources.files.map(\.key) == ["a.jpg", "c.jpg", "d.jpg"])
        #expect(sources.indices.map { sources.failure($0)?.error.code } == [nil, .notAnImage, nil])
        #expect(sources.failure(1)?.error.path?.hasSuffix("/src/c.jpg") == true, "\(String(describing: sources.failure(1)?.error))")
        #expect(sources.indices.map(sources.isBakeable) == [true, false, true])
    }

    /// The state hands its known files over once: the diff holds them while it reads, and the
    /// state keeps no second list for the rest of the bake.
    @Test func theStateHandsItsKnownFilesOverOnce() throws {
        let root = NSTemporaryDirectory() + "known-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/src", withIntermediateDirectories: true)
        let path = root + "/src/a.jpg"
        #expect(FileManager.default.createFile(atPath: path, contents: Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3])))
        let stat = try #require(FileStat(path: path))
        let fingerprint = UUID()
        do {
            let state = try BakeState(directory: root, root: root, readOnly: false)
            let file = SourceFile(key: "a.jpg", root: root + "/src", stat: stat)
            // Checked well after the last modification, so the record is trusted.
            state.remember(file, BakeState.FileRecord(stat: stat, fingerprint: fingerprint,
                                                      checkedNs: stat.modifiedNs + 2 * BakeState.racyMarginNs, tables: []))
            try state.commit()
        }
        let state = try BakeState(directory: root, root: root, readOnly: false)
        #expect(state.takeKnownFiles().fingerprint(path: path, stat: stat) == fingerprint)
        #expect(state.takeKnownFiles().fingerprint(path: path, stat: stat) == nil, "handed over once")
    }

    /// The diff's first half takes the state's known files and frees them, before the tables'
    /// entries are read; the second half reads only what the first did not trust. The trusted
    /// fingerprint here is made up, so a file read instead would show its real one.
    @Test func theTrustPassTakesTheKnownFilesAndTheReadPassSkipsWhatItTrusted() throws {
        let root = NSTemporaryDirectory() + "trust-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/src", withIntermediateDirectories: true)
        for name in ["a.jpg", "b.jpg"] {
            #expect(FileManager.default.createFile(atPath: "\(root)/src/\(name)", contents: Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3])))
        }
        let (files, _) = try SourceScanner(root: root + "/src", selects: { _ in true }).scan()
        let madeUp = UUID()
        do {
            let state = try BakeState(directory: root, root: root, readOnly: false)
            state.remember(files[0], BakeState.FileRecord(stat: files[0].stat, fingerprint: madeUp,
                                                          checkedNs: files[0].stat.modifiedNs + 2 * BakeState.racyMarginNs, tables: []))
            try state.commit()
        }
        let state = try BakeState(directory: root, root: root, readOnly: false)
        let diff = SourceDiff(state: state, decoding: DecodeOptions(), rehash: false, jobs: 2)
        let trusted = diff.trust([files])
        #expect(state.takeKnownFiles().fingerprint(path: files[0].path, stat: files[0].stat) == nil, "taken by the trust pass")
        let result = diff.run([SourceDiff.Scanned(sources: files, held: FamilyHeld([], sharing: files))], trusted: trusted)
        #expect(result[0].sources.fingerprint(0) == madeUp, "trusted, not read")
        #expect(result[0].sources.fingerprint(1) == nil, "no table holds b.jpg: peeked at, not fingerprinted")
        #expect(result[0].sources.indices.map(result[0].sources.isBakeable) == [true, true])
    }
}

/// The diff commits what its peeks and reads find a batch at a time, as the run does: a first
/// bake peeks at every source, and held to the run's first commit those records were the
/// largest part of its memory.
struct DiffStateBatchTests {
    /// A scratch directory whose `src/` holds five new sources (JPEGs by their first bytes), and
    /// their scan.
    private static func fiveNewSources() throws -> (scratch: TemporaryDirectory, files: [SourceFile]) {
        let scratch = try TemporaryDirectory()
        for i in 0..<5 { try scratch.write("src/s\(i).jpg", [0xFF, 0xD8, 0xFF, 0xE0, UInt8(i)]) }
        return (scratch, try SourceScanner(root: scratch.file("src"), selects: { _ in true }).scan().sources)
    }

    /// Runs the diff over `files`, which no table holds, so that it peeks at each.
    private static func diff(_ files: [SourceFile], state: BakeState, batch: Int = .max) {
        _ = SourceDiff(state: state, decoding: DecodeOptions(), rehash: false, jobs: 1, stateBatch: batch)
            .run([SourceDiff.Scanned(sources: files, held: FamilyHeld([], sharing: files))])
    }

    /// The files the state in `root` holds, read as another process would.
    private static func rows(_ root: String) throws -> Int {
        var rows = 0
        try BakeState(directory: root, root: root, readOnly: true).forEachKnownPath { _ in rows += 1 }
        return rows
    }

    @Test(arguments: [2, Int.max])
    func theDiffCommitsWhatItLearnsInBatches(batch: Int) throws {
        let (scratch, files) = try Self.fiveNewSources()
        let root = scratch.path
        let state = try BakeState(directory: root, root: root, readOnly: false)
        Self.diff(files, state: state, batch: batch)
        // Before the bake's last commit.
        #expect(try Self.rows(root) == (batch == 2 ? 4 : 0), "two commits of two peeks each; the fifth waits for the next")
        try state.commit()
        #expect(try Self.rows(root) == 5)
    }

    /// A dry run's state, with a state file or none, keeps nothing of what the diff learns: no
    /// commit would write it (a first dry run of 100,000 sources held 20 MB of records).
    @Test(arguments: [true, false])
    func aDryRunKeepsNoRecords(withStateFile: Bool) throws {
        let (scratch, files) = try Self.fiveNewSources()
        let root = scratch.path
        if withStateFile { try BakeState(directory: root, root: root, readOnly: false).commit() }
        for readOnly in [false, true] where withStateFile || readOnly {
            let state = try BakeState(directory: root, root: root, readOnly: readOnly)
            Self.diff(files, state: state)
            #expect(state.pendingCount == (readOnly ? 0 : 5), "read-only: \(readOnly)")
        }
    }
}

/// The bake state commits what it learns during the run, a batch at a time, rather than holding
/// every source's record until the end.
struct StateBatchTests {
    /// With batches of two, a source that fails after four were baked finds those four in the
    /// state already (read by a second connection, as another process would), and the bake
    /// still ends with every baked source remembered.
    @Test func theStateCommitsDuringTheRun() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        for i in 0..<4 { try ConvergenceTests.add(project, "s\(i).png", i, secondsAgo: 100) }
        // A PNG by its first bytes, which no decoder takes: it fails in the worker, last (keys in order).
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 7, count: 40))
            .write(to: URL(fileURLWithPath: project.sources + "/z.png"))
        let seen = Mutex<[Int]>([])
        let summary = try project.bake(jobs: 1) {
            $0.stateBatch = 2
            $0.failed = { _ in
                let rows = (try? Self.rows(project)) ?? -1
                seen.withLock { $0.append(rows) }
            }
        }
        #expect(summary.decoded == 4 && summary.failed.count == 1, "\(summary)")
        // Four sources baked, and what the peek at z.png's first bytes found (an image), which
        // spares the next bake opening it again.
        #expect(seen.withLock { $0 } == [5], "rows in the state when the fifth source failed")
        #expect(try Self.rows(project) == 5)
    }

    static func rows(_ project: BakeProject) throws -> Int {
        var count = 0
        try BakeState(directory: project.tables, root: project.root, readOnly: true).forEachKnownPath { _ in count += 1 }
        return count
    }
}

/// A commit during the run that fails puts its batch back for the last commit, which alone
/// decides whether the bake's state failed.
struct StateBatchFailureTests {
    @Test(arguments: [true, false])
    func aFailedCommitDuringTheRunWaitsForTheLast(laterSucceeds: Bool) throws {
        let root = NSTemporaryDirectory() + "batch-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/src", withIntermediateDirectories: true)
        let state = try BakeState(directory: root, root: root, readOnly: false)
        // Another connection makes any write of b.jpg's row fail, as a busy or full state would.
        let other = try SQLiteDatabase(path: root + "/" + BakeState.fileName)
        defer { other.close() }
        try other.execute("CREATE TRIGGER refuse BEFORE INSERT ON files WHEN NEW.path = 'src/b.jpg' BEGIN SELECT RAISE(ABORT, 'refused'); END;")
        func remember(_ key: String) {
            let stat = FileStat(device: 1, inode: UInt64(key.utf8.first!), size: 10, modifiedNs: 1, changedNs: 1)
            state.remember(SourceFile(key: key, root: root + "/src", stat: stat),
                           BakeState.FileRecord(stat: stat, fingerprint: UUID(), checkedNs: 5_000_000_000, tables: []))
        }
        remember("a.jpg")
        remember("b.jpg")
        state.commit(ifAtLeast: 2)
        #expect(try Self.paths(root) == [], "the failed transaction wrote nothing")
        guard laterSucceeds else {
            #expect(throws: ImageTableError.self) { try state.commit() }
            return
        }
        try other.execute("DROP TRIGGER refuse;")
        remember("c.jpg")
        remember("d.jpg")
        state.commit(ifAtLeast: 2)
        #expect(try Self.paths(root) == [], "no more commits during the run after one failed")
        try state.commit()
        #expect(try Self.paths(root) == ["src/a.jpg", "src/b.jpg", "src/c.jpg", "src/d.jpg"], "the batch put back is written last")
    }

    static func paths(_ root: String) throws -> [String] {
        var paths: [String] = []
        try BakeState(directory: root, root: root, readOnly: true).forEachKnownPath { paths.append($0) }
        return paths.sorted()
    }
}
