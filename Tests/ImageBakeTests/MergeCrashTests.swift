import Foundation
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A merge killed at any instant leaves its output as the old set of tables or the new one,
/// byte for byte (merges are deterministic, so "the new one" is a merge of the same inputs made
/// elsewhere), never a mix; and it never replaces tables a writer has open.
@Suite(.serialized) struct MergeCrashTests {
    /// Shards of 12 sources (the old set), then of 18, three of the first changed (the new set).
    static func twoGenerations() throws -> (project: BakeProject, shards: [String], old: [String: Data], new: [String: Data], out: String) {
        let project = try MergeTests.shardedProject(sources: 12, shards: 2)
        let shards = (0..<2).map { project.root + "/shard-\($0)" }
        let out = project.root + "/out"
        #expect(try MergeTests.merge(out, shards).status == 0)
        let old = MergeTests.tableBytes(out)
        let tiles = PhotoTiles.first(40)
        for i in 0..<3 { try project.add("t\(i).jpg", from: tiles[39 - i]) }
        for i in 12..<18 { try project.add("t\(i).jpg", from: tiles[i]) }
        for k in 0..<2 {
            #expect(try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "\(k)/2", "--output", shards[k], "--no-progress"]).status == 0)
        }
        #expect(try MergeTests.merge(project.root + "/reference", shards).status == 0)
        let new = MergeTests.tableBytes(project.root + "/reference")
        #expect(old.count == 2 && new.count == 2 && old != new)
        return (project, shards, old, new, out)
    }

    /// Starts a merge, with `hook` as its test hook when given.
    static func startMerge(_ out: String, _ shards: [String], hook: String? = nil) throws -> Process {
        let merge = Process()
        merge.executableURL = URL(fileURLWithPath: Products.imagetable)
        merge.arguments = ["merge", out] + shards
        if let hook { merge.environment = ProcessInfo.processInfo.environment.merging(["IMAGETABLE_TEST_HOOK": hook]) { $1 } }
        merge.standardOutput = FileHandle.nullDevice
        merge.standardError = FileHandle.nullDevice
        try merge.run()
        return merge
    }

    static func leftovers(of out: String) -> [String] {
        let parent = (out as NSString).deletingLastPathComponent, name = (out as NSString).lastPathComponent
        return ((try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []).filter { $0.hasPrefix(".\(name).merge-") }
    }

    @Test(arguments: [("merge-staged", false), ("merge-exchanged", true)])
    func killedAtEitherSideOfTheExchange(point: String, replaced: Bool) throws {
        let (project, shards, old, new, out) = try Self.twoGenerations()
        let hook = project.root + "/hook"
        try writeExecutable("#!/bin/sh\n[ \"$1\" = \"\(point)\" ] && kill -9 $2\nexit 0\n", to: hook)
        let merge = try Self.startMerge(out, shards, hook: hook)
        merge.waitUntilExit()
        #expect(merge.terminationReason == .uncaughtSignal)
        #expect(MergeTests.tableBytes(out) == (replaced ? new : old), "killed at \(point)")
        #expect(Self.leftovers(of: out).count == 1, "the staging directory (or, after the exchange, the old set) is left")
        #expect(try MergeTests.merge(out, shards).status == 0)
        #expect(MergeTests.tableBytes(out) == new && Self.leftovers(of: out).isEmpty)
    }

    /// Interrupted (Ctrl-C, a CI system's cancel) before the exchange, a merge deletes its
    /// staging directory, as large as the new set, leaves the output as it was, says so and ends
    /// by the signal; it left the staging directory for the next merge into the output to delete.
    @Test func anInterruptedMergeDeletesItsStagingAndKeepsTheOutput() throws {
        let (project, shards, old, _, out) = try Self.twoGenerations()
        let hook = project.root + "/hook"
        try writeExecutable("#!/bin/sh\n[ \"$1\" = \"merge-staged\" ] && kill -INT $2\nexit 0\n", to: hook)
        let merge = try run(Products.imagetable, ["merge", out] + shards, environment: ["IMAGETABLE_TEST_HOOK": hook])
        #expect(!merge.exited && merge.status == SIGINT && merge.stderr.contains("interrupted by SIGINT: \(out) is unchanged [interrupted]"),
                "\(merge.status): \(merge.stderr)")
        #expect(MergeTests.tableBytes(out) == old && Self.leftovers(of: out).isEmpty, "\(Self.leftovers(of: out))")
    }

    @Test func killedAtRandomInstantsTheOutputIsTheOldSetOrTheNew() throws {
        let (project, shards, old, new, out) = try Self.twoGenerations()
        defer { withExtendedLifetime(project) {} }  // its directory holds everything
        var sawOld = 0, sawNew = 0
        for round in 0..<12 {
            // Back to the old set, then a merge of the new shards killed somewhere along the way.
            try? FileManager.default.removeItem(atPath: out)
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
            for (name, bytes) in old { try bytes.write(to: URL(fileURLWithPath: out + "/" + name)) }
            try Data("{\"version\": 1, \"inputs\": 2, \"shards\": 2}\n".utf8).write(to: URL(fileURLWithPath: out + "/.imagetable-merge"))
            let merge = try Self.startMerge(out, shards)
            // Every other round within its first 2 ms, before a process can have started its
            // work: a quick machine finished the merge before most kills of the later range.
            usleep(round.isMultiple(of: 2) ? UInt32.random(in: 0...2_000) : UInt32.random(in: 1_000...60_000))
            kill(merge.processIdentifier, SIGKILL)
            merge.waitUntilExit()
            let now = MergeTests.tableBytes(out)
            #expect(now == old || now == new, "round \(round): a mix of the two sets")
            if now == old { sawOld += 1 } else if now == new { sawNew += 1 }
        }
        #expect(sawOld > 0, "kills before the merge even started its work must leave the old set (new \(sawNew))")
        #expect(try MergeTests.merge(out, shards).status == 0 && MergeTests.tableBytes(out) == new)
        #expect(Self.leftovers(of: out).isEmpty)
    }

    /// A writer inside a table of the output (a bake, a runtime cache) keeps it: the merge waits
    /// for its lock, then gives up, and the output is unchanged.
    @Test func aWriterOfTheOutputIsWaitedForThenRefused() throws {
        let (project, shards, old, _, out) = try Self.twoGenerations()
        defer { withExtendedLifetime(project) {} }  // its directory holds everything
        let reader = try ImageTableReader(path: out + "/thumb.imagetable")
        let writer = try TableWriterLock(tablePath: out + "/thumb.imagetable", protection: reader.header.protection, timeout: 1)
        let merge = try run(Products.imagetable, ["merge", out] + shards + ["--lock-timeout", "0.2"])
        writer.release()
        #expect(merge.status == 1 && merge.stderr.contains("[locked]"), "\(merge.stderr)")
        #expect(MergeTests.tableBytes(out) == old && Self.leftovers(of: out).isEmpty)
    }

    /// Interrupted while it waits for such a writer, a merge stops at once, as it does between
    /// entries: it saw the signal only once the lock came or the timeout passed, and then
    /// failed `locked` (exit 1, so a script went on; a CI system's cancel ended in SIGKILL).
    @Test func anInterruptWhileWaitingForAWriterStopsTheMerge() throws {
        let (project, shards, old, _, out) = try Self.twoGenerations()
        defer { withExtendedLifetime(project) {} }  // its directory holds everything
        let reader = try ImageTableReader(path: out + "/thumb.imagetable")
        let writer = try TableWriterLock(tablePath: out + "/thumb.imagetable", protection: reader.header.protection, timeout: 1)
        defer { writer.release() }
        // SIGTERM: a shell's background job ignores SIGINT.
        let script = "\"$0\" merge \"$1\" \"$2\" \"$3\" --lock-timeout 600 & pid=$!; sleep 1; kill -TERM $pid; wait $pid"
        let merge = try run("/bin/sh", ["-c", script, Products.imagetable, out] + shards)
        #expect(merge.status == 128 + SIGTERM && merge.stderr.contains("interrupted by SIGTERM: \(out) is unchanged [interrupted]"),
                "\(merge.status): \(merge.stderr)")
        #expect(MergeTests.tableBytes(out) == old && Self.leftovers(of: out).isEmpty)
    }
}
