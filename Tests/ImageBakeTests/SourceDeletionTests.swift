import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing
import WorkerProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Sources deleted while a bake runs (`docs/BAKE.md`, "Deleted is removed, not failed"): whichever
/// read finds the file gone, the bake's own or its worker's, and however long the bake waited for
/// the locks, a deleted source is counted as removed with exit 0, in one wording, and every entry
/// is accounted for. The races are forced with the test hook (``SourceChangeTests/hook``).
@Suite struct SourceDeletionTests {
    typealias Change = SourceChangeTests

    /// A baked project of two held keys, then `a.jpg` given a new stat over the same bytes (the
    /// bake reads it to fingerprint it, and decodes nothing) and `y.jpg` new bytes (read by the
    /// bake, then decoded by a worker). The bake reads them in path order, `a.jpg` first.
    static func heldPair() throws -> BakeProject {
        let project = try Change.project()
        for key in ["a.jpg", "y.jpg"] {
            try project.add(key, from: Change.a)
            project.setModified(key, secondsAgo: 600)
        }
        _ = try project.bake()
        project.setModified("a.jpg", secondsAgo: 300)
        try project.add("y.jpg", from: Change.b)
        return project
    }

    /// A hook that deletes `y.jpg` just before the bake's read of it (while `a.jpg`, read before
    /// it with `--jobs 1`, is open) or just before the worker's (once the plan is made, after
    /// every read of the bake).
    static func deletion(of project: BakeProject, before reader: String) throws -> String {
        let y = project.sources + "/y.jpg"
        return reader == "bake" ? try Change.hook(in: project, at: "source-opened", file: project.sources + "/a.jpg", "rm '\(y)'")
            : try Change.hook(in: project, at: "planned", "rm '\(y)'")
    }

    /// Both reads word a missing file alike: the bake's (``SourceRead``, as the diff reads) and
    /// a real worker's answer to a render job for it carry one code and one message.
    @Test func theBakeAndItsWorkerWordAMissingFileAlike() throws {
        let missing = NSTemporaryDirectory() + "missing-\(UUID().uuidString).jpg"
        let ours = #expect(throws: ImageTableError.self) { try SourceRead(path: missing, maxBytes: 1 << 20) }
        let worker = try WorkerConnection(executable: Products.worker, hello: Hello(renderingVersion: TableFormat.pipelineRenderingVersion,
                                                                                    executable: "SourceDeletionTests"),
                                          outputToStandardError: true)
        defer { worker.finish() }
        let job = RenderJob(source: missing, members: [], limits: SourceLimits(maxPixels: 1 << 20, maxSourceBytes: 1 << 20, failOn: "error"))
        guard case .success(.failed(let theirs)) = worker.send(.render(job), timeout: 30) else {
            Issue.record("the worker did not answer with a failure")
            return
        }
        #expect(theirs.code == .unreadable && theirs.message == "open failed: No such file or directory", "\(theirs)")
        #expect(ours?.code == .unreadable && ours?.message == theirs.message, "\(String(describing: ours))")
    }

    /// In a bake, a file found missing by the bake's read and one found missing by the worker's
    /// are the same event, printed the same way in text and JSON: a removed source, exit 0, no
    /// error line. Before, the bake's read failed it as `unreadable` (exit 3).
    @Test func aSourceMissingAtEitherReadIsRemovedInTextAndJSON() throws {
        for reader in ["bake", "worker"] {
            let project = try Self.heldPair()
            let json = try Change.bake(project, hook: try Self.deletion(of: project, before: reader), ["--jobs", "1", "--format", "json"])
            #expect(json.status == 0 && !json.stderr.contains("No such file"), "\(reader): \(json.stderr)")
            let document = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
            #expect(document["sources"] as? [String: Int] == ["found": 2, "decoded": 0, "unchanged": 1, "failed": 0, "leftOut": 0,
                                                               "removed": 1, "keptPrevious": 0, "skipped": 0, "deferred": 0, "notAttempted": 0],
                    "\(reader): \(json.stdout)")
            #expect((document["failures"] as? [Any])?.isEmpty == true && (document["skipped"] as? [Any])?.isEmpty == true)

            let again = try Self.heldPair()
            let text = try Change.bake(again, hook: try Self.deletion(of: again, before: reader), ["--jobs", "1"])
            #expect(text.status == 0 && text.stderr.isEmpty, "\(reader): \(text.stderr)")
            let lines = text.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix(again.manifestPath + ": baked 2 sources in ") == true
                    && lines.first?.hasSuffix(" s: 0 decoded, 1 unchanged, 0 failed, 1 removed (entries of removed sources stay until bake --prune)") == true,
                    "\(reader): \(text.stdout)")
            #expect(lines.dropFirst(2).map { $0.split(separator: " ").dropFirst().joined(separator: " ") } == Array(repeating: "0 0 0 2/4", count: 4),
                    "written, evicted, pruned, entries: \(text.stdout)")
        }
    }

    /// A new source deleted before its worker read it had no entry: the summary counts it
    /// removed without saying that its entry stays until `--prune` (a first bake said so).
    @Test func aNewSourceDeletedDuringTheBakeLeavesNoEntryToSpeakOf() throws {
        let project = try Change.project()
        for key in ["a.jpg", "y.jpg"] { try project.add(key, from: Change.a) }
        let text = try Change.bake(project, hook: try Change.hook(in: project, at: "planned", "rm '\(project.sources)/y.jpg'"), ["--jobs", "1"])
        #expect(text.status == 0 && text.stdout.split(separator: "\n").first?.hasSuffix(" s: 1 decoded, 0 unchanged, 0 failed, 1 removed") == true,
                "\(text.stdout)")
    }

    /// A source deleted between two bakes: the summary says its entry stays until `--prune`
    /// (an export ships it), and says no more once `--prune` has deleted it.
    @Test func aRemovedSourceSaysItsEntryStaysUntilPrune() throws {
        let project = try Change.project()
        for key in ["a.jpg", "y.jpg"] { try project.add(key, from: Change.a) }
        _ = try project.bake()
        try FileManager.default.removeItem(atPath: project.sources + "/y.jpg")
        let kept = try run(Products.imagetable, ["bake", project.manifestPath])
        #expect(kept.status == 0 && kept.stdout.split(separator: "\n").first?
                    .hasSuffix(" s: 0 decoded, 1 unchanged, 0 failed, 1 removed (entries of removed sources stay until bake --prune)") == true, "\(kept.stdout)")
        let pruned = try run(Products.imagetable, ["bake", "--prune", project.manifestPath])
        #expect(pruned.status == 0 && pruned.stdout.split(separator: "\n").first?
                    .hasSuffix(" s: 0 decoded, 1 unchanged, 0 failed, 1 removed") == true, "\(pruned.stdout)")
    }

    /// A held key whose source is deleted after the bake read it and before its worker does: the
    /// summary counts it removed, nothing is written or evicted, and its entry stays until
    /// `--prune` (the rule for every removed source), so the tables' entries agree with the counts
    /// before, during and after.
    @Test func aHeldKeyDeletedBeforeItsWorkerReadIsRemovedAndItsEntryAccountedFor() throws {
        let project = try Self.heldPair()
        let before = try project.entries()
        #expect(before.count == 4 && before.values.allSatisfy { $0.count == 2 })
        let run = try Change.bake(project, hook: try Self.deletion(of: project, before: "worker"), ["--jobs", "1", "--format", "json"])
        #expect(run.status == 0, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: run.output) as? [String: Any])
        let sources = try #require(json["sources"] as? [String: Int])
        #expect(sources["removed"] == 1 && sources["unchanged"] == 1 && sources["decoded"] == 0 && sources["failed"] == 0
                && sources["keptPrevious"] == 0, "\(sources)")
        let tables = try #require(json["tables"] as? [[String: Any]])
        let counts = tables.map { table in ["written", "evicted", "pruned", "entries"].map { table[$0] as? Int } }
        #expect(counts == Array(repeating: [0, 0, 0, 2], count: 4), "2 before, +0 written, −0 evicted, −0 pruned: \(tables)")
        #expect(try project.entries() == before, "no entry changed: y.jpg keeps A's image until it is pruned")
        let next = try project.bake()
        #expect(next.removed == 1 && next.unchanged == 1 && next.sourcesFound == 1 && next.failed.isEmpty)
        let pruned = try project.bake { $0.prune = true }
        #expect(pruned.removed == 1 && pruned.tables.allSatisfy { $0.pruned == 1 && $0.entries == 1 })
        #expect(try project.entries().values.allSatisfy { $0.keys.sorted() == ["a.jpg"] })
    }

    /// Whether process `pid` has `path` open (it is waiting on the lock file it opened).
    static func hasOpen(_ pid: Int32, _ path: String) -> Bool {
        let fds = "/proc/\(pid)/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []
        return entries.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + $0)) == path }
    }

    /// A bake that waits for a table's writer lock (held here, by the test process) lists its
    /// sources only once it has every lock: files deleted while it waited are removed, not failed,
    /// and are not read. Listed before waiting, the held ones would count as unchanged (their
    /// stats trusted) and the new one would fail to open.
    @Test func filesDeletedWhileABakeWaitsForTheLocksAreRemoved() throws {
        let project = try Change.project()
        for key in ["x.jpg", "y.jpg", "z.jpg"] { try project.add(key, from: Change.a) }
        _ = try project.bake()
        try project.add("new.jpg", from: Change.b)
        // As the kernel names it in /proc (the temporary directory may be behind a link).
        let table = URL(fileURLWithPath: project.tables).resolvingSymlinksInPath().path + "/bgra.imagetable"
        let holder = try ImageTableWriter(path: table, format: try project.manifest().formats[0])
        let bake = Process()
        bake.executableURL = URL(fileURLWithPath: Products.imagetable)
        bake.arguments = ["bake", project.manifestPath, "--format", "json", "--lock-timeout", "60"]
        let output = Pipe()
        bake.standardOutput = output
        try bake.run()
        let deadline = Date().addingTimeInterval(30)
        while !Self.hasOpen(bake.processIdentifier, table + ".lock") && bake.isRunning && Date() < deadline { usleep(10_000) }
        #expect(Self.hasOpen(bake.processIdentifier, table + ".lock"), "the bake never reached the lock")
        for key in ["y.jpg", "z.jpg", "new.jpg"] { try FileManager.default.removeItem(atPath: project.sources + "/" + key) }
        holder.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        bake.waitUntilExit()
        #expect(bake.terminationStatus == 0, "\(String(decoding: data, as: UTF8.self))")
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(json["sources"] as? [String: Int] == ["found": 1, "decoded": 0, "unchanged": 1, "failed": 0, "leftOut": 0,
                                                       "removed": 2, "keptPrevious": 0, "skipped": 0, "deferred": 0, "notAttempted": 0], "\(json)")
        #expect(try project.entries().values.allSatisfy { $0.count == 3 }, "removed sources keep their entries without --prune")
    }
}
